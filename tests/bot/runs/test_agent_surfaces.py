"""Slack's agent surfaces end to end (real slack-bolt against the fake Slack, the real CLI against
the offline model): the goal's checklist as a plan block that follows the verdicts, the thread's
agent session (its states, Slack's Stop button) or, where Slack has none, the "is working on …"
status line, and feedback buttons on the final message recorded in bot.db."""

from __future__ import annotations

import pytest_asyncio

from bot.core.thread import ThreadKey
from bot.render.controls import FEEDBACK_ACTION
from bot.render.texts import DOING, STATUS_LINE
from bot.runs.plan_feed import goal_digest
from engine import Goal
from engine.testing import hold, prompt_contains, text
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE
from tests.bot.helpers.app import BRIEF, CHANNEL, CLARIFY_ONLY, GOAL, brief_only, posted, question, script

SET_STATUS = "assistant.threads.setStatus"
SET_SESSION = "agents.sessions.setStatus"
NO_SESSIONS = 1000  # calls of agents.sessions.setStatus refused: every one in a test


def _plan(blocks):
    found = [b for b in blocks or [] if b.get("type") == "plan"]
    return found[0] if found else None


def _states(block):
    return [(t["title"], t["status"], t["output"]["elements"][0]["elements"][0]["text"]) for t in block["tasks"]]


def _statuses(slack, thread):
    return [c.body.get("status") for c in slack.calls(SET_STATUS, thread_ts=thread)]


def _sessions(slack, thread):
    return (slack.session_of(CHANNEL, thread) or {}).get("statuses", [])


async def _answer(slack, thread):
    q_ts, q_call = await question(slack, thread)
    button = [e for b in q_call.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button"][0]
    await slack.click(CHANNEL, q_ts, button["action_id"], user="U0BOB")


@pytest_asyncio.fixture
async def allowed_bot(make_bot):
    return await make_bot(FLOWER_ALLOWED_USERS="U0ALICE,U0BOB")


async def test_plan_follows_two_verdicts_status_line_and_feedback(allowed_bot, slack_env, fake_model):
    slack, bot = slack_env, allowed_bot
    script(fake_model)  # round 1: not yet, "内容是 hi" failed; round 2: achieved
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    key = ThreadKey("T0001", CHANNEL, thread)
    await slack.send_event(event)
    await _answer(slack, thread)

    # The goal is set: its checks are posted as a plan, all pending.
    post = await slack.wait_for("chat.postMessage", lambda c: _plan(c.arg("blocks")) is not None, thread_ts=thread)
    plan_ts = post.response["ts"]
    assert _states(_plan(post.arg("blocks"))) == [("hello.txt 存在", "pending", "Not judged yet"),
                                                  ("内容是 hi", "pending", "Not judged yet")]
    assert "hello.txt 存在" in post.body["text"]  # the text fallback lists the checks too

    # Round 1 names its failed check; round 2 passes them all: the same message is edited.
    first = await slack.wait_for("chat.update", lambda c: _plan(c.arg("blocks")) is not None, ts=plan_ts)
    assert _states(_plan(first.arg("blocks"))) == [("hello.txt 存在", "complete", "Passed"),
                                                   ("内容是 hi", "error", "Failing")]
    assert _plan(first.arg("blocks"))["title"] == "The goal's checks: 1 of 2 passed"
    second = await slack.wait_for("chat.update", lambda c: _plan(c.arg("blocks")) is not None, ts=plan_ts,
                                  after=first.index + 1)
    assert _states(_plan(second.arg("blocks"))) == [("hello.txt 存在", "complete", "Passed"),
                                                    ("内容是 hi", "complete", "Passed")]
    assert _states(_plan(slack.message(CHANNEL, plan_ts)["blocks"]))[1][1] == "complete"  # what Slack shows now
    posts = [c for c in slack.calls("chat.postMessage", thread_ts=thread) if _plan(c.arg("blocks")) is not None]
    assert len(posts) == 1
    assert await bot.store.plan_ts(key, goal_digest(Goal(checks=["hello.txt 存在", "内容是 hi"]))) == plan_ts

    # The final message carries feedback buttons.
    summary = await posted(slack, thread, "Done: the goal is achieved")
    kinds = [b["type"] for b in summary.arg("blocks")]
    assert kinds[-1] == "context_actions"

    # The thread is an agent session, titled with the request: processing while a step works,
    # suspended while the question waited for a person, active once done; no status line beside it.
    await slack.wait_until(lambda: _sessions(slack, thread)[-1:] == ["active"], what="the session active at the end")
    states = _sessions(slack, thread)  # a question asked again (a busy machine's retried turn) repeats a pair
    assert states[0] == "processing" and states[-1] == "active" and "closed" not in states, states
    assert "suspended" in states and states[states.index("suspended") + 1] == "processing", states
    assert all(a != b for a, b in zip(states, states[1:])), states  # each status set once, when it changes
    assert slack.session_of(CHANNEL, thread)["title"] == "写个 hello.txt"
    assert _statuses(slack, thread) == []

    # Feedback: recorded per person and message; a second click replaces the first; others refused.
    summary_ts = summary.response["ts"]
    await slack.click(CHANNEL, summary_ts, FEEDBACK_ACTION, user="U0BOB", feedback="positive")
    await slack.wait_until(lambda: [e for e in slack.ephemerals if e["user"] == "U0BOB" and "Thanks" in e["text"]],
                           what="thanks for the feedback")
    rows = await bot.store.feedback(key)
    assert [(r.user, r.sentiment, r.message_ts) for r in rows] == [("U0BOB", "positive", summary_ts)]
    await slack.click(CHANNEL, summary_ts, FEEDBACK_ACTION, user="U0BOB", feedback="negative")
    await slack.wait_until(lambda: [e for e in slack.ephemerals if e["user"] == "U0BOB" and "changed" in e["text"]],
                           what="the changed feedback acknowledged")
    rows = await bot.store.feedback(key)
    assert [(r.user, r.sentiment) for r in rows] == [("U0BOB", "negative")]
    # Slack's buttons toggle: the same button again deselects it, sending the same value; the vote
    # is withdrawn and nobody is thanked for it
    said_to_bob = len([e for e in slack.ephemerals if e["user"] == "U0BOB"])
    await slack.wait_ack(await slack.click(CHANNEL, summary_ts, FEEDBACK_ACTION, user="U0BOB", feedback="negative"))
    assert await bot.store.feedback(key) == []  # acked once the row is gone
    assert len([e for e in slack.ephemerals if e["user"] == "U0BOB"]) == said_to_bob
    await slack.click(CHANNEL, summary_ts, FEEDBACK_ACTION, user="U0CAROL", feedback="negative")
    await slack.wait_until(lambda: [e for e in slack.ephemerals if e["user"] == "U0CAROL"], what="a refusal")
    assert "Thanks" not in [e for e in slack.ephemerals if e["user"] == "U0CAROL"][0]["text"]
    assert await bot.store.feedback(key) == []  # Carol's refused, Bob's withdrawn
    assert len([e for e in slack.ephemerals if e["user"] == "U0BOB"]) == said_to_bob  # still no thanks


async def test_a_refused_status_line_is_not_asked_for_again_and_the_run_goes_on(make_bot, slack_env, fake_model):
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    slack.api_error(SET_SESSION, "feature_disabled", times=NO_SESSIONS)
    slack.api_error(SET_STATUS, "not_allowed_token_type", times=100)
    brief_only(fake_model, ask_first=True)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    await _answer(slack, thread)
    await posted(slack, thread, "Done")
    assert _statuses(slack, thread) == [STATUS_LINE.format(doing=DOING["clarify"])]  # one try, then none
    # a second thread of the same bot is not tried either: the app may not set status lines at all
    other = slack.mention(CHANNEL, "再写个 bye.txt")
    await slack.send_event(other)
    await _answer(slack, other["ts"])
    await posted(slack, other["ts"], "Done")
    assert not slack.calls(SET_STATUS, thread_ts=other["ts"])


async def test_without_agent_sessions_the_status_line_names_each_step(make_bot, slack_env, fake_model):
    slack = slack_env
    await make_bot()
    slack.api_error(SET_SESSION, "feature_disabled", times=NO_SESSIONS)  # the app is no agent here
    slack.refuse_blocks("context_actions")  # and its Slack has no feedback buttons
    script(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    await _answer(slack, thread)
    summary = await slack.wait_for("chat.postMessage", lambda c: c.ok and "Done: the goal is achieved"
                                   in (c.body.get("text") or ""), thread_ts=thread)
    # refused for its feedback buttons, the answer is posted again without them only: its checks stay
    kinds = [b["type"] for b in summary.arg("blocks")]
    assert "context_actions" not in kinds and "checks passed" in str(summary.arg("blocks")), kinds

    # The status line named each step while it ran, was cleared while the question waited, and at the end.
    statuses = _statuses(slack, thread)
    for doing in ("Confirming the request", "Planning", "Working", "Checking the work"):  # a person's words
        assert STATUS_LINE.format(doing=doing) in statuses, statuses
    first_clarify = statuses.index(STATUS_LINE.format(doing=DOING["clarify"]))
    assert statuses[first_clarify + 1] == ""  # the question was asked: nobody works until it is answered
    await slack.wait_until(lambda: _statuses(slack, thread)[-1] == "", what="the status cleared at the end")
    assert slack.status_of(CHANNEL, thread) == ""
    assert len(slack.calls(SET_SESSION)) == 1  # refused for the app once: never asked again
    assert slack.session_of(CHANNEL, thread) is None


async def test_slacks_stop_button_stops_the_run_and_moves_the_session_on(make_bot, slack_env, fake_model):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)
    held = hold()
    fake_model.rule(text(BRIEF, fault=held), when=CLARIFIER)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    await held.arrived()
    await slack.wait_until(lambda: _sessions(slack, thread) == ["processing"], what="the session processing")

    mark = slack.mark()
    await slack.send_event(slack.session_stopped(CHANNEL, thread, user="U0ALICE"))
    await posted(slack, thread, "Stopped", after=mark)  # confirmed in the thread, as our own Stop does
    await slack.wait_until(lambda: _sessions(slack, thread)[-1:] == ["active"], what="the session off processing")
    assert (await bot.store.get_thread(ThreadKey("T0001", CHANNEL, thread))).state == "stopped"
    held.release()


async def test_a_stopped_runs_checklist_says_it_was_stopped(make_bot, slack_env, fake_model):
    slack = slack_env
    bot = await make_bot()
    held = hold()
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")])
    fake_model.rule(text("working", fault=held), when=COORDINATOR)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    post = await slack.wait_for("chat.postMessage", lambda c: _plan(c.arg("blocks")) is not None, thread_ts=thread)
    await held.arrived()  # the work round is under way, nothing judged yet
    await slack.click(CHANNEL, (await bot.store.get_thread(ThreadKey("T0001", CHANNEL, thread))).status_ts,
                      "flower_stop")
    await posted(slack, thread, "Stopped")
    plan_ts = post.response["ts"]
    await slack.wait_until(lambda: "Stopped" in str(slack.message(CHANNEL, plan_ts)["blocks"]),
                           what="the checklist marked stopped")
    assert [s[2] for s in _states(_plan(slack.message(CHANNEL, plan_ts)["blocks"]))] == \
        ["Stopped before it was judged"] * 2
    held.release()


async def test_continue_in_a_terminal_shows_the_command_to_whoever_clicks_and_the_thread_no_path(
        make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY, FLOWER_ALLOWED_USERS="U0ALICE,U0BOB")
    brief_only(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt", user="U0ALICE")
    thread = event["ts"]
    await slack.send_event(event)
    await posted(slack, thread, "Done")
    sent = [str(c.body) for c in slack.calls() if c.method in ("chat.postMessage", "chat.update")]
    assert sent and [s[:120] for s in sent if str(tmp_path) in s] == []  # no host path in the thread

    status_ts = (await bot.store.get_thread(ThreadKey("T0001", CHANNEL, thread))).status_ts
    await slack.click(CHANNEL, status_ts, "flower_terminal", user="U0BOB")
    await slack.wait_until(lambda: [e for e in slack.ephemerals if e["user"] == "U0BOB"], what="the command")
    [shown] = [e for e in slack.ephemerals if e["user"] == "U0BOB"]
    assert f"cd {tmp_path / 'home' / 'workspaces'}" in shown["text"] and "&& flower" in shown["text"]
    await slack.click(CHANNEL, status_ts, "flower_terminal", user="U0CAROL")  # not on the allow-list
    await slack.wait_until(lambda: [e for e in slack.ephemerals if e["user"] == "U0CAROL"], what="a refusal")
    assert str(tmp_path) not in str([e for e in slack.ephemerals if e["user"] == "U0CAROL"])

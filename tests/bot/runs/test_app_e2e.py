"""The bot end to end: real slack-bolt against the fake Slack, the real CLI against the offline model.

A mention starts a run in its own workspace; questions come as buttons; clicks and replies
answer them; verdicts, the status line and the summary land in the thread.
"""

from __future__ import annotations

import asyncio

import pytest
import pytest_asyncio

from bot.core.thread import ThreadKey, run_dir
from bot.main import start_bot
from bot.runs.start import ASK_FILE, Start
from bot.settings.config import load_config
from engine._flow.starter import starter_paths
from engine._lang import en, zh
from engine.testing import hold, prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE
from tests.bot.helpers.app import (
    ACHIEVED,
    BRIEF,
    CHANNEL,
    CLARIFY_ONLY,
    GOAL,
    asked_thread,
    brief_only,
    marked_done,
    posted,
    question,
    script,
    texts,
    workspace,
)
from tests.bot.helpers.store import Locker

pytestmark = pytest.mark.both_backends  # each test on bot.db and on PostgreSQL (tests/bot/conftest.py)


@pytest_asyncio.fixture
async def bot(make_bot):
    return await make_bot()


async def test_mention_question_click_rounds_verdict_summary(bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    script(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)

    accepted = await posted(slack, thread, "Started")
    ws = workspace(tmp_path, thread)
    assert str(ws) not in str(accepted.body)  # no host path in the thread ("Continue in a terminal" shows it)
    await slack.wait_for("reactions.add", channel=CHANNEL, timestamp=thread)

    q_ts, q_call = await question(slack, thread)
    buttons = [e for b in q_call.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button"]
    assert [b["text"]["text"] for b in buttons] == ["Python", "Go"]
    stale = slack.click_payload(CHANNEL, q_ts, buttons[1]["action_id"], user="U0CAROL")  # an old client's view
    await slack.click(CHANNEL, q_ts, buttons[0]["action_id"], user="U0BOB")
    updated = await slack.wait_for("chat.update", ts=q_ts)
    shown = str(updated.arg("blocks"))
    assert "Python" in shown and "U0BOB" in shown and "button" not in shown  # nobody can click twice

    summary = await posted(slack, thread, "Done: the goal is achieved")
    assert "Round 1:" not in "\n".join(texts(slack, thread))  # rounds edit the checklist, they post nothing
    assert "2 rounds" in summary.body["text"]
    assert (ws / "hello.txt").read_text() == "hi"
    paths = starter_paths(ws)
    assert "Python" in paths.brief.read_text() and "U0BOB" in paths.log.read_text()
    clar = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
    assert any("Python" in t for _, t in clar[-1].tool_results)  # the click reached the model
    status_ts = (await bot.store.get_thread(ThreadKey("T0001", CHANNEL, thread))).status_ts
    final = await slack.wait_for("chat.update", lambda c: "Done" in (c.body.get("text") or ""), ts=status_ts)
    assert "Stop" not in str(final.arg("blocks")) and summary.index > 0
    await marked_done(bot, ThreadKey("T0001", CHANNEL, thread))

    # A click on the already-answered question (from a client still showing the buttons): a note.
    await slack.socket.send("interactive", stale, timeout=60)
    await slack.wait_until(lambda: [e for e in slack.ephemerals if "already answered" in e.get("text", "")],
                           what="an ephemeral note for a late click")


async def test_free_text_reply_answers_the_question(make_bot, slack_env, fake_model):
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    thread, q_ts, _ = await asked_thread(slack, fake_model)
    await slack.send_event(slack.user_message(CHANNEL, "Go, please", thread_ts=thread))
    updated = await slack.wait_for("chat.update", ts=q_ts)
    assert "Go, please" in str(updated.arg("blocks")) and "U0ALICE" in str(updated.arg("blocks"))
    await posted(slack, thread, "Done")
    clar = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
    assert any("Go, please" in t for _, t in clar[-1].tool_results)


async def test_a_click_is_acked_only_once_its_answer_is_recorded(make_bot, slack_env, fake_model, bot_backend):
    """Slack never redelivers a click: the ack must mean the answer is in the bot's database (a
    kill after it cannot lose the answer). Another connection holds its write lock for a moment
    (another process on bot.db, another replica on PostgreSQL): no ack until the answer could be
    written."""
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)
    thread, q_ts, q_call = await asked_thread(slack, fake_model)
    button = next(e for b in q_call.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button")

    locker = Locker(bot_backend, bot.config.database_url or bot.config.db_path)
    await locker.hold()
    try:
        clicked = await slack.click(CHANNEL, q_ts, button["action_id"], user="U0BOB")
        await asyncio.sleep(0.5)
        assert slack.socket.envelopes[clicked].ack is None  # the answer cannot be written yet: not acked
    finally:
        await locker.release()
    await slack.wait_ack(clicked)
    await posted(slack, thread, "Done")
    clar = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
    assert any("Python" in t for _, t in clar[-1].tool_results)


async def test_duplicates_are_handled_once(make_bot, slack_env, fake_model):
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    brief_only(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event, event_id="Ev0DUP")
    await slack.send_event(event, event_id="Ev0DUP", retry_attempt=1, retry_reason="timeout")
    await posted(slack, event["ts"], "Done")
    # the mention pair inside the thread (app_mention + message, same ts) wakes it once
    mark = slack.mark()
    await slack.send_events(*slack.thread_mention(CHANNEL, event["ts"], "也写个 README"))
    await posted(slack, event["ts"], "Done", after=mark)
    started = [c for c in slack.calls("chat.postMessage") if "Started" in (c.body.get("text") or "")]
    assert len(started) == 1
    done = [c for c in slack.calls("chat.postMessage") if "Done" in (c.body.get("text") or "")]
    assert len(done) == 2
    woke = [c for c in slack.calls("chat.postMessage") if "也写个 README" in (c.body.get("text") or "")]
    assert len(woke) == 1  # the wake banner quotes the sentence, once


async def test_disallowed_user_is_refused_ephemerally(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY, FLOWER_ALLOWED_USERS="U0ALICE")
    event = slack.mention(CHANNEL, "写个 hello.txt", user="U0BOB")
    await slack.send_event(event)
    await slack.wait_until(lambda: [e for e in slack.ephemerals if e.get("user") == "U0BOB"], what="a refusal")
    assert not slack.calls("chat.postMessage") and not fake_model.message_requests
    assert await bot.store.get_thread(ThreadKey("T0001", CHANNEL, event["ts"])) is None
    assert not (tmp_path / "home" / "workspaces").exists()


async def test_reply_while_running_interrupts_then_reply_after_finish_wakes(bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    held = hold()
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(text("adjusted to blue"), when=[COORDINATOR, prompt_contains("use blue")])
    fake_model.rule(text("continued after wake"), when=[COORDINATOR, prompt_contains("补充一句")])
    fake_model.rule(text("working", fault=held), when=COORDINATOR)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    await held.arrived()
    reply = slack.user_message(CHANNEL, "use blue", thread_ts=thread)
    await slack.send_event(reply)
    await slack.wait_for("reactions.add", channel=CHANNEL, timestamp=reply["ts"])
    # once the words reach the running session, the status line says so in words
    await slack.wait_for("chat.update", lambda c: "Your words reached the run: “use blue”" in str(c.arg("blocks")))
    held.release()
    await posted(slack, thread, "Done: the goal is achieved")
    last = [r for r in fake_model.message_requests if COORDINATOR(r.body) and "use blue" in r.prompt][0]
    assert "working" in last.shown or "写个 hello.txt" in last.shown  # the same session went on

    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "顺便加一个 bye.txt", thread_ts=thread))
    banner = await posted(slack, thread, "Picking up where this left off", after=mark)
    assert "顺便加一个 bye.txt" in banner.body["text"]
    await posted(slack, thread, "Done: the goal is achieved", after=mark)
    woke = [r for r in fake_model.message_requests if COORDINATOR(r.body) and "补充一句" in r.prompt]
    assert woke and "顺便加一个 bye.txt" in woke[0].prompt
    assert "顺便加一个 bye.txt" in starter_paths(workspace(tmp_path, thread)).brief.read_text()


async def finished_thread(slack, fake_model) -> str:
    """A mention whose clarify-only run has posted Done; the thread's ts."""
    brief_only(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event)
    await posted(slack, event["ts"], "Done")
    return event["ts"]


@pytest.mark.parametrize("form", ["/new 另一件事", " /new 另一件事", "!new 另一件事", "@bot /new 另一件事"])
async def test_new_in_each_form_archives_and_starts_fresh(make_bot, slack_env, fake_model, tmp_path, form):
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    thread = await finished_thread(slack, fake_model)
    mark = slack.mark()
    if form.startswith("@bot"):
        await slack.send_events(*slack.thread_mention(CHANNEL, thread, form.removeprefix("@bot ")))
    else:
        await slack.send_event(slack.user_message(CHANNEL, form, thread_ts=thread))
    await posted(slack, thread, "Done", after=mark)
    paths = starter_paths(workspace(tmp_path, thread))
    archived = list(paths.archive.iterdir())
    assert len(archived) == 1 and (archived[0] / "需求.md").exists()
    clar = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
    assert "另一件事" in clar[-1].prompt and "写个 hello.txt" not in clar[-1].prompt
    assert not [c for c in slack.calls("chat.postMessage", after=mark) if "Picking up where this left off" in (c.body.get("text") or "")]
    await slack.wait_until(lambda: slack.session_of(CHANNEL, thread)["statuses"][-1] == "active")
    assert slack.session_of(CHANNEL, thread)["statuses"][-3:] == ["closed", "processing", "active"]  # /new closed it


async def test_new_alone_asks_what_to_do_then_starts_fresh(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    thread = await finished_thread(slack, fake_model)
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "!new", thread_ts=thread))
    await posted(slack, thread, "What should I do now?", after=mark)
    assert slack.session_of(CHANNEL, thread)["statuses"][-1] == "closed"  # the archived work's session
    await slack.send_event(slack.user_message(CHANNEL, "写个 bye.txt", thread_ts=thread))
    await posted(slack, thread, "Done", after=mark)
    clar = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
    assert "写个 bye.txt" in clar[-1].prompt
    assert len(list(starter_paths(workspace(tmp_path, thread)).archive.iterdir())) == 1


async def test_restart_resumes_and_the_pending_question_is_not_asked_twice(make_bot, slack_env, fake_model):
    slack = slack_env
    first = await make_bot(CLARIFY_ONLY)
    thread, q_ts, q_call = await asked_thread(slack, fake_model)
    key = ThreadKey("T0001", CHANNEL, thread)
    await slack.wait_until(lambda: len([r for r in fake_model.message_requests if CLARIFIER(r.body)]) >= 1)
    await first.close()
    second = await make_bot(CLARIFY_ONLY)
    await posted(slack, thread, "bot restarted")
    asked_again = await slack.wait_until(
        lambda: len([r for r in fake_model.message_requests if CLARIFIER(r.body)]) >= 2, what="the resumed ask")
    assert asked_again
    button = [e for b in q_call.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button"][0]
    await slack.click(CHANNEL, q_ts, button["action_id"])  # the old message's button still works
    await posted(slack, thread, "Done")
    questions = [c for c in slack.calls("chat.postMessage") if (c.body.get("text") or "").startswith("Question")]
    assert len(questions) == 1
    await marked_done(second, key)


async def test_http_mode_verifies_signatures_and_runs(slack_env, fake_model, tmp_path, monkeypatch):
    slack = slack_env
    monkeypatch.delenv("SLACK_APP_TOKEN")
    for name, value in {"SLACK_SIGNING_SECRET": "s3cret-signing", "PORT": "0",
                        "FLOWER_HOME": str(tmp_path / "home")}.items():
        monkeypatch.setenv(name, value)
    running = await start_bot(load_config(dotenv=None), options=CLARIFY_ONLY)
    try:
        assert running.socket is None and running.port
        url = f"http://127.0.0.1:{running.port}/slack/events"
        brief_only(fake_model)
        forged = await slack.deliver_http(url, slack.event_payload(slack.mention(CHANNEL, "forged")),
                                          signing_secret="s3cret-signing", tamper=True)
        assert forged.status == 401
        event = slack.mention(CHANNEL, "写个 hello.txt")
        got = await slack.deliver_http(url, slack.event_payload(event), signing_secret="s3cret-signing")
        assert got.status == 200
        await posted(slack, event["ts"], "Started")
        await posted(slack, event["ts"], "Done")
        assert not [c for c in slack.calls("chat.postMessage") if "forged" in (c.body.get("text") or "")]
        # the forged event started nothing, and the real one one run
        clarified = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
        assert clarified and not [r for r in clarified if "forged" in r.prompt]
        assert not [r for r in clarified if zh.INTERRUPT_NOTE.strip() in r.prompt]
        assert len([c for c in slack.calls("chat.postMessage") if "Started" in (c.body.get("text") or "")]) == 1
    finally:
        await running.close()




async def test_a_first_request_reaches_the_clarifier_once_and_never_as_an_interruption(
        make_bot, slack_env, fake_model):
    # the request is kept on disk before its run begins; the run once read that as "words said to a
    # stopped run still confirming" and interrupted its own clarifier with them (seen under load)
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    # a tool call first: the message boundary where an interruption takes effect
    fake_model.rule(tool_use("Glob", {"pattern": "*.txt"}), text(BRIEF), when=CLARIFIER)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event)
    await posted(slack, event["ts"], "Done")
    clarified = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
    notes = (en.INTERRUPT_NOTE.strip(), zh.INTERRUPT_NOTE.strip())
    assert clarified and not [r for r in clarified if any(n in r.prompt for n in notes)], [r.prompt for r in clarified]


async def test_stop_button_then_queue_place(make_bot, slack_env, fake_model):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY, FLOWER_MAX_RUNS="1")
    held = hold()
    fake_model.rule(text(BRIEF, fault=held), when=[CLARIFIER, prompt_contains("写个 hello.txt")])
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    one, two = slack.mention(CHANNEL, "写个 hello.txt"), slack.mention(CHANNEL, "写个 bye.txt")
    await slack.send_event(one)
    await held.arrived()
    await slack.send_event(two)
    await posted(slack, two["ts"], "Queued: 1 run(s) ahead")
    status_ts = (await bot.store.get_thread(ThreadKey("T0001", CHANNEL, one["ts"]))).status_ts
    await slack.click(CHANNEL, status_ts, "flower_stop")
    await posted(slack, one["ts"], "Stopped")
    held.release()
    await posted(slack, two["ts"], "Done")  # the queued run got the slot
    assert (await bot.store.get_thread(ThreadKey("T0001", CHANNEL, one["ts"]))).state == "stopped"
    assert not [c for c in slack.calls("chat.postMessage", thread_ts=one["ts"]) if "Done" in (c.body.get("text") or "")]


async def test_answering_a_stopped_runs_question_takes_the_run_up_again(make_bot, slack_env, fake_model):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)
    thread, _, _ = await asked_thread(slack, fake_model)
    key = ThreadKey("T0001", CHANNEL, thread)
    await slack.click(CHANNEL, (await bot.store.get_thread(key)).status_ts, "flower_stop")
    await posted(slack, thread, "Stopped")

    await slack.send_event(slack.user_message(CHANNEL, "Go", thread_ts=thread))  # answers the open question
    await posted(slack, thread, "Done")
    clar = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
    assert any("Go" in t for _, t in clar[-1].tool_results)
    assert sum("Question" in t for t in texts(slack, thread)) == 1


async def test_words_for_a_run_stopped_while_confirming_keep_the_request_and_reach_the_clarifier(
        make_bot, slack_env, fake_model):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)
    held = hold()
    fake_model.rule(text(BRIEF, fault=held), when=CLARIFIER, name="first")
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event)
    key = ThreadKey("T0001", CHANNEL, event["ts"])
    await held.arrived()
    await slack.click(CHANNEL, (await bot.store.get_thread(key)).status_ts, "flower_stop")
    await posted(slack, event["ts"], "Stopped")
    held.release()
    fake_model.rule(text(BRIEF), when=CLARIFIER)

    await slack.send_event(slack.user_message(CHANNEL, "也要支持 Go", thread_ts=event["ts"]))
    await posted(slack, event["ts"], "Done")
    shown = [r.shown for r in fake_model.message_requests if CLARIFIER(r.body)][-1]
    assert "写个 hello.txt" in shown and "也要支持 Go" in shown  # the request kept, the words delivered
    saved = run_dir(bot.jobs.workspace(key)) / ASK_FILE
    assert saved.read_text(encoding="utf-8") == "写个 hello.txt"


async def test_two_starts_for_one_thread_at_once_make_one_run(make_bot, slack_env, fake_model):
    """A reply and a click (or a take-up and a follow-up) may start a thread's run at the same moment."""
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)
    brief_only(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")  # in the channel, not delivered: the starts come from here
    key = ThreadKey("T0001", CHANNEL, event["ts"])
    started = await asyncio.gather(bot.jobs.start(key, Start.request("写个 hello.txt")),
                                   bot.jobs.start(key, Start.request("写个 bye.txt")))
    assert sorted(started) == [False, True]
    await posted(slack, event["ts"], "Done")
    await asyncio.sleep(0.5)
    assert len([c for c in slack.calls("chat.postMessage", thread_ts=event["ts"])
                if "Done" in (c.body.get("text") or "")]) == 1


async def test_rate_limited_post_is_retried_and_posted_once(make_bot, slack_env, fake_model):
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    brief_only(fake_model)
    slack.rate_limit("chat.postMessage", times=1, retry_after=1)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event)
    await posted(slack, event["ts"], "Done")
    calls = slack.calls("chat.postMessage")
    assert calls[0].status == 429 and calls[1].ok and calls[0].body["text"] == calls[1].body["text"]
    started = [m for m in texts(slack, event["ts"]) if "Started" in m]
    assert len(started) == 1

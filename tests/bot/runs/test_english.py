"""An English team's whole conversation (FLOWER_LANGUAGE=en, the bot's default): real slack-bolt
against the fake Slack, the real CLI against the offline model. Nothing flower writes (Slack
messages, workspace file names and headings, the models' system prompts) holds a Chinese character,
and the English brief and goal parse. The thread reads as a person's: a budget of posts per run,
the agent session's states, words said mid-run acknowledged and accounted for, Slack's own Stop,
``/new``."""

from __future__ import annotations

import json
import re

from engine import Brief, Goal
from engine.authoring import starter_paths
from engine.lang import speaking
from engine.testing import hold, prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE, WORKER
from tests.bot.helpers.app import CHANNEL, answer_first_option, posted, workspace

SESSION = "agents.sessions.setStatus"

CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
BRIEF = ("## Goal\nA hello.txt file\n## Acceptance criteria\nhello.txt says hi\n## Bounds\nOnly hello.txt\n"
         "## Unknowns and assumptions\nPython")
GOAL = "## Goal\nThe workspace has hello.txt\n## Checks\n- hello.txt exists\n- it says hi"
NOT_YET = "## Verdict\nnot achieved\n## Reason\nwrong content\n## Failed\n- 2. it says hi"
ACHIEVED = "## Verdict\nachieved\n## Reason\nall checks pass\n## Failed\nnone"


def script(fm) -> None:
    fm.rule(tool_use("mcp__human__ask", {"question": "Which language?", "options": ["Python", "Go"]}),
            text(BRIEF), when=CLARIFIER)
    fm.rule(text(GOAL), when=[JUDGE, prompt_contains("set the goal")], repeat_last=True)
    fm.rule(text(NOT_YET), text(ACHIEVED), when=[JUDGE, prompt_contains("Judge whether")], sequence="call",
            repeat_last=True)
    fm.rule(tool_use("Write", {"file_path": "hello.txt", "content": "hi"}), text("wrote hello.txt"), when=WORKER)
    fm.rule(text("fixed in round 2"), when=[COORDINATOR, prompt_contains("not achieved yet")])
    fm.rule(tool_use("Agent", {"subagent_type": "coder", "description": "write hello",
                               "prompt": "Write hello.txt with hi."}),
            text("round 1 done"), when=COORDINATOR, repeat_last=True)


async def test_an_english_conversation_has_no_chinese_anywhere_flower_writes(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    await make_bot(FLOWER_LANGUAGE="en")
    script(fake_model)
    event = slack.mention(CHANNEL, "make a hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    await answer_first_option(slack, thread)
    await posted(slack, thread, "Done: the goal is achieved")
    # the thread's budget: the acknowledgement (edited into the live status), the question, the
    # checklist (each verdict an edit) and the answer; two rounds post nothing of their own
    posts = [c.body.get("text", "")[:40] for c in slack.calls("chat.postMessage", thread_ts=thread)]
    assert len(posts) <= 4, posts

    said = [json.dumps({"text": c.body.get("text"), "blocks": c.body.get("blocks")}, ensure_ascii=False)
            for c in slack.calls() if c.method in ("chat.postMessage", "chat.update", "chat.postEphemeral")]
    assert said and [s for s in said if CJK.search(s)] == []
    # a person's words: no host path, no token count, no engine step name ("clarify", "set the goal")
    assert [s[:120] for s in said if str(tmp_path) in s] == []
    assert [s[:120] for s in said if re.search(r"\b\d+(\.\d)?K\b", s)] == []
    assert [s[:120] for s in said if re.search(r"\bclarify\b|set the goal|step \*?work", s)] == []
    systems = {r.system for r in fake_model.message_requests}
    assert systems and [s[:200] for s in systems if CJK.search(s)] == []
    prompts = [r.prompt for r in fake_model.message_requests if r.turn == 0]
    assert [p[:200] for p in prompts if CJK.search(p)] == []

    ws = workspace(tmp_path, thread)
    with speaking("en"):
        paths = starter_paths(ws)
    assert (paths.brief.name, paths.goal.name, paths.log.name) == ("brief.md", "goal.md", "qa-log.md")
    written = [p for p in paths.workbench.root.rglob("*") if p.is_file()]
    assert [str(p) for p in written if CJK.search(str(p.relative_to(ws.parent)))] == []
    assert "## Acceptance criteria" in paths.brief.read_text() and Brief.load(paths.brief).complete()
    assert "## Checks" in paths.goal.read_text() and Goal.load(paths.goal).checks == ["hello.txt exists", "it says hi"]
    assert "Python" in paths.log.read_text() and not CJK.search(paths.log.read_text())


def _said(slack) -> list[str]:
    """Every text the bot sent to Slack (posts, edits, ephemerals), with its blocks."""
    return [json.dumps({"text": c.body.get("text"), "blocks": c.body.get("blocks")}, ensure_ascii=False)
            for c in slack.calls() if c.method in ("chat.postMessage", "chat.update", "chat.postEphemeral")]


def _posts_since(slack, thread, mark) -> list[str]:
    return [(c.body.get("text") or "")[:50] for c in slack.calls("chat.postMessage", thread_ts=thread)
            if c.index >= mark]


def _sessions_since(slack, thread, mark) -> list[str]:
    return [c.body.get("status") for c in slack.calls(SESSION, thread_ts=thread) if c.index >= mark and c.ok]


async def test_the_whole_conversation_reads_as_a_person_s(make_bot, slack_env, fake_model, tmp_path):
    slack, fm = slack_env, fake_model
    bot = await make_bot(FLOWER_LANGUAGE="en")
    held, stopped_held = hold(), hold()
    fm.rule(text(BRIEF), when=[CLARIFIER, prompt_contains("make a bye.txt")])  # /new's request: no question
    fm.rule(tool_use("mcp__human__ask", {"question": "Which language?", "options": ["Python", "Go"]}),
            text(BRIEF), when=CLARIFIER)
    fm.rule(text(GOAL), when=[JUDGE, prompt_contains("set the goal")], repeat_last=True)
    fm.rule(text(NOT_YET), text(ACHIEVED), when=[JUDGE, prompt_contains("Judge whether")], sequence="call",
            repeat_last=True)
    fm.rule(tool_use("Write", {"file_path": "hello.txt", "content": "hi"}), text("wrote hello.txt"), when=WORKER)
    fm.rule(text("working on the README", fault=stopped_held), when=[COORDINATOR, prompt_contains("a README")])
    fm.rule(text("Added bye.txt as asked."), when=[COORDINATOR, prompt_contains("also add bye.txt")])
    fm.rule(text("fixed in round 2"), when=[COORDINATOR, prompt_contains("not achieved yet")])
    fm.rule(tool_use("Agent", {"subagent_type": "coder", "description": "write hello",
                               "prompt": "Write hello.txt with hi."}, fault=held),
            text("round 1 done"), when=COORDINATOR, repeat_last=True)

    # 1. The request; its question answered by a button.
    event = slack.mention(CHANNEL, "make a hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    await answer_first_option(slack, thread)

    # 2. A reply while round 1 works: it reaches the session, and the status line says so.
    await held.arrived()
    reply = slack.user_message(CHANNEL, "keep it to one line", thread_ts=thread)
    await slack.send_event(reply)
    status_ts = (await bot.store.get_thread(bot_key(thread))).status_ts
    await slack.wait_until(lambda: "Your words reached the run: “keep it to one line”"
                           in str(slack.message(CHANNEL, status_ts)["blocks"]), what="the reply acknowledged")
    held.release()
    answer = await posted(slack, thread, "Done: the goal is achieved")
    coordinator = [r for r in fm.message_requests if COORDINATOR(r.body)]
    assert any("keep it to one line" in r.prompt for r in coordinator)  # what the model was shown
    shown = str(answer.arg("blocks"))
    assert "You said “keep it to one line” in round 1: the work went on with it for 2 rounds." in shown
    plan = next(c for c in slack.calls("chat.postMessage", thread_ts=thread) if "hello.txt exists" in str(c.body))
    assert "✅ *2 of 2 checks passed* · <" in shown and f"p{plan.response['ts'].replace('.', '')}" in shown
    # the budget: acknowledgement (edited into the status), question, checklist, answer
    assert len(_posts_since(slack, thread, 0)) <= 4, _posts_since(slack, thread, 0)
    assert len(slack.calls("reactions.add", timestamp=reply["ts"])) == 1  # 👀, and words in the status
    await slack.wait_until(lambda: _sessions_since(slack, thread, 0)[-1:] == ["active"], what="the session active")
    states = _sessions_since(slack, thread, 0)
    assert states[0] == "processing" and "suspended" in states, states
    assert states[states.index("suspended") + 1] == "processing" and "closed" not in states, states

    # 3. A follow-up: its acknowledgement and its answer; the checklist is edited in place.
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "also add bye.txt", thread_ts=thread))
    again = await posted(slack, thread, "Done: the goal is achieved", after=mark)
    assert len(_posts_since(slack, thread, mark)) <= 2, _posts_since(slack, thread, mark)
    assert "Added bye.txt as asked." in str(again.arg("blocks")) and "1 round" in again.body["text"]
    assert "this request $" in str(again.arg("blocks")) and "· thread $" in str(again.arg("blocks"))
    await slack.wait_until(lambda: _sessions_since(slack, thread, mark)[-1:] == ["active"], what="active again")
    assert _sessions_since(slack, thread, mark)[0] == "processing"

    # 4. Slack's own Stop on the session, while a second follow-up works.
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "and a README please", thread_ts=thread))
    await stopped_held.arrived()
    await slack.send_event(slack.session_stopped(CHANNEL, thread, user="U0BOB"))
    await posted(slack, thread, "Stopped", after=mark)
    await slack.wait_until(lambda: _sessions_since(slack, thread, mark)[-1:] == ["active"],
                           what="the session off processing")
    assert (await bot.store.get_thread(bot_key(thread))).state == "stopped"
    stopped_held.release()

    # 5. /new: one first reply saying the last run was archived; the new request counts from $0.00.
    mark = slack.mark()
    new = slack.user_message(CHANNEL, "/new make a bye.txt", thread_ts=thread)
    await slack.send_event(new)
    first = await posted(slack, thread, "Archived the last run", after=mark)
    assert "Started" in first.body["text"] and _posts_since(slack, thread, mark)[0].startswith(":recycle:")
    running = await slack.wait_for("chat.update", lambda c: "Running" in (c.body.get("text") or ""), after=mark)
    assert "$0.00" in running.body["text"]
    await posted(slack, thread, "Done: the goal is achieved", after=mark)
    assert len(slack.calls("reactions.add", timestamp=new["ts"])) == 1
    states = _sessions_since(slack, thread, mark)
    assert states[0] == "closed" and "processing" in states[1:], states

    # The audit trail holds the conversation's actions, in order.
    actions = [(a.user, a.action) for a in await bot.store.audit_since(0.0)]
    assert actions == [("U0ALICE", "start"), ("U0BOB", "stop"), ("U0ALICE", "new")], actions

    # Throughout: a person's words only.
    said = _said(slack)
    assert [s[:120] for s in said if CJK.search(s)] == []
    assert [s[:120] for s in said if str(tmp_path) in s or "/workspaces/" in s] == []
    assert [s[:120] for s in said if re.search(r"\b\d+(\.\d)?K\b", s)] == []
    assert [s[:120] for s in said if re.search(r"\bclarify\b|set the goal|step \*?work|\bjudge#|parked", s)] == []


def bot_key(thread: str):
    from bot.core.thread import ThreadKey
    return ThreadKey("T0001", CHANNEL, thread)

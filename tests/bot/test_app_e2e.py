"""The bot end to end: real slack-bolt against the fake Slack, the real CLI against the offline model.

A mention starts a run in its own workspace; questions come as buttons; clicks and replies
answer them; verdicts, the status line and the summary land in the thread.
"""

from __future__ import annotations

import pytest
import pytest_asyncio

from bot.config import load_config
from bot.jobs import BotOptions
from bot.main import start_bot
from bot.store import ThreadKey
from engine import Resilience
from engine.testing import prompt_contains, system_contains, text, tool_use
from engine.workflow.starter import starter_paths

CLARIFIER = system_contains("你只负责确认需求")
JUDGE = system_contains("你是独立的判定者")
COORDINATOR = system_contains("你是协调者")
WORKER = system_contains("你是执行者")

BRIEF = ("## 目标\n写一个 hello.txt\n## 验收标准\nhello.txt 内容是 hi\n## 边界\n只动 hello.txt\n"
         "## 未知与假设\n用 Python")
GOAL = "## 目标\n工作区里有 hello.txt\n## 判定清单\n- hello.txt 存在\n- 内容是 hi"
NOT_YET = "## 结论\n未达成\n## 理由\n内容不对\n## 未通过\n- 内容是 hi"
ACHIEVED = "## 结论\n达成\n## 理由\n都通过了\n## 未通过\n无"
CHANNEL = "C0GENERAL"


def script(fm, *, verdicts=(NOT_YET, ACHIEVED)):
    """The starter flow of tests/e2e, with the worker writing into whatever workspace it runs in."""
    fm.rule(tool_use("mcp__human__ask", {"question": "用什么语言?", "options": ["Python", "Go"]}),
            text(BRIEF), when=CLARIFIER)
    fm.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fm.rule(*(text(v) for v in verdicts), when=[JUDGE, prompt_contains("判定这一轮")],
            sequence="call", repeat_last=True)
    fm.rule(tool_use("Write", {"file_path": "hello.txt", "content": "hi"}),
            tool_use("Bash", {"command": "cat hello.txt"}), text("wrote hello.txt"), when=WORKER)
    fm.rule(text("fixed in round 2"), when=[COORDINATOR, prompt_contains("还没有达成")])
    fm.rule(text("continued after wake"), when=[COORDINATOR, prompt_contains("补充一句")])
    fm.rule(tool_use("Agent", {"subagent_type": "coder", "description": "write hello",
                               "prompt": "Write hello.txt with hi, then cat it."}),
            text("round 1 done"), when=COORDINATOR, repeat_last=True)


OPTIONS = BotOptions(runtime={"resilience": Resilience(base_delay=0.01)}, status_every_s=0)


@pytest_asyncio.fixture
async def bot(slack_env, fake_model, tmp_path, monkeypatch):
    monkeypatch.setenv("FLOWER_HOME", str(tmp_path / "home"))
    running = await start_bot(load_config(dotenv=None), options=OPTIONS)
    await slack_env.wait_connected()
    yield running
    await running.close()


def texts(slack, thread_ts):
    return [m.get("text", "") for m in slack.messages_in(CHANNEL, thread_ts)]


async def posted(slack, thread_ts, needle, *, after=0):
    """The first chat.postMessage in the thread whose text contains ``needle``."""
    return await slack.wait_for("chat.postMessage", lambda c: needle in (c.body.get("text") or ""),
                                after=after, thread_ts=thread_ts)


async def question(slack, thread_ts, after=0):
    call = await slack.wait_for("chat.postMessage", lambda c: (c.body.get("text") or "").startswith("Question"),
                                after=after, thread_ts=thread_ts)
    return call.response["ts"], call


def workspace(tmp_path, thread_ts):
    return tmp_path / "home" / "workspaces" / f"T0001-{CHANNEL}-{thread_ts.replace('.', '_')}"


async def test_mention_question_click_rounds_verdict_summary(bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    script(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)

    accepted = await posted(slack, thread, "Started")
    ws = workspace(tmp_path, thread)
    assert str(ws) in accepted.body["text"]
    await slack.wait_for("reactions.add", channel=CHANNEL, timestamp=thread)

    q_ts, q_call = await question(slack, thread)
    buttons = [e for b in q_call.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button"]
    assert [b["text"]["text"] for b in buttons] == ["Python", "Go"]
    stale = slack.click_payload(CHANNEL, q_ts, buttons[1]["action_id"], user="U0CAROL")  # an old client's view
    await slack.click(CHANNEL, q_ts, buttons[0]["action_id"], user="U0BOB")
    updated = await slack.wait_for("chat.update", ts=q_ts)
    shown = str(updated.arg("blocks"))
    assert "Python" in shown and "U0BOB" in shown and "button" not in shown  # nobody can click twice

    await posted(slack, thread, "Verdict #1")
    await posted(slack, thread, "Verdict #2")
    summary = await posted(slack, thread, "Done: the goal is achieved")
    assert "Verdict #1: *not yet*" in "\n".join(texts(slack, thread))
    assert (ws / "hello.txt").read_text() == "hi"
    paths = starter_paths(ws)
    assert "Python" in paths.brief.read_text() and "U0BOB" in paths.log.read_text()
    clar = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
    assert any("Python" in t for _, t in clar[-1].tool_results)  # the click reached the model
    status_ts = (await bot.store.get_thread(ThreadKey("T0001", CHANNEL, thread))).status_ts
    final = await slack.wait_for("chat.update", lambda c: "done" in (c.body.get("text") or ""), ts=status_ts)
    assert "Stop" not in str(final.arg("blocks")) and summary.index > 0
    assert (await bot.store.get_thread(ThreadKey("T0001", CHANNEL, thread))).state == "done"

    # A click on the already-answered question (from a client still showing the buttons): a note.
    await slack.socket.send("interactive", stale, timeout=15)
    await slack.wait_until(lambda: [e for e in slack.ephemerals if "already answered" in e.get("text", "")],
                           what="an ephemeral note for a late click")

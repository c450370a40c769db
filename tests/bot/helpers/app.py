"""The in-process bot's end-to-end helpers: the starter flow scripted on the offline model, the
options bots start with, and waits on what the fake Slack was sent.

The script is the starter flow of tests/e2e (a clarifier asking one question, a goal, a worker
writing hello.txt, two rounds of verdicts); ``brief_only`` is a clarifier alone, for
``CLARIFY_ONLY`` bots. tests/bot/helpers/faults.py has a second flow, made for faults.
"""

from __future__ import annotations

import asyncio

from bot.runs.jobs import BotOptions
from bot.testing.fake_slack import DEFAULT_TIMEOUT
from engine import Resilience
from engine.testing import prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE, WORKER

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


def brief_only(fm, *, ask_first=False):
    """A clarifier that (maybe) asks one question, then writes the brief: for clarify_only runs."""
    first = [tool_use("mcp__human__ask", {"question": "用什么语言?", "options": ["Python", "Go"]})] if ask_first else []
    fm.rule(*first, text(BRIEF), when=CLARIFIER)


CLARIFY_ONLY = BotOptions(runtime=OPTIONS.runtime, flow={"clarify_only": True}, status_every_s=0)


def texts(slack, thread_ts):
    return [m.get("text", "") for m in slack.messages_in(CHANNEL, thread_ts)]


async def posted(slack, thread_ts, needle, *, after=0, timeout=DEFAULT_TIMEOUT):
    """The first chat.postMessage in the thread (index >= ``after``) whose text contains ``needle``;
    whole runs with faults take a while on a busy machine, so a test may wait longer."""
    return await slack.wait_for("chat.postMessage", lambda c: needle in (c.body.get("text") or ""),
                                after=after, thread_ts=thread_ts, timeout=timeout)


async def question(slack, thread_ts, after=0):
    call = await slack.wait_for("chat.postMessage", lambda c: (c.body.get("text") or "").startswith("Question"),
                                after=after, thread_ts=thread_ts)
    return call.response["ts"], call


async def answer_first_option(slack, thread_ts, *, user="U0BOB", channel=CHANNEL, after=0):
    """Wait for the thread's question and click its first option as ``user``."""
    q_ts, q_call = await question(slack, thread_ts, after=after)
    button = next(e for b in q_call.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button")
    await slack.click(channel, q_ts, button["action_id"], user=user)


async def asked_thread(slack, fake_model):
    """A mention whose clarifier asks its one question: (thread ts, question ts, the question's post)."""
    brief_only(fake_model, ask_first=True)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event)
    q_ts, q_call = await question(slack, event["ts"])
    return event["ts"], q_ts, q_call


def workspace(tmp_path, thread_ts):
    return tmp_path / "home" / "workspaces" / f"T0001-{CHANNEL}-{thread_ts.replace('.', '_')}"


async def marked_done(bot, key) -> None:
    """Wait until the thread is marked done: its status line and summary may show it a moment before."""
    async with asyncio.timeout(240):
        while (await bot.store.get_thread(key)).state != "done":
            await asyncio.sleep(0.05)


async def settled(bot, key) -> None:
    """Wait until the thread has no run going in this process: a parked run's notice posts while its CLI still stops."""
    async with asyncio.timeout(240):
        while bot.jobs.busy(key):
            await asyncio.sleep(0.05)

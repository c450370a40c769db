"""The flow the fault tests script on the offline model, and bots that retry fast.

A second starter flow beside tests/bot/helpers/app.py's, made for faults: its clarifier asks only
when told to (``ask``), its brief's open point is a port (``端口 8080``, not ``用 Python``), its goal
has one check, and the worker, the coordinator and round 2 each take a fault. ``BRIEF``, ``GOAL``
and ``script`` here are that flow's; the verdicts, the channel and the waits on Slack are
helpers/app.py's, the same for both.
"""

from __future__ import annotations

from bot.runs.jobs import BotOptions
from engine import Resilience
from engine.testing import prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE, WORKER
from tests.bot.helpers.app import ACHIEVED, CHANNEL, NOT_YET

BRIEF = ("## 目标\n写一个 hello.txt\n## 验收标准\nhello.txt 内容是 hi\n## 边界\n只动 hello.txt\n"
         "## 未知与假设\n端口 8080")
GOAL = "## 目标\n工作区里有 hello.txt\n## 判定清单\n- hello.txt 存在"
FAST = {"resilience": Resilience(base_delay=0.01, max_delay=0.05)}
FAST_BOT = BotOptions(runtime=FAST, status_every_s=0)


def script(fm, *, ask=None, coordinator=None, worker_fault=None, round2_fault=None):
    """A starter flow: the clarifier (maybe) asks ``ask``, the worker writes hello.txt, one round."""
    first = [tool_use("mcp__human__ask", ask)] if ask else []
    fm.rule(*first, text(BRIEF), when=CLARIFIER)
    fm.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    verdicts = (NOT_YET, ACHIEVED) if round2_fault else (ACHIEVED,)
    fm.rule(*(text(v) for v in verdicts), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call",
            repeat_last=True)
    fm.rule(tool_use("Write", {"file_path": "hello.txt", "content": "hi"}, fault=worker_fault),
            text("wrote hello.txt"), when=WORKER)
    fm.rule(text("round 2 done after the handoff"), when=[COORDINATOR, prompt_contains("交接")])
    fm.rule(text("round 2 done", fault=round2_fault), when=[COORDINATOR, prompt_contains("还没有达成")])
    fm.rule(*(coordinator or [tool_use("Agent", {"subagent_type": "coder", "description": "write hello",
                                                 "prompt": "Write hello.txt with hi."}),
                              text("round 1 done")]), when=COORDINATOR, repeat_last=True)


async def start_thread(slack, words="写个 hello.txt"):
    event = slack.mention(CHANNEL, words)
    await slack.send_event(event)
    return event["ts"]

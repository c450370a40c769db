"""The goal's checklist as Slack shows it: one Block Kit ``plan`` with a task per check.

Slack's ``plan`` block (slack_sdk 3.40+: ``PlanBlock`` of ``TaskCardBlock`` tasks) is a message
block, so the checklist is posted in the thread once and edited in place after every verdict.
Each check's state maps to a task status (Slack knows pending / in_progress / complete / error)
and is also said in words under the task, since "cannot be verified here" has no status of its
own. ``text`` (the notification, and what a client without plan blocks shows) lists the checks
with an emoji each; ``fallback`` is the same list as section blocks, for a workspace that
refuses the plan block.
"""

from __future__ import annotations

from typing import Any, Literal

from slack_sdk.models.blocks import PlanBlock, TaskCardBlock

from bot.core.split_text import clip, escape
from bot.render import texts
from bot.render.block_kit import Payload, blocks_for
from bot.render.block_kit import fallback as fallback_text
from engine.authoring import CheckState

__all__ = ["TaskStatus", "fallback", "plan_message"]

TaskStatus = Literal["pending", "in_progress", "complete", "error"]

# Slack documents no limit for a task's title; a checklist line stays readable at this length.
MAX_TITLE = 150
MAX_TASKS = 40  # checks shown; the rest are counted in the title (no goal has come near it)

_STATUS: dict[str, TaskStatus] = {
    "pending": "pending", "passed": "complete", "failing": "error", "unverifiable": "pending",
}  # fmt: skip
_EMOJI = {"pending": "⏳", "passed": "✅", "failing": "❌", "unverifiable": "⚠️"}


def _title(checks: list[CheckState]) -> str:
    judged = [c for c in checks if c.state in ("passed", "failing")]
    if not judged:
        return texts.PLAN_TITLE.format(n=len(checks))
    return texts.PLAN_TITLE_JUDGED.format(passed=sum(c.state == "passed" for c in checks), n=len(checks))


def _rich(text: str) -> dict[str, Any]:
    return {"type": "rich_text",
            "elements": [{"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}]}


def _words(check: CheckState, stopped: bool) -> str:
    return texts.PLAN_STOPPED if stopped and check.state == "pending" else texts.PLAN_STATE[check.state]


def _task(check: CheckState, stopped: bool) -> TaskCardBlock:
    title = " ".join(str(check.text).split()) or texts.PLAN_CHECK.format(n=check.number)
    short = clip(title, MAX_TITLE)
    details = _rich(title) if short != title else None  # the whole check, when the title had to be cut
    return TaskCardBlock(task_id=f"check-{check.number}", title=short, status=_STATUS[check.state],
                         details=details, output=_rich(_words(check, stopped)))


def _lines(checks: list[CheckState], stopped: bool) -> list[str]:
    return [f"{_EMOJI[c.state]} {c.number}. {' '.join(str(c.text).split())} · {_words(c, stopped)}"
            for c in checks]


def plan_message(checks: list[CheckState], *, stopped: bool = False) -> Payload:
    """The checklist message for ``checks`` (``engine.authoring.check_states``: number, text,
    state); a ``stopped`` run's pending checks say it was stopped, not that they wait for the judge.

    At most ``MAX_TASKS`` tasks; the text fallback lists every check with its state in words.
    """
    title = _title(checks)
    shown = checks[:MAX_TASKS]
    if len(checks) > len(shown):
        title += texts.PLAN_FIRST_SHOWN.format(shown=len(shown))
    block = PlanBlock(title=title, tasks=[_task(c, stopped) for c in shown]).to_dict()
    return {"text": fallback_text("\n".join([title, *_lines(checks, stopped)])), "blocks": [block]}


def fallback(checks: list[CheckState], *, stopped: bool = False) -> Payload:
    """The checklist as section blocks (a bold title, a line per check): for a workspace whose
    Slack refuses the plan block."""
    title = _title(checks)
    body = "\n".join(_lines(checks, stopped))
    return {"text": fallback_text("\n".join([title, body])), "blocks": blocks_for(body, lead=f"*{escape(title)}*\n")}

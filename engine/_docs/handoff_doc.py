"""The handoff (交接-<步骤>.md): what a session whose context filled leaves for its successor.

Not compaction: the document is readable and editable, and what was lost is visible. The CURRENT
session writes it (only it has that context; ``HANDOFF_PROMPT``); a fresh session of the same step
starts from ``prompt_block()``. When it cannot be written (the context already overflowed),
``degraded()`` builds one mechanically from the original task.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from engine._docs.sections import MarkdownFile, SectionTable
from engine._lang import en, words, zh

HANDOFF_SECTIONS = SectionTable(
    {
        "doing": ("在做什么", "正在做什么", "正在做", "当前任务", "Doing", "In progress", "Working on"),
        "decided": ("已定的事", "已经定下的事", "已决定的事", "已决定", "Decided", "Decisions", "Settled"),
        "deadends": ("走不通的路", "走不通", "死路", "试过不行的", "Dead ends", "Tried and failed"),
        "next": ("下一步", "接下来", "Next", "Next steps", "Next step"),
        "scene": ("现场", "现状", "当前状态", "Scene", "State", "Where things are", "Current state"),
    },
    loose=False,  # handoff prose is full of "Next: ..." and "1. 下一步..." sentences
)


# Phrasings of "the context overflowed" from Anthropic, the CLI's own list, and other providers.
_OVERFLOW = (
    "prompt is too long",
    "input is too long for requested model",
    "context length exceeded",
    "context_length_exceeded",
    "maximum context length",
    "too many total text bytes",
    "input length and max_tokens exceed",
    "input length and `max_tokens` exceed",
    "exceeds the context window",
    "exceed the context window",
    "context window exceeded",
    "context window is full",
    "context window exceeds limit",
    "contextwindowexceedederror",
    "longer than the maximum model length",
    "longer than the model's context length",
    "exceeds the available context size",
    "exceeds the maximum number of tokens allowed",
    "exceeded model token limit",
    "input token length too long",
    "input tokens exceed the configured limit",
    "maximum context limit",
    "maximum prompt length",
    "prompt exceeds max length",
)
# A single over-long field is a bad request, not a full context (the CLI excludes it too).
_NOT_OVERFLOW = ("string too long. expected a string with maximum length",)
_TITLE = re.compile(r"^#\s*(?:交接|Handoff)\s*[·:：\-—]\s*(?P<step>.+?)\s*$", re.MULTILINE)
_DEGRADED_MARKS = (zh.HANDOFF_DEGRADED_MARK, en.HANDOFF_DEGRADED_MARK)


def is_overflow(*texts: str | None) -> bool:
    """True when any of ``texts`` (error strings; None is skipped) says the context overflowed.

    Case-insensitive. It turns a fatal "prompt is too long" into an immediate handoff.
    """
    for text in texts:
        low = (text or "").lower()
        if any(p in low for p in _OVERFLOW) and not any(p in low for p in _NOT_OVERFLOW):
            return True
    return False


@dataclass
class Handoff(MarkdownFile):
    """Five sections; only ``doing`` and ``next`` are required.

    Forcing "dead ends" to be non-empty would make the model invent some. ``step`` names the step
    whose session filled up; ``degraded`` marks a handoff built by ``degraded()`` (not equality).
    """

    doing: str = ""
    decided: str = ""
    deadends: str = ""
    next: str = ""
    scene: str = ""
    step: str = ""
    path: Path | None = field(default=None, compare=False)
    degraded: bool = field(default=False, compare=False)

    @classmethod
    def parse(cls, text: str, *, step: str = "") -> Self:
        """Read the five sections; ``step`` defaults to the file's ``# 交接 · <step>`` title."""
        p = HANDOFF_SECTIONS.parse(text)
        title = _TITLE.search(p.preamble)
        return cls(
            **p.sections,
            step=step or (title["step"] if title else ""),
            degraded=any(mark in p.preamble for mark in _DEGRADED_MARKS),
        )

    def _values(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in HANDOFF_SECTIONS.keys}

    def missing(self) -> list[str]:
        """Titles of the missing required sections, in the language in effect: "在做什么" and/or "下一步"."""
        required = ("doing", "next")
        return [words().HANDOFF_TITLES[k] for k in required if not getattr(self, k).strip()]

    def complete(self) -> bool:
        """True when ``doing`` and ``next`` have content."""
        return not self.missing()

    def to_markdown(self) -> str:
        """The file form: a ``# 交接 · <step>`` title, the degraded mark, the five sections."""
        w = words()
        head = [w.HANDOFF_FILE_TITLE.format(step=self.step) if self.step else w.HANDOFF_FILE_UNTITLED]
        if self.degraded:
            head.append(w.HANDOFF_DEGRADED_MARK)
        return "\n\n".join(head) + "\n\n" + HANDOFF_SECTIONS.render(self._values(), titles=w.HANDOFF_TITLES)

    def prompt_block(self) -> str:
        """The first prompt of the session that takes over: a continuation notice, then sections."""
        w = words()
        step = w.HANDOFF_THIS_STEP.format(step=self.step) if self.step else w.HANDOFF_SOME_STEP
        lines = [w.HANDOFF_CONTINUE.format(step=step)]
        if w.HANDOFF_CONTINUE_NOTE:  # zh adds an English line for a model that reads English best
            lines.append(w.HANDOFF_CONTINUE_NOTE.format(step=self.step or "?"))
        if self.degraded:
            lines.append(w.HANDOFF_DEGRADED_NOTE)
        body = HANDOFF_SECTIONS.render(self._values(), placeholder=False, titles=w.HANDOFF_TITLES).strip()
        return "\n".join(lines) + "\n\n" + body


def degraded(step: str, prompt: str, *, why: str = "") -> Handoff:
    """A handoff built without the model, when the session could not write one.

    ``scene`` quotes the first 1200 characters of the original task ``prompt`` in a fence longer
    than any backtick run inside it (so headings or fences in the task cannot break the file);
    ``why`` is shown in ``doing``. The result is complete and marked ``degraded``.
    """
    task = (prompt or "").strip()
    cut = len(task) > 1200
    w = words()
    excerpt = task[:1200] + (w.DEGRADED_CUT if cut else "")
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", excerpt)), default=0))
    reason = w.DEGRADED_WHY.format(why=why.strip()) if why.strip() else ""
    return Handoff(
        doing=w.DEGRADED_DOING.format(step=step, reason=reason),
        next=w.DEGRADED_NEXT,
        scene=w.DEGRADED_SCENE.format(cut=w.DEGRADED_SCENE_CUT if cut else "", fence=fence, excerpt=excerpt),
        step=step,
        degraded=True,
    )

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

HANDOFF_PROMPT = """上下文快满了(已用约 {used} / {window} tokens)。先停下手头的工作,为接手的新会话写一份交接文档。
接手的是一个全新的会话,看不到我们之前的任何对话,只能看到这份文档和工作区本身。不要再开始新的工作,直接写。

只输出下面五个标题(用 ## 标题,顺序不变):

## 在做什么
这一步的任务是什么,做到哪了。
## 已定的事
已经做出的决定和理由,接手的人不该再推翻的。
## 走不通的路
试过但不行的做法,以及为什么不行。
## 下一步
接手后马上要做的具体事情,按先后顺序。
## 现场
相关文件路径、分支、正在跑的进程、关键命令和它们输出的要点。

「在做什么」和「下一步」必须写;其余三节没有就写"无",不要编造。
(The context window is nearly full: {used} of {window} tokens. Write the handoff now, with
exactly these five headings; a fresh session with none of this conversation continues from it.)"""

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
_TITLE = re.compile(r"^#\s*交接\s*[·:：\-—]\s*(?P<step>.+?)\s*$", re.MULTILINE)
_DEGRADED_MARK = "> 降级交接:上一个会话没能写出交接文档,以下为机械生成。"


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
            degraded=_DEGRADED_MARK in p.preamble,
        )

    def _values(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in HANDOFF_SECTIONS.keys}

    def missing(self) -> list[str]:
        """Chinese titles of the missing required sections: "在做什么" and/or "下一步"."""
        required = ("doing", "next")
        return [HANDOFF_SECTIONS.titles[k] for k in required if not getattr(self, k).strip()]

    def complete(self) -> bool:
        """True when ``doing`` and ``next`` have content."""
        return not self.missing()

    def to_markdown(self) -> str:
        """The file form: a ``# 交接 · <step>`` title, the degraded mark, the five sections."""
        head = [f"# 交接 · {self.step}" if self.step else "# 交接"]
        if self.degraded:
            head.append(_DEGRADED_MARK)
        return "\n\n".join(head) + "\n\n" + HANDOFF_SECTIONS.render(self._values())

    def prompt_block(self) -> str:
        """The first prompt of the session that takes over: a continuation notice, then sections."""
        step = f"步骤「{self.step}」" if self.step else "这一步"
        lines = [
            f"这是接续:上一个会话在做{step}时上下文满了,换成了你这个新会话。"
            "你看不到它的对话记录,只有下面这份它留下的交接文档和工作区本身。"
            "先核对「现场」,再从「下一步」接着做,不要从头重来,也不要推翻「已定的事」。",
            f"(Continuation: the previous session of step {self.step or '?'} filled its context "
            "window; continue from its handoff below, do not start over.)",
        ]
        if self.degraded:
            lines.append("注意:这份交接是机械生成的,上一个会话没能自己写。动手前先看清工作区现状。")
        body = HANDOFF_SECTIONS.render(self._values(), placeholder=False).strip()
        return "\n".join(lines) + "\n\n" + body


def degraded(step: str, prompt: str, *, why: str = "") -> Handoff:
    """A handoff built without the model, when the session could not write one.

    ``scene`` quotes the first 1200 characters of the original task ``prompt`` in a fence longer
    than any backtick run inside it (so headings or fences in the task cannot break the file);
    ``why`` is shown in ``doing``. The result is complete and marked ``degraded``.
    """
    task = (prompt or "").strip()
    cut = len(task) > 1200
    excerpt = task[:1200] + ("\n…(原任务更长,已截断)" if cut else "")
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", excerpt)), default=0))
    reason = f"(原因:{why.strip()})" if why.strip() else ""
    return Handoff(
        doing=f"继续步骤「{step}」的原任务。上一个会话的上下文满了,没能写出交接文档{reason}。",
        next="先看工作区现状(git status / git log、最近改过的文件、notes/ 下的笔记),"
        "弄清做到了哪里,再接着完成下面「现场」里的原任务;已经做完的不要重做。",
        scene=f"原任务{'(前 1200 字)' if cut else ''}:\n\n{fence}text\n{excerpt}\n{fence}",
        step=step,
        degraded=True,
    )

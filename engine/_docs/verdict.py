"""The judge's verdict for one round: conclusion, reason, failed checks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Self

from engine._docs.sections import MarkdownFile, SectionTable, list_items, numbered
from engine._lang import words

VerdictState = Literal["achieved", "not_yet", "unreachable", ""]

VERDICT_SECTIONS = SectionTable(
    {
        "state": ("结论", "判定", "判定结果", "Verdict", "Conclusion"),
        "reason": ("理由", "原因", "依据", "Reason", "Reasons", "Reasoning", "Rationale"),
        "failed": (
            "未通过", "没通过", "未通过项", "未通过的检查项", "没通过的检查项", "不通过", "失败项",
            "Failed", "Failed checks", "Failing checks", "Not passed",
        ),
    }
)

_STATES = ("achieved", "not_yet", "unreachable")

# Word -> state. The leftmost match in the conclusion wins; at one position the longest word
# wins, so "未达成" is not read as "达成" and "not achieved" not as "achieved".
_WORDS: dict[str, VerdictState] = {
    **dict.fromkeys(
        ["达成", "已达成", "达到", "已达到", "通过", "全部通过", "已完成", "完成", "满足", "合格",
         "achieved", "pass", "passed", "passes", "done", "met", "complete", "completed",
         "success", "succeeded", "satisfied"],
        "achieved",
    ),
    **dict.fromkeys(
        ["未达成", "没达成", "没有达成", "未能达成", "尚未", "还没", "还没有", "未达到", "没达到",
         "未通过", "没通过", "没有通过", "不通过", "未完成", "没完成", "没有完成", "不满足", "未满足",
         "不合格", "不达标", "部分达成", "部分通过", "基本达成", "失败",
         "not yet", "not_yet", "not-yet", "not achieved", "not met", "not passed", "not done",
         "not complete", "not completed", "incomplete", "fail", "failed", "fails", "failing",
         "partially", "partial", "无法通过", "不能通过"],
        "not_yet",
    ),
    # Unverifiable is unreachable, not "passed": a judge in a Linux container once read a macOS
    # branch in the source and passed it. It must stop and ask a person, not loop or pass.
    **dict.fromkeys(
        ["无法达成", "不可达成", "不能达成", "不可能达成", "达不到", "做不到", "无法满足", "不可能", "无法完成",
         "无法验证", "没法验证", "验证不了", "无法判定", "不可验证", "无从验证",
         "unreachable", "impossible", "unachievable", "not achievable", "cannot be achieved",
         "can't be achieved", "unverifiable", "cannot verify", "can't verify", "cannot be verified",
         "can't be verified", "not verifiable", "unable to verify"],
        "unreachable",
    ),
}
_WORD_RE = re.compile(
    "|".join(
        # ASCII words need word boundaries ("pass" is not in "password"); Chinese has none.
        rf"\b{re.escape(w)}\b" if w.isascii() else re.escape(w)
        for w in sorted(_WORDS, key=len, reverse=True)
    ),
    re.IGNORECASE,
)
_BARE_ANSWER = re.compile(r"1|true|0|false")
_BARE = str.maketrans("", "", "*`'\"“”。.!！ \t\n")


@dataclass
class Verdict(MarkdownFile):
    """One round's ruling: ``state`` is "achieved", "not_yet", "unreachable" or "" (ambiguous).

    Callers treat "" as not achieved: a "looks fine" must never end the work. ``unreachable``
    (including "cannot be verified here") leads to asking a person, not to another round.
    """

    state: VerdictState = ""
    reason: str = ""
    failed: list[str] = field(default_factory=list)
    path: Path | None = field(default=None, compare=False)

    @classmethod
    def parse(cls, text: str) -> Self:
        """Recognize the state in the spec's order; never raises.

        1. titled sections «结论»/«判定» give the conclusion text; 2. a bare ``1``/``true`` or
        ``0``/``false`` (whole untitled text, or the conclusion); 3. the leftmost state word,
        longest first, in the conclusion (in the whole text when untitled or the conclusion is
        empty); 4. an isolated ``1`` then ``0``; 5. otherwise "" (``ok`` is False).
        """
        text = text or ""
        p = VERDICT_SECTIONS.parse(text)
        conclusion = p.sections["state"] if p.seen else text
        if not conclusion.strip():
            conclusion = text  # e.g. "## 结论\n**Failed**": the bold word became a heading
        state = _recognize(conclusion)
        # Untitled answers ("Not yet: the build fails on X") are their own reason.
        reason = p.sections["reason"] if p.seen else text.strip()
        if not p.seen and _BARE_ANSWER.fullmatch(text.translate(_BARE).lower()):
            reason = ""
        return cls(state=state, reason=reason, failed=list_items(p.sections["failed"]))

    @property
    def ok(self) -> bool:
        """True when the state was recognized (one of the three known states)."""
        return self.state in _STATES

    @property
    def achieved(self) -> bool:
        """True when the goal is reached."""
        return self.state == "achieved"

    @property
    def unreachable(self) -> bool:
        """True when the goal cannot be reached or verified here: ask a person."""
        return self.state == "unreachable"

    def missing(self) -> list[str]:
        """Titles of what is missing, in the language in effect: "结论" (not recognized) and/or "理由"."""
        titles = words().VERDICT_TITLES
        out = [] if self.ok else [titles["state"]]
        return out + ([] if self.reason.strip() else [titles["reason"]])

    def complete(self) -> bool:
        """True when the state is recognized and a reason is given."""
        return not self.missing()

    def _values(self) -> dict[str, str]:
        return {
            "state": words().VERDICT_LABELS.get(self.state, ""),
            "reason": self.reason,
            "failed": "\n".join(f"- {f}" for f in self.failed),
        }

    def to_markdown(self) -> str:
        """The three ``##`` sections, "(未填)" for empty ones."""
        return VERDICT_SECTIONS.render(self._values(), titles=words().VERDICT_TITLES)

    def prompt_block(self) -> str:
        """The filled sections, for a model that should read the ruling."""
        return VERDICT_SECTIONS.render(self._values(), placeholder=False, titles=words().VERDICT_TITLES).strip()

    def feedback(self) -> str:
        """What the coordinator is told when this verdict rejects a round.

        It says to keep going in the same session on exactly what failed, not to start over.
        """
        w = words()
        parts = [w.FEEDBACK_HEADS.get(self.state, w.FEEDBACK_HEADS[""]) + w.FEEDBACK_GO_ON]
        if self.reason.strip():
            parts.append(w.FEEDBACK_REASON.format(reason=self.reason.strip()))
        if self.failed:
            parts.append(w.FEEDBACK_FAILED.format(failed=numbered(self.failed)))
        return "\n\n".join(parts)


def _recognize(conclusion: str) -> VerdictState:
    bare = conclusion.translate(_BARE).lower()
    if re.fullmatch(r"1|true", bare):
        return "achieved"
    if re.fullmatch(r"0|false", bare):
        return "not_yet"
    m = _WORD_RE.search(conclusion)
    if m:
        return _WORDS[m.group(0).lower()]
    if re.search(r"\b1\b", conclusion):
        return "achieved"
    if re.search(r"\b0\b", conclusion):
        return "not_yet"
    return ""

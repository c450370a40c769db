"""The Q&A log's entries (``问答记录.md``): what each question, answer and parked wait looks like."""

from __future__ import annotations

import re
import time

from engine._human.texts import span
from engine._human.transports import Answer, Question


_ENTRY = re.compile(r"^### Q(\d+) \([^)]*\)\n\n(.*?)(?=^### Q\d+ |\Z)", re.MULTILINE | re.DOTALL)


def numbered(log: str, q: Question) -> tuple[int, bool]:
    """The number ``q`` gets in the log text ``log`` and whether it is logged already.

    Numbers go on from the log's highest (a restarted run keeps counting, never a second Q1).
    The same question as the last entry, still open there (no answer, or closed only because the
    run was stopped or parked), is that entry again: a resumed step asking it anew is not a new
    question.
    """
    entries = list(_ENTRY.finditer(log))
    if not entries:
        return 1, False
    last = entries[-1]
    body = last.group(2)
    open_there = "**A**:" not in body or body.rstrip().endswith("cancelled_") or "parked until" in body
    if body.startswith(q.text.strip() + "\n") and open_there:
        return int(last.group(1)), True
    return max(int(e.group(1)) for e in entries) + 1, False


def question_entry(n: int, q: Question) -> str:
    """``### Q<n> (<time>, <asked by>)``, the question, its numbered options and its default."""
    head = ", ".join(x for x in (time.strftime("%Y-%m-%d %H:%M:%S"), q.asked_by) if x)
    lines = [f"### Q{n} ({head})", "", q.text.strip(), ""]
    if q.options:
        lines += [f"{i}. {o}" for i, o in enumerate(q.options, 1)] + [""]
    if q.default is not None:
        lines += [f"default: {q.default}", ""]
    return "\n".join(lines) + "\n"


def answer_entry(a: Answer, note: str) -> str:
    """``**A**: <answer> — _<who or state>; <note>_``."""
    who = f"answered by {a.by}" if a.answered and a.by else a.state
    detail = "; ".join(x for x in (who, note) if x)
    return f"**A**: {a.text.strip() or '(no answer)'} — _{detail}_\n\n"


def parked_entry(wait: float) -> str:
    """The line written when a question's deadline passed and the run was parked."""
    return f"_(no answer in {span(wait)}: the run is parked until someone answers)_\n\n"

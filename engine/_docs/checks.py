"""Each check of the goal with its state after a verdict: what a checklist shown to people needs.

The judge lists the checks that failed under «未通过» / «Failed», in its own words: by number
("2", "第 2 项", "check 2"), by the check's text, or both. A failed item is matched to a check by
its leading number first, then by text (either contains the other, ignoring case, spaces and
punctuation); an item matching no check is left out (the verdict's reason still says it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from engine._docs.goal import Goal
from engine._docs.verdict import Verdict

CheckStateName = Literal["pending", "passed", "failing", "unverifiable"]
_NUMBER = re.compile(r"^\s*(?:第\s*|check\s*|#\s*|no\.\s*|item\s*)?(\d{1,3})(?:\s*项)?(?=\W|$)", re.IGNORECASE)
_NOISE = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class CheckState:
    """One check of the goal (``number`` from 1, its ``text``) and its ``state``:
    ``pending`` (no verdict yet, or the judge did not say which failed), ``passed``, ``failing``,
    ``unverifiable`` (marked as not checkable here when the goal was set)."""

    number: int
    text: str
    state: CheckStateName


def check_states(goal: Goal, verdict: Verdict | None = None) -> list[CheckState]:
    """The goal's checks in order with their state after ``verdict`` (None: before any)."""
    unverifiable = set(goal.unverifiable())
    failing = _failing(goal.checks, verdict.failed) if verdict is not None else set()
    out = []
    for n, text in enumerate(goal.checks, 1):
        if text in unverifiable:
            state: CheckStateName = "unverifiable"
        elif verdict is None or not verdict.ok:
            state = "pending"
        elif verdict.achieved or n not in failing and failing:
            state = "passed"
        elif n in failing:
            state = "failing"
        else:
            state = "pending"  # not achieved, and the judge named no failed check
        out.append(CheckState(n, text, state))
    return out


def _failing(checks: list[str], failed: list[str]) -> set[int]:
    found: set[int] = set()
    plain = [_NOISE.sub("", c).lower() for c in checks]
    for item in failed:
        m = _NUMBER.match(item)
        if m and 1 <= int(m.group(1)) <= len(checks):
            found.add(int(m.group(1)))
            continue
        said = _NOISE.sub("", item).lower()
        found.update(n for n, c in enumerate(plain, 1) if said and c and (said in c or c in said))
    return found

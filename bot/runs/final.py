"""A run's last word: what its flow's ctx says was done and checked, with the thread's totals.

The coordinator's own report is the work step's result text (ctx ``_results``), the judge's
reason and the failed checks come from the last verdict (``engine.VERDICT_KEY``) against the goal
(``engine.GOAL_KEY``). Totals are the thread's (``bot.runs.tally``), taken once at the run's end so
the status line and the final message show the same cost and elapsed time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.render import messages as render
from bot.runs import tally
from bot.runs.events_view import WORK_STEPS
from engine import GOAL_KEY, VERDICT_KEY, Goal, Verdict, check_states


@dataclass(frozen=True)
class Totals:
    """The thread so far, as of ``at``: every session's ``cost``, the ``rounds`` judged since
    ``/new``, and the time since its first request (``elapsed_s``)."""

    cost: float
    rounds: int
    elapsed_s: float
    at: float


def totals(run_dir: Path, since: float, now: float | None = None) -> Totals:
    """The thread's totals from its manifest (``run_dir``) and first request (``since``). Blocking."""
    at = now or time.time()
    return Totals(tally.thread_cost(run_dir), tally.judged_rounds(run_dir), max(0.0, at - since), at)


def work_report(ctx: dict[str, Any]) -> str:
    """The coordinator's final text: the work step's last result, or "" when it did not run."""
    results = ctx.get("_results") or {}
    for name, result in results.items():
        if name in WORK_STEPS:
            return str(getattr(result, "text", "") or "")
    return ""


def summary_payload(ctx: dict[str, Any], ws: Path | None, sums: Totals, *, reason: str = "",
                    branch: str = "") -> render.Payload:
    """The final message of a finished run (``ctx`` its flow's): achieved or not, what was done,
    how it was checked, what is left, and the thread's totals."""
    goal, verdict = ctx.get(GOAL_KEY), ctx.get(VERDICT_KEY)
    checks = check_states(goal, verdict if isinstance(verdict, Verdict) else None) if isinstance(goal, Goal) else []
    judged = verdict.reason if isinstance(verdict, Verdict) else ""
    return render.summary_message(bool(ctx.get("_ok")), sums.cost, sums.rounds or None, str(ws), reason,
                                  elapsed_s=sums.elapsed_s, report=work_report(ctx), judged=judged,
                                  checks=checks, branch=branch)

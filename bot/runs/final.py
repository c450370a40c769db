"""A run's last word: what its ``RunResult`` says was done and checked, with the thread's totals.

The coordinator's own report, the judge's reason and the checks come typed from the engine
(``engine.RunResult``). Totals are the engine's (``StarterRun.totals``: every session's cost
in the thread, the rounds judged in its request), taken once at the run's end so the status
line and the final message show the same cost and elapsed time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from bot.render import messages as render
from engine import RunResult, StarterRun, check_states


@dataclass(frozen=True)
class Totals:
    """The thread so far, as of ``at``: every session's ``cost``, the ``rounds`` judged since
    ``/new``, and the time since its first request (``elapsed_s``)."""

    cost: float
    rounds: int
    elapsed_s: float
    at: float


def totals(starter: StarterRun, since: float, now: float | None = None) -> Totals:
    """The thread's totals from the engine and its first request (``since``). Blocking."""
    at = now or time.time()
    spent = starter.totals()
    return Totals(spent.thread.cost_usd, spent.request.rounds, max(0.0, at - since), at)


def summary_payload(result: RunResult, sums: Totals, *, reason: str = "",
                    branch: str = "") -> render.Payload:
    """The final message of a finished run: achieved or not, what was done, how it was checked,
    what is left, and the thread's totals."""
    checks = check_states(result.goal, result.verdict) if result.goal is not None else []
    judged = result.verdict.reason if result.verdict is not None else ""
    return render.summary_message(result.ok, sums.cost, sums.rounds or None, reason,
                                  elapsed_s=sums.elapsed_s, report=result.report, judged=judged,
                                  checks=checks, branch=branch)

"""A run's last word: what its ``RunResult`` says was done and checked, with the thread's totals.

The coordinator's own report, the judge's reason and the checks come typed from the engine
(``engine.RunResult``). Totals are the engine's (``StarterRun.totals``): the request's cost,
rounds and time, and the thread's cost once, taken at the run's end so the status line and the
final message show the same figures.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from bot.render import messages as render
from engine import RunResult, StarterRun
from engine.authoring import check_states


@dataclass(frozen=True)
class Totals:
    """The thread's current request so far (from its mention, follow-up or ``/new``), as of
    ``at``: every session's ``cost``, the ``rounds`` judged, its time (``elapsed_s``); and what
    the whole thread has cost (``thread_cost``)."""

    cost: float
    rounds: int
    elapsed_s: float
    at: float
    thread_cost: float = 0.0


def totals(starter: StarterRun, since: float, now: float | None = None) -> Totals:
    """The request's totals from the engine; a thread's first request began at ``since``. Blocking."""
    at = now or time.time()
    spent = starter.totals()
    began = spent.request_began or since
    return Totals(spent.request.cost_usd, spent.request.rounds, max(0.0, at - began), at, spent.thread.cost_usd)


def summary_payload(result: RunResult, sums: Totals, *, reason: str = "", branch: str = "",
                    checklist_link: str = "", heard: Sequence[tuple[str, int | None]] = (),
                    files: Sequence[str] = ()) -> render.Payload:
    """The final message of a finished run: achieved or not, what was done, what became of the
    words ``heard`` during it, the checklist's outcome (linked), what is left, and the totals."""
    checks = check_states(result.goal, result.verdict) if result.goal is not None else []
    judged = result.verdict.reason if result.verdict is not None else ""
    return render.summary_message(result.ok, sums.cost, sums.rounds or None, reason, thread_cost=sums.thread_cost,
                                  elapsed_s=sums.elapsed_s, report=result.report, judged=judged,
                                  checks=checks, branch=branch, checklist_link=checklist_link, heard=heard,
                                  files=files)

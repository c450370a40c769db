"""What ``StarterRun`` tells a front end: the state it wakes in, and how a run ended. Typed.

The spec's ``wake_state()`` and ``Workflow.run`` keep their dicts (they are the spec's API);
``StarterRun`` reads them once and gives these instead, so a front end never looks up a ctx key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine._docs.brief import Brief
from engine._docs.goal import Goal
from engine._docs.verdict import Verdict
from engine._flow.failure import FlowFailure, flow_failure
from engine._flow.steps import BRIEF_KEY, GOAL_KEY, ROUND_KEY, VERDICT_KEY

__all__ = ["RunResult", "WakeState"]


@dataclass(frozen=True)
class WakeState:
    """The workspace before a run starts (read-only): ``waking`` when its requirement is
    confirmed (the work step continues), the documents so far, how many checks the goal has,
    how many wakes the run_dir had (``woke``), the steps' live sessions, and the work step's last
    context size in tokens (``context``, None when unknown)."""

    waking: bool
    brief: Brief | None = None
    goal: Goal | None = None
    checks: int = 0
    woke: int = 0
    steps: dict[str, str] = field(default_factory=dict)
    context: int | None = None

    @property
    def has_history(self) -> bool:
        """Something for ``/new`` to archive: a brief, a goal or a lineage."""
        return self.brief is not None or self.goal is not None or bool(self.woke)

    @classmethod
    def of(cls, state: dict[str, Any], context: int | None) -> WakeState:
        """From the spec's ``wake_state()`` dict."""
        return cls(state["waking"], state["brief"], state["goal"], state["checks"], state["woke"],
                   dict(state["steps"]), context)


@dataclass(frozen=True)
class RunResult:
    """How one run of the starter flow ended: ``ok`` when the goal was achieved; else ``failure``
    says why (an abort, a failed step and its cause, the rounds running out). ``report`` is the
    coordinator's last text, ``rounds`` the rounds judged in this run."""

    ok: bool
    failure: FlowFailure | None = None
    brief: Brief | None = None
    goal: Goal | None = None
    verdict: Verdict | None = None
    report: str = ""
    rounds: int = 0

    @classmethod
    def of(cls, ctx: dict[str, Any], work_step: str) -> RunResult:
        """From the flow's final ctx; ``work_step`` names the step whose text is the report."""
        ok = bool(ctx.get("_ok"))
        result = (ctx.get("_results") or {}).get(work_step)

        def typed(key: str, kind: type) -> Any:
            value = ctx.get(key)
            return value if isinstance(value, kind) else None
        return cls(ok, None if ok else flow_failure(ctx), typed(BRIEF_KEY, Brief), typed(GOAL_KEY, Goal),
                   typed(VERDICT_KEY, Verdict), str(getattr(result, "text", "") or ""), int(ctx.get(ROUND_KEY) or 0))

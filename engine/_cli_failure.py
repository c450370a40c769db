"""Why a ``flower`` run ended without its goal, and what the person can do next.

The engine keeps a failed step's error text and its kind (the API's error code or the SDK's
error) in ``ctx["_results"]``; the last line must say that, not only a step name. Known fatal
causes (a refused key, no credit, no access, an unknown model, no Claude Code) get their fix;
anything else shows the error itself and says that running ``flower`` again continues.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine._cli_texts import say
from engine._run.resilience import fatal_cause

__all__ = ["Failure", "failure"]

DETAIL_CHARS = 300



@dataclass(frozen=True)
class Failure:
    """Why the run did not reach its goal (``reason``) and the person's next move (``next``)."""

    reason: str
    next: str


def _clip(text: str, limit: int = DETAIL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failure(ctx: dict[str, Any], *, rounds: int | None = None) -> Failure:
    """The reason a finished flow's ``ctx`` did not reach the goal: a gate's abort, a failed
    step's cause, or the judge's ``rounds`` running out (the work step ran and never passed)."""
    if ctx.get("_aborted"):
        return Failure(_clip(str(ctx["_aborted"])), say("next_aborted"))
    step = ctx.get("_failed")
    result = ctx.get("_results", {}).get(step) if step else None
    if result is None or result.ok or not (result.error or result.error_kind):
        ran_out = say("rounds_ran_out", rounds=rounds) if rounds else say("rounds_ran_out_any")
        if step and result is None:  # a step that never recorded a result: its name is all we have
            return Failure(say("failed_step", step=step, detail="?"), say("next_retry"))
        return Failure(ran_out, say("next_rounds"))
    detail = _clip(f"{result.error_kind or ''} {result.error or ''}")
    cause = fatal_cause(detail)
    if cause:
        return Failure(say(f"failed_{cause}", detail=detail), say(f"next_{cause}"))
    return Failure(say("failed_step", step=step, detail=detail), say("next_retry"))

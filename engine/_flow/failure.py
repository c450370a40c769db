"""Why a finished flow did not reach its goal, read once from its ctx for every front end.

The ctx keys are the workflow's own (``_aborted``, ``_failed``, ``_results``): a gate gave up
(``aborted``), a step failed with an error (``step``, with the error's cause when it is one a
person can fix: ``engine.authoring.fatal_cause``), or the work ran and the judge never passed it
(``rounds``). The terminal and the Slack bot only put it in their words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from engine._run.resilience import FatalCause, failure_text, fatal_cause

__all__ = ["FlowFailure", "flow_failure"]


@dataclass(frozen=True)
class FlowFailure:
    """``kind``: ``aborted`` (``detail`` is the gate's reason), ``step`` (``step`` failed;
    ``detail`` is "<error kind> <error>" on one line, "" when it recorded no result) or
    ``rounds`` (the judge's rounds ran out)."""

    kind: Literal["aborted", "step", "rounds"]
    step: str = ""
    detail: str = ""
    cause: FatalCause | None = None


def flow_failure(ctx: dict[str, Any]) -> FlowFailure:
    """Why the flow whose final ``ctx`` this is ended without its goal."""
    if ctx.get("_aborted"):
        return FlowFailure("aborted", detail=str(ctx["_aborted"]))
    step = ctx.get("_failed")
    if not step:
        return FlowFailure("rounds")
    result = ctx.get("_results", {}).get(step)
    if result is None:  # a step that never recorded a result: its name is all there is
        return FlowFailure("step", step=str(step))
    if result.ok or not (result.error or result.error_kind):
        return FlowFailure("rounds", step=str(step))  # it ran; its gate (the judge) never passed it
    detail = " ".join(failure_text(result.error, result.error_kind).split())
    return FlowFailure("step", step=str(step), detail=detail, cause=fatal_cause(detail))

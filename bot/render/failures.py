"""Why a run ended without its goal, in words a person can act on.

The engine keeps a failed step's error text and its kind (the API's error code or the SDK's
error); a thread must not say only a step name. Known fatal causes (a refused key, no access,
no credit, an unknown model, no Claude Code) get their fix; anything else shows the error itself.
"""

from __future__ import annotations

from typing import Any

from bot.render import texts
from bot.render.split import clip
from engine import fatal_cause

__all__ = ["failure_reason"]

_SAID = {"auth": texts.FAILED_AUTH, "billing": texts.FAILED_BILLING, "forbidden": texts.FAILED_FORBIDDEN,
         "model": texts.FAILED_MODEL, "cli": texts.FAILED_CLI}


def failure_reason(ctx: dict[str, Any]) -> str:
    """The reason a finished flow did not reach its goal (mrkdwn, outside text escaped by the
    caller's renderer): a gate's abort, a failed step's cause, or the rounds running out."""
    if ctx.get("_aborted"):
        return str(ctx["_aborted"])
    step = ctx.get("_failed")
    if not step:
        return texts.ROUNDS_RAN_OUT
    result = ctx.get("_results", {}).get(step)
    if result is None:
        return str(step)
    if result.ok or not (result.error or result.error_kind):
        return texts.ROUNDS_RAN_OUT  # the step ran, its gate (the judge) never passed it
    detail = clip(" ".join(f"{result.error_kind or ''} {result.error or ''}".split()), 300)
    cause = fatal_cause(detail)
    return (_SAID[cause] if cause else texts.FAILED_STEP).format(step=step, detail=detail)

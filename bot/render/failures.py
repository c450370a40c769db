"""Why a run ended without its goal, in words a person can act on.

The engine keeps a failed step's error text and its kind (the API's error code or the SDK's
error); a thread must not say only a step name. Known fatal causes (a refused key, no access,
no credit, an unknown model, no Claude Code) get their fix; anything else shows the error itself.
"""

from __future__ import annotations

import re
from typing import Any

from bot.render import texts
from bot.render.split import clip

__all__ = ["failure_reason"]

_CAUSES = (  # (pattern on "<kind> <error>", the sentence), the first that matches wins
    (re.compile(r"authentication|\b401\b|invalid (x-)?api[ -]?key|oauth token", re.I), texts.FAILED_AUTH),
    (re.compile(r"billing|credit balance|insufficient[ _-]quota", re.I), texts.FAILED_BILLING),
    (re.compile(r"\b403\b|forbidden|permission[ _-]denied", re.I), texts.FAILED_FORBIDDEN),
    (re.compile(r"model.{0,60}(not[ _-]found|does not exist|unknown|invalid)|not_found_error|"
                r"(unknown|invalid) model", re.I), texts.FAILED_MODEL),
    (re.compile(r"CLINotFound|Claude Code (CLI )?not found|CLIConnectionError", re.I), texts.FAILED_CLI),
)


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
    for pattern, sentence in _CAUSES:
        if pattern.search(detail):
            return sentence.format(step=step, detail=detail)
    return texts.FAILED_STEP.format(step=step, detail=detail)

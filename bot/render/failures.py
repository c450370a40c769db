"""Why a run ended without its goal, in words a person can act on.

``engine.RunResult.failure`` says why the flow ended (an abort, a failed step and its cause, the
rounds running out); this puts it in the thread's words: a thread must not say only a step name. Known fatal causes (a refused key, no access,
no credit, an unknown model, no Claude Code) get their fix; anything else shows the error itself.
"""

from __future__ import annotations

from bot.render import texts
from bot.text.split import clip
from engine import FlowFailure

__all__ = ["failure_reason"]

# names, not sentences: read when said, in the language in effect then
_SAID = {"auth": "FAILED_AUTH", "billing": "FAILED_BILLING", "forbidden": "FAILED_FORBIDDEN",
         "model": "FAILED_MODEL", "cli": "FAILED_CLI"}


def failure_reason(why: FlowFailure) -> str:
    """The reason a finished flow did not reach its goal (``RunResult.failure``; mrkdwn, outside
    text escaped by the caller's renderer): a gate's abort, a failed step's cause, or the rounds
    running out."""
    if why.kind == "aborted":
        return why.detail
    if why.kind == "rounds":
        return texts.ROUNDS_RAN_OUT
    if not why.detail:
        return why.step
    said = getattr(texts, _SAID[why.cause]) if why.cause else texts.FAILED_STEP
    return said.format(step=why.step, detail=clip(why.detail, 300))

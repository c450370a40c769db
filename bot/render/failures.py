"""Why a run ended without its goal, or why a command could not do its work, in words a person
can act on.

``engine.RunResult.failure`` says why the flow ended (an abort, a failed step and its cause, the
rounds running out); this puts it in the thread's words: a thread must not say only a step name. Known fatal causes (a refused key, no access,
no credit, an unknown model, no Claude Code) get their fix; anything else shows the error itself.
"""

from __future__ import annotations

from bot.core.outside_text import outside
from bot.core.split_text import clip
from bot.render import texts
from engine.authoring import FlowFailure

__all__ = ["failure_reason", "refusal", "refusal_reason"]

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


def refusal(doing: str, entry: str, kind: str) -> str:
    """What a command could not do (``doing``, a key of ``REFUSED``) and why (``refusal_reason``),
    as mrkdwn ready to post."""
    said = texts.REFUSED.get(doing, texts.REFUSED["other"])
    return said.format(reason=outside(refusal_reason(entry, kind)))


def refusal_reason(entry: str, kind: str) -> str:
    """Why: ``entry`` in the thread's workspace (named from the thread's folder; "" when unknown) is
    a ``kind`` (a key of ``REFUSED_WHY``) the bot does not follow, and the fix. Plain text for a
    ``Sentence`` (``RUN_FAILED``) to escape; the name is the run's: one line, no backtick, clipped."""
    why = texts.REFUSED_WHY.get(kind, texts.REFUSED_WHY["other"])
    if not entry:
        return texts.REFUSED_REASON_UNNAMED.format(why=why)
    name = " ".join(entry.replace("`", "'").split())  # one line, and no code span ended early
    return texts.REFUSED_REASON.format(why=why, entry=clip(name, 120))

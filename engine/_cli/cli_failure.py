"""Why a ``flower`` run ended without its goal, and what the person can do next.

``engine.authoring.flow_failure`` reads why the flow ended; this says it in the run's language,
with what to do next: the last line must say that, not only a step name. Known fatal
causes (a refused key, no credit, no access, an unknown model, no Claude Code) get their fix;
anything else shows the error itself and says that running ``flower`` again continues.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine._cli.cli_texts import say
from engine.authoring import FlowFailure

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


def failure(why: FlowFailure, *, rounds: int | None = None) -> Failure:
    """Why a finished flow did not reach the goal (``RunResult.failure``) in the run's
    language, with the next move; ``rounds`` is how many the judge was allowed."""
    if why.kind == "aborted":
        return Failure(_clip(why.detail), say("next_aborted"))
    if why.kind == "rounds":
        return Failure(say("rounds_ran_out", rounds=rounds) if rounds else say("rounds_ran_out_any"),
                       say("next_rounds"))
    detail = _clip(why.detail) if why.detail else "?"
    if why.cause:
        return Failure(say(f"failed_{why.cause}", detail=detail), say(f"next_{why.cause}"))
    return Failure(say("failed_step", step=why.step, detail=detail), say("next_retry"))

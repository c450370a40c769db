"""Progress events: how the engine tells a front end (terminal, Slack) what is happening."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

log = logging.getLogger(__name__)

EventKind = Literal[
    "step",  # a workflow step starts: index, total, resumed, woke
    "session",  # the CLI of a step's attempt is up and named its session: session_id
    "turn",  # the main thread finished an assistant message: context (tokens)
    "result",  # the CLI reported a result: cost_usd (cumulative for the step), num_turns
    "retry",  # a retryable failure: attempt, max_attempts, delay_s, kind, error
    "offline",  # waiting for the model endpoint to come back: host, port, waited_s
    "handoff",  # context full: phase near / writing / done (+ used, window, degraded, path)
    "interrupt",  # a person's words interrupted the running step: said
    "task",  # a warning about the task itself, e.g. unverifiable checks in the goal
    "verdict",  # the judge's verdict for a round: state, reason, failed, round
    "wake",  # a workflow continues an earlier run: woke, steps, said
    "ask",  # a question to a person: question, options; then the answer
    "done",  # the workflow ended: ok, reason
]


@dataclass(frozen=True)
class Event:
    """One progress event; ``payload`` keys depend on ``kind`` (see ``EventKind``)."""

    kind: EventKind
    step: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.time)


OnEvent = Callable[[Event], None]


def emit(on_event: OnEvent | None, event: Event) -> None:
    """Deliver ``event``; a failing front end is logged and never stops the run."""
    if on_event is None:
        return
    try:
        on_event(event)
    except Exception:  # a broken status line must not kill an hours-long step
        log.exception("on_event callback failed for %s event", event.kind)

"""Engine events -> what a thread shows: notices posted once, and one status line edited in place.

Pure: ``RunStatus.apply`` folds an ``Event`` into the status and returns the notice to post (or
None); ``RunStatus.payload`` is the status message. Texts and blocks come from ``bot.render.messages``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from bot.render.messages import Payload, StatusState, event_notice, status_message
from engine import Event, ResultReported, StepStarted, TurnEnded, VerdictGiven, WaitingForApi


@dataclass
class RunStatus:
    """What the status message says about one run: step, round, context, cost, elapsed, state."""

    started: float = field(default_factory=time.time)
    step: str = ""
    round: int = 1
    context: int = 0
    cost: float = 0.0
    state: StatusState = "running"
    storm: bool = False  # waiting out a storm of API errors (shown instead of "running")
    _step_cost: dict[str, float] = field(default_factory=dict)

    def apply(self, event: Event) -> Payload | None:
        """Fold ``event`` in; return a notice to post in the thread, or None.

        The round comes from the verdicts: "not yet" (or unclear, counted as not yet) in round N
        means round N + 1 is under way. A new step starts at round 1; the same step again keeps
        the round.
        """
        match event:
            case StepStarted():
                if event.step != self.step:
                    self.round = 1
                self.step = event.step
                return None
            case TurnEnded():
                self.context = event.context or self.context
                return None
            case ResultReported():
                self._step_cost[event.step] = event.cost_usd  # cumulative per step
                self.cost = sum(self._step_cost.values())
                return None
            case VerdictGiven():
                self.round = event.round + 1 if event.state in ("not_yet", "unclear") else event.round
            case WaitingForApi():
                self.storm = event.phase == "waiting"
        return event_notice(event)

    def payload(self, thread: str, now: float | None = None) -> Payload:
        """The status message; ``thread`` is the value its Stop / Start over buttons carry."""
        return status_message(step=self.step, round=self.round, context_tokens=self.context or None,
                              cost_usd=self.cost, elapsed_s=(now or time.time()) - self.started,
                              state="waiting_api" if self.storm and self.state == "running" else self.state,
                              thread=thread)

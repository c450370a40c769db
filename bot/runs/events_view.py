"""Engine events -> what a thread shows: notices posted once, and one status line edited in place.

Pure: ``RunStatus.apply`` folds an ``Event`` into the status and returns the notice to post (or
None); ``RunStatus.payload`` is the status message. Texts and blocks come from ``bot.render.messages``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from bot.render.messages import Payload, StatusState, event_payload, status_message
from engine import Event

_ROUND = re.compile(r"#round(\d+)")


@dataclass
class RunStatus:
    """What the status message says about one run: step, round, context, cost, elapsed, state."""

    started: float = field(default_factory=time.time)
    step: str = ""
    round: int = 1
    context: int = 0
    cost: float = 0.0
    state: StatusState = "running"
    _step_cost: dict[str, float] = field(default_factory=dict)

    def apply(self, event: Event) -> Payload | None:
        """Fold ``event`` in; return a notice to post in the thread, or None."""
        p = event.payload
        if event.kind == "step":
            m = _ROUND.search(event.step)
            if m:
                self.round = int(m.group(1))
            elif event.step.split("#")[0] != self.step.split("#")[0]:
                self.round = 1  # a new step; the same step again keeps the round a verdict set
            self.step = event.step
            return None
        if event.kind == "turn":
            self.context = int(p.get("context") or self.context)
            return None
        if event.kind == "result":
            self._step_cost[event.step] = float(p.get("cost_usd") or 0.0)  # cumulative per step
            self.cost = sum(self._step_cost.values())
            return None
        if event.kind == "verdict" and p.get("state") == "not_yet":
            self.round = int(p.get("round") or self.round) + 1
        return event_payload(event.kind, p)

    def payload(self, thread: str, now: float | None = None) -> Payload:
        """The status message; ``thread`` is the value its Stop / Start over buttons carry."""
        return status_message(step=self.step, round=self.round, context_tokens=self.context or None,
                              cost_usd=self.cost, elapsed_s=(now or time.time()) - self.started,
                              state=self.state, thread=thread)

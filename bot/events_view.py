"""Engine events -> what a thread shows: notices posted once, and one status line edited in place.

Pure: ``RunStatus.apply`` folds an ``Event`` into the status and returns the notice text to post
(or None). The bot posts and edits; this module never talks to Slack.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from engine.cli_view import human_tokens
from engine.core.events import Event

_ROUND = re.compile(r"#round(\d+)")
VERDICT_WORDS = {"achieved": "achieved", "not_yet": "not yet", "unreachable": "unreachable"}


def elapsed(seconds: float) -> str:
    """``75`` -> ``1m15s``; ``3700`` -> ``1h01m``; under a minute -> ``42s``."""
    s = int(max(0, seconds))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


@dataclass
class RunStatus:
    """What the status message says about one run: step, round, context, cost, elapsed, state."""

    started: float = field(default_factory=time.time)
    step: str = ""
    round: int = 1
    context: int = 0
    cost: float = 0.0
    state: str = "running"  # running / done / stopped / failed
    _step_cost: dict[str, float] = field(default_factory=dict)

    def apply(self, event: Event) -> str | None:
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
        return notice(event)

    def text(self, now: float | None = None) -> str:
        """The status line: ``:hourglass: 干活 · round 2 · context 12.3K · $0.04 · 1m05s``."""
        icon = {"running": ":hourglass_flowing_sand:", "done": ":white_check_mark:",
                "stopped": ":black_square_for_stop:", "failed": ":x:"}.get(self.state, ":grey_question:")
        parts = [self.step or "starting", f"round {self.round}"]
        if self.context:
            parts.append(f"context {human_tokens(self.context)}")
        parts += [f"${self.cost:.2f}", elapsed((now or time.time()) - self.started)]
        return f"{icon} {self.state} · " + " · ".join(parts)


def notice(event: Event) -> str | None:
    """The thread notice for a progress event worth a message, or None."""
    p = event.payload
    if event.kind == "verdict":
        failed = "".join(f"\n• {f}" for f in p.get("failed", []))
        word = VERDICT_WORDS.get(p.get("state", ""), p.get("state", ""))
        return f":scales: Verdict #{p.get('round', '?')}: *{word}*. {p.get('reason', '')}".rstrip() + failed
    if event.kind == "retry":
        return (f":warning: The model is unavailable (attempt {p.get('attempt')}/{p.get('max_attempts')}); "
                f"retrying the same session in {float(p.get('delay_s', 0)):.0f}s.")
    if event.kind == "offline":
        return f":warning: Cannot reach {p.get('host')}:{p.get('port')} for {float(p.get('waited_s', 0)):.0f}s; still waiting."
    if event.kind == "handoff":
        phase = p.get("phase")
        if phase == "writing":
            return f":memo: Context full ({human_tokens(int(p.get('used', 0)))}); writing a handoff document."
        if phase == "done":
            tag = " (degraded)" if p.get("degraded") else ""
            return f":memo: Handoff done{tag}; a new session takes over."
        return None
    if event.kind == "task" and p.get("unverifiable"):
        return (f":warning: {len(p['unverifiable'])}/{p.get('total')} checks of the goal cannot be verified "
                f"here; see {p.get('path')}.")
    return None

"""What a runtime has spent, as it happens, and the front end's limit on it.

The CLI prices a session only in its results (``total_cost_usd``), once per turn; a coordinator
whose workers run in the background can spend for minutes between two results. So every
assistant message's usage (the main thread's and every worker's) is priced here as it arrives,
and the estimate is replaced by the CLI's own figure at each result. A ``SpendGuard`` (the front
end's: a request's, a thread's, a channel's limit) is asked at every message and before every
step; the reason it returns stops the step at that message boundary, never mid-write.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["SPEND_LIMIT", "SpendGuard", "SpendMeter", "estimate_usd"]

SPEND_LIMIT = "spend_limit"  # the error kind of a step a guard stopped (fatal: no retry helps)

# The guard: given what this runtime has spent so far (US dollars), a reason to stop, or None.
SpendGuard = Callable[[float], "str | None"]

# US dollars per million tokens: input, output, cache write (5 min), cache read. Anthropic's list
# prices; a model not listed is priced as Sonnet (an estimate only: each result corrects it).
_PRICES: tuple[tuple[str, tuple[float, float, float, float]], ...] = (
    ("opus-4-1", (15.0, 75.0, 18.75, 1.50)),  # the older Opus models cost three times the newer
    ("opus-4-2025", (15.0, 75.0, 18.75, 1.50)),
    ("3-opus", (15.0, 75.0, 18.75, 1.50)),
    ("opus", (5.0, 25.0, 6.25, 0.50)),
    ("haiku-4", (1.0, 5.0, 1.25, 0.10)),
    ("haiku", (0.80, 4.0, 1.0, 0.08)),
    ("sonnet", (3.0, 15.0, 3.75, 0.30)),
)
_DEFAULT = (3.0, 15.0, 3.75, 0.30)


def estimate_usd(model: str, usage: Mapping[str, Any] | None) -> float:
    """The list price of one API call's ``usage`` on ``model``."""
    if not usage:
        return 0.0
    name = (model or "").lower()
    rates = next((p for key, p in _PRICES if key in name), _DEFAULT)
    counts = [int(usage.get(k) or 0) for k in
              ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    return sum(n * rate for n, rate in zip(counts, rates)) / 1_000_000


def _written_tokens(content: Any) -> int:
    """About how many tokens a message's blocks took to write (4 characters a token): the CLI
    hands a message on before the API has counted its output."""
    return sum(len(str(getattr(b, "text", "") or getattr(b, "input", "") or getattr(b, "thinking", "")))
               for b in content or []) // 4


class SpendMeter:
    """One runtime's spend: ``settled`` (the CLI's results) plus ``pending`` (calls priced since
    the last result), and the guard asked about it; ``why`` is its reason once it stopped a step."""

    def __init__(self, guard: SpendGuard | None = None) -> None:
        self.guard, self.settled, self.pending, self.why = guard, 0.0, 0.0, ""
        # per API call since the last result: (model, usage, tokens its blocks wrote); the CLI
        # sends one message per content block, each with the call's usage so far
        self._calls: dict[str, tuple[str, dict[str, Any], int]] = {}
        self._attempt = 0.0  # what the current attempt's results have settled

    @property
    def total(self) -> float:
        return self.settled + self.pending

    def stopped(self) -> bool:
        """Before a step (and each attempt of it): True when the guard says stop (``why`` says why)."""
        self.why = self.why or (self.check() or "")
        return bool(self.why)

    def attempt(self) -> None:
        """A new CLI process: its results count from zero."""
        self._attempt = 0.0

    def message(self, msg: Any) -> str | None:
        """An assistant message arrived (main thread or worker; an SDK ``AssistantMessage``):
        its call priced (its output at least what its blocks wrote), then the guard asked;
        ``SPEND_LIMIT`` (the attempt's stop reason) when it says stop."""
        key = msg.message_id or f"#{len(self._calls)}"
        model, usage, written = self._calls.get(key, (msg.model, {}, 0))
        usage = {**usage, **(msg.usage or {})}
        self._calls[key] = (model, usage, written + _written_tokens(msg.content))
        self.pending = sum(estimate_usd(m, {**u, "output_tokens": max(int(u.get("output_tokens") or 0), w)})
                           for m, u, w in self._calls.values())
        self.why = self.why or (self.check() or "")
        return SPEND_LIMIT if self.why else None

    def result(self, attempt_cost_usd: float) -> None:
        """The attempt's results so far (the CLI's own figures): they replace the estimate."""
        self.settled += attempt_cost_usd - self._attempt
        self._attempt, self.pending = attempt_cost_usd, 0.0
        self._calls.clear()

    def check(self) -> str | None:
        """The guard's reason to stop now, or None (always None without a guard)."""
        return self.guard(self.total) if self.guard is not None else None

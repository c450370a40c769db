"""Matchers that tell the engine's roles apart in a request, by the first sentence of their rules
text in either language (``engine._lang``), so a scripted conversation follows each role's own
script whatever language the run speaks."""

from __future__ import annotations

from engine._lang import en, zh
from engine.testing.match import Match, system_contains


def _marker(rules: str) -> str:
    return rules.splitlines()[0].split("。")[0].split(". ")[0].split(":")[0]


def _role(attribute: str) -> Match:
    first, second = (system_contains(_marker(getattr(t, attribute))) for t in (zh, en))
    return first | second


CLARIFIER = _role("CLARIFY_RULES")
JUDGE = _role("JUDGE_RULES")
COORDINATOR = _role("COORDINATOR_RULES")
WORKER = _role("WORKER_RULES")

"""Matchers that tell the engine's roles apart in a request, by the first line of their rules
text (engine._agents.rules), so a scripted conversation follows each role's own script."""

from __future__ import annotations

from engine._agents.rules import CLARIFY_RULES, COORDINATOR_RULES, JUDGE_RULES, WORKER_RULES
from engine.testing.match import system_contains


def _marker(rules: str) -> str:
    return rules.splitlines()[0].split("。")[0]


CLARIFIER = system_contains(_marker(CLARIFY_RULES))
JUDGE = system_contains(_marker(JUDGE_RULES))
COORDINATOR = system_contains(_marker(COORDINATOR_RULES))
WORKER = system_contains(_marker(WORKER_RULES))

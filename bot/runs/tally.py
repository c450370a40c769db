"""A thread's running totals across its runs: cost, judged rounds and follow-ups, read from disk.

Cost is every session's cost in the engine's ``runs/manifest.json`` (clarifier, goal setter,
judge, coordinator with its workers; every process of the run_dir, follow-ups and restarts
included), so the status line, the final message and the banners show one number. Rounds are
the judge's finished sessions since the last ``/new``; follow-ups are the person's words that
woke a finished run, counted from 1. Both offsets live in the bot's own ``bot-tally.json`` in
the run_dir (the engine counts rounds per process and knows no follow-ups).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from engine.host import MANIFEST_FILE, read_manifest, write_json_atomic

TALLY_FILE = "bot-tally.json"
# A judge's manifest label is its own name plus "#<round>" ("work · judge#2"); a step's retries and
# rounds are "#retry<N>" / "#round<N>": the judge is told apart by the bare number, in any language.
_JUDGE_LABEL = re.compile(r".+#(\d+)")

__all__ = ["TALLY_FILE", "Tally", "count_follow_up", "follow_ups", "judged_rounds", "manifest_rows", "reset",
           "thread_cost"]


@dataclass
class Tally:
    """The bot's offsets: judge sessions before the last ``/new`` (``rounds_before``), and the
    follow-ups since it (``follow_ups``)."""

    rounds_before: int = 0
    follow_ups: int = 0


def manifest_rows(run_dir: Path) -> list[dict[str, Any]]:
    """The manifest's rows; ``[]`` when it is missing or unreadable (a run not begun yet)."""
    return read_manifest(run_dir / MANIFEST_FILE)


def thread_cost(run_dir: Path) -> float:
    """The sum of every manifest row's ``cost_usd``: what the thread has cost so far."""
    total = 0.0
    for row in manifest_rows(run_dir):
        value = row.get("cost_usd")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            total += float(value)
    return total


def _judged(run_dir: Path) -> int:
    return sum(1 for r in manifest_rows(run_dir)
               if r.get("ok") and _JUDGE_LABEL.fullmatch(str(r.get("step", ""))))


def _load(run_dir: Path) -> Tally:
    try:
        raw = json.loads((run_dir / TALLY_FILE).read_text(encoding="utf-8"))
        return Tally(int(raw.get("rounds_before", 0)), int(raw.get("follow_ups", 0)))
    except (OSError, ValueError, TypeError, AttributeError):
        return Tally()


def judged_rounds(run_dir: Path) -> int:
    """Rounds the judge has given a verdict on since the last ``/new`` (a killed judge is not one)."""
    return max(0, _judged(run_dir) - _load(run_dir).rounds_before)


def count_follow_up(run_dir: Path) -> int:
    """Count one more follow-up and return its number (1 for the first since the last ``/new``)."""
    tally = _load(run_dir)
    tally.follow_ups += 1
    write_json_atomic(run_dir / TALLY_FILE, asdict(tally))
    return tally.follow_ups


def follow_ups(run_dir: Path) -> int:
    """How many follow-ups were counted since the last ``/new``."""
    return _load(run_dir).follow_ups


def reset(run_dir: Path) -> None:
    """``/new``: rounds count from 1 again and no follow-up is counted (cost keeps counting)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(run_dir / TALLY_FILE, asdict(Tally(rounds_before=_judged(run_dir))))

"""A thread's follow-ups: the person's words that woke a finished run, counted from 1 since ``/new``.

The engine counts cost and judged rounds (``StarterRun.totals``); a follow-up is the bot's own
idea (the wake banner numbers it), kept in ``bot-tally.json`` in the run_dir.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from engine.host import write_json_atomic

log = logging.getLogger(__name__)

TALLY_FILE = "bot-tally.json"

__all__ = ["TALLY_FILE", "count_follow_up", "follow_ups", "reset"]


def follow_ups(run_dir: Path) -> int:
    """How many follow-ups were counted since the last ``/new``."""
    try:
        return int(json.loads((run_dir / TALLY_FILE).read_text(encoding="utf-8")).get("follow_ups", 0))
    except FileNotFoundError:
        return 0
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        log.warning("%s is unreadable (%s): follow-ups count from 1 again", run_dir / TALLY_FILE, exc)
        return 0


def count_follow_up(run_dir: Path) -> int:
    """Count one more follow-up and return its number (1 for the first since the last ``/new``)."""
    n = follow_ups(run_dir) + 1
    write_json_atomic(run_dir / TALLY_FILE, {"follow_ups": n})
    return n


def reset(run_dir: Path) -> None:
    """``/new``: no follow-up is counted any more."""
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(run_dir / TALLY_FILE, {"follow_ups": 0})

"""What a run_dir has spent and judged, per thread and per request, read from the manifest.

Cost is every session's ``cost_usd`` in ``runs/manifest.json`` (clarifier, goal setter, judge,
coordinator with its workers; every process of the run_dir, restarts included); rounds are the
judge's finished sessions. The thread's totals never go back; a request's count from the
moment it began (``begin_request``, which ``/new`` calls), kept in ``totals.json`` beside the
manifest as the thread's totals at that moment.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from engine._files import write_json_atomic
from engine._run.manifest import MANIFEST_FILE, read_manifest

log = logging.getLogger(__name__)

TOTALS_FILE = "totals.json"
# A manifest written before rows named their role: a judge's label is its name plus "#<round>".
_OLD_JUDGE_LABEL = re.compile(r".+#\d+")

__all__ = ["TOTALS_FILE", "Spend", "Totals", "begin_request", "totals"]


@dataclass(frozen=True)
class Spend:
    """Money spent (every session's, US dollars) and rounds the judge gave a verdict on."""

    cost_usd: float = 0.0
    rounds: int = 0

    def __sub__(self, other: Spend) -> Spend:
        return Spend(max(0.0, self.cost_usd - other.cost_usd), max(0, self.rounds - other.rounds))


@dataclass(frozen=True)
class Totals:
    """A run_dir's spend: the ``thread``'s since its first request, the ``request``'s since it
    began (at ``request_began``, epoch seconds; None while the thread is on its first request)."""

    thread: Spend
    request: Spend
    request_began: float | None = None


def _cost(row: dict[str, Any]) -> float:
    value = row.get("cost_usd")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _judged(row: dict[str, Any]) -> bool:
    """A judge's finished session (a killed judge gave no verdict)."""
    if not row.get("ok"):
        return False
    role = row.get("role")
    return role == "judge" if role is not None else bool(_OLD_JUDGE_LABEL.fullmatch(str(row.get("step", ""))))


def _thread(run_dir: Path) -> Spend:
    rows = read_manifest(run_dir / MANIFEST_FILE)
    return Spend(sum(_cost(r) for r in rows), sum(1 for r in rows if _judged(r)))


def _began(run_dir: Path) -> tuple[Spend, float | None]:
    try:
        raw = json.loads((run_dir / TOTALS_FILE).read_text(encoding="utf-8"))
        at = raw.get("at")
        return (Spend(float(raw.get("cost_usd", 0.0)), int(raw.get("rounds", 0))),
                float(at) if isinstance(at, (int, float)) else None)
    except FileNotFoundError:
        return Spend(), None  # no request began since the first: the thread's first request
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        log.warning("%s is unreadable (%s): the request's totals count from the thread's start",
                    run_dir / TOTALS_FILE, exc)
        return Spend(), None


def totals(run_dir: str | Path) -> Totals:
    """The run_dir's totals now; zeros before any step ran. Reads two small files."""
    run_dir = Path(run_dir)
    thread = _thread(run_dir)
    began, at = _began(run_dir)
    return Totals(thread, thread - began, at)


def begin_request(run_dir: str | Path) -> None:
    """A new request begins now: its cost and rounds count from 0 (the thread's go on)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(run_dir / TOTALS_FILE, {**asdict(_thread(run_dir)), "at": time.time()})

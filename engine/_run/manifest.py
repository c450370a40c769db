"""Step results and ``runs/manifest.json``, the run manifest shared by every process of a run_dir.

Each row is every ``StepResult`` field plus ``duration_s`` (a property, which ``asdict`` misses)
and ``run`` (the process mark ``YYYYmmdd-HHMMSS-<6 hex>``). Writing appends: the file is re-read
and de-duplicated on ``run`` (this process's rows are replaced by the newest, other processes'
rows stay), under a file lock, so parallel ``flower`` processes on one run_dir keep each other's
rows. It is the only place to find a step's session id afterwards.
"""

from __future__ import annotations

import fcntl
import json
import logging
import secrets
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

from engine._files import write_json_atomic

log = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.json"


@dataclass
class StepResult:
    """All the accounting of one finished step (one ``Runtime.run`` call)."""

    step: str
    session_id: str | None = None
    ok: bool = False
    cost_usd: float = 0.0
    num_turns: int = 0
    text: str = ""
    error: str | None = None
    # What kind of failure ``error`` is, for a front end to say why without matching text: the
    # API's error code (authentication_failed, rate_limit, server_error, ...), the CLI result's
    # subtype (error_max_turns, ...) or the SDK's error class (CLINotFoundError, ...).
    error_kind: str | None = None
    started_at: float = 0.0
    ended_at: float = 0.0
    attempts: int = 1
    errors: list[str] = field(default_factory=list)
    resumed: bool = False
    retired: list[str] = field(default_factory=list)
    context: int = 0

    @property
    def duration_s(self) -> float:
        end = self.ended_at or time.time()
        return round(end - self.started_at, 3) if self.started_at else 0.0


def new_run_id() -> str:
    """A process mark: ``YYYYmmdd-HHMMSS-<6 hex>``."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def read_manifest(path: str | Path) -> list[dict[str, Any]]:
    """The manifest's rows; ``[]`` when the file is missing or not a JSON array."""
    try:
        rows = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


class Manifest:
    """This process's rows in ``<run_dir>/manifest.json``, rewritten in full on every ``write``."""

    def __init__(self, path: str | Path, run: str | None = None) -> None:
        self.path = Path(path)
        self.run = run or new_run_id()

    def row(self, result: StepResult) -> dict[str, Any]:
        return {**asdict(result), "duration_s": result.duration_s, "run": self.run}

    def write(self, results: list[StepResult]) -> None:
        """Replace this run's rows with ``results``, keeping every other run's rows.

        An OSError is logged, not raised: losing a manifest row must not lose the step's work.
        """
        try:
            with _locked(self.path):
                others = [r for r in read_manifest(self.path) if r.get("run") != self.run]
                write_json_atomic(self.path, others + [self.row(r) for r in results])
        except OSError as exc:
            log.warning("could not write %s (%s)", self.path, exc)

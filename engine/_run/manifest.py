"""Step results and ``runs/manifest.json``, the run manifest shared by every process of a run_dir.

Each row is every ``StepResult`` field plus ``duration_s`` (a property, which ``asdict`` misses)
and ``run`` (the process mark ``YYYYmmdd-HHMMSS-<6 hex>``). Writing appends: the file is re-read
and de-duplicated on ``run`` (this process's rows are replaced by the newest, other processes'
rows stay), under a file lock, so parallel ``flower`` processes on one run_dir keep each other's
rows. It is the only place to find a step's session id afterwards.

The lock is waited on for a bounded time (``LOCK_WAIT_S``; ``lock_wait`` shortens it, as the
signal rescue does): a holder keeps it for milliseconds, so a longer wait means a stuck process,
and losing one row (logged) is better than hanging every later run behind it. The kernel drops a
dead holder's ``flock``.
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
LOCK_WAIT_S = 30.0
_POLL_S = 0.02
_wait_s = [LOCK_WAIT_S]  # the current bound; lock_wait() changes it for a block


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
    role: str = "step"  # the step itself, or the "judge" of one (``engine._events.Label``)
    round: int | None = None  # the step's round, or the round its judge judged

    @property
    def duration_s(self) -> float:
        end = self.ended_at or time.time()
        return round(end - self.started_at, 3) if self.started_at else 0.0


def new_run_id() -> str:
    """A process mark: ``YYYYmmdd-HHMMSS-<6 hex>``."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


@contextmanager
def lock_wait(seconds: float) -> Iterator[None]:
    """Wait at most ``seconds`` for the manifest lock in this block (the signal rescue: 1 s)."""
    old = _wait_s[0]
    _wait_s[0] = seconds
    try:
        yield
    finally:
        _wait_s[0] = old


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold ``<path>.lock``; ``TimeoutError`` (an OSError) past the current wait bound."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_name(path.name + ".lock")
    with open(lock_path, "a") as lock:
        deadline = time.monotonic() + _wait_s[0]
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"{lock_path} stayed locked for {_wait_s[0]:g}s: another process is stuck "
                        "holding it; stop that process (this row is not written)") from None
                time.sleep(_POLL_S)
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

"""One live run per workspace: the run holds an exclusive ``flock`` on ``<run_dir>/run.lock``.

Two runs in one workspace (a bot's and a terminal's ``flower``, or two bot processes) would both
resume the same sessions and write the same files. The kernel drops the lock when the holder dies,
``kill -9`` included, so a crash never leaves a workspace locked. The file names the holder's pid,
for the error a second run meets.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from engine._errors import FlowerError

LOCK_FILE = "run.lock"


class WorkspaceBusyError(FlowerError, RuntimeError):
    """Another live run holds this workspace."""


@contextlib.contextmanager
def run_lock(run_dir: str | Path) -> Iterator[None]:
    """Hold ``run_dir``'s lock for the block; raise ``WorkspaceBusyError`` at once when another
    process (or another run in this one) holds it."""
    path = Path(run_dir) / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # not inherited by the CLI (close-on-exec)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            raise WorkspaceBusyError(
                f"another run is working in {path.parent.parent} (process {holder}, lock {path}). "
                "Wait for it to finish or stop it, then start this one again.") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        yield
    finally:
        os.close(fd)  # closing drops the lock

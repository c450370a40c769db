"""A command stopped by a run's file the bot does not follow, named so a person can remove it.

The run writes anything in its workspace; host code reaches it through ``engine.host.beneath``,
which refuses a symlink (``UnsafePath``) and never opens a FIFO or a file as a folder
(``NotADirectoryError``). The refusal holds, but a person waits for an answer: ``refusing`` turns
it into ``RunFilesRefused`` (what could not be done, which entry is in the way, named from the
thread's folder and never as a host path), and the intake's error boundary says it in the thread.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.errors import Doing, Kind, RunFilesRefused
from engine import StarterRun, UnsafePath

__all__ = ["in_the_way", "in_the_workbench", "refusing"]


@contextmanager
def refusing(doing: Doing, anchor: Path, path: Path) -> Iterator[None]:
    """Raise ``RunFilesRefused`` for a refusal met inside (a link, or a FIFO or file where a
    folder must be), naming the first entry on the way from ``anchor`` down to ``path`` that is
    not a folder. Any other error passes as it is."""
    try:
        yield
    except OSError as exc:
        if not (isinstance(exc, UnsafePath) or exc.errno in (errno.ENOTDIR, errno.ELOOP)):
            raise
        entry, kind = in_the_way(anchor, path) or ("", "link" if exc.errno == errno.ELOOP else "other")
        raise RunFilesRefused(doing, entry, kind) from exc


def in_the_way(anchor: Path, path: Path) -> tuple[str, Kind] | None:
    """The first entry below ``anchor`` on the way to ``path`` that exists and is not a folder,
    relative to ``anchor``, and what it is; None when there is none. Only ``lstat`` is used: no
    link is followed past the one found, nothing is opened (a FIFO cannot block it)."""
    here = Path(anchor)
    for part in Path(path).relative_to(anchor).parts:
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except OSError:
            return None
        if not stat.S_ISDIR(mode):
            kind: Kind = "link" if stat.S_ISLNK(mode) else "fifo" if stat.S_ISFIFO(mode) else "other"
            return str(here.relative_to(anchor)), kind
    return None


def in_the_workbench(starter: StarterRun) -> tuple[str, Kind] | None:
    """``in_the_way`` for each folder of the run's workbench: a run cannot start on a link or FIFO
    there (the engine refuses it, or fails on a path it resolves, naming host paths)."""
    wb = starter.paths.workbench
    for folder in (wb.scripts, wb.artifacts, wb.notes, wb.spill, wb.inbox, wb.outbox):
        if (found := in_the_way(wb.anchor, folder)) is not None:
            return found
    return None

"""A thread's request as the person wrote it, kept in its run_dir: the one place that reads it.

A restart redoes an unfinished clarify from it, words for a run stopped while confirming the
requirement leave it as it was, and ``/new`` moves it into the archive with the brief.
"""

from __future__ import annotations

from pathlib import Path

from bot.core.thread import run_dir
from engine.host import beneath, write_text_atomic

ASK_FILE = "bot-ask.txt"

__all__ = ["ASK_FILE", "SavedRequest"]


class SavedRequest:
    """The request file of thread folder ``ws`` (in its run_dir: the bot's, unreadable to the run)."""

    def __init__(self, ws: Path) -> None:
        self.folder = run_dir(ws)
        self.path = self.folder / ASK_FILE

    def text(self) -> str:
        """The saved request, or "" when there is none (never asked, or archived by ``/new``)."""
        return self.path.read_text(encoding="utf-8") if self.path.exists() else ""

    def save(self, ask: str) -> None:
        write_text_atomic(self.path, ask)

    def keep_first(self, ask: str) -> bool:
        """Save ``ask`` now when no request is saved yet: a thread's first request is on disk before
        its run begins, so a kill before then leaves a restart something to redo. Any later
        request is saved by the run, which knows whether it replaces this one (``ThreadRun.prepare``).
        True when ``ask`` was saved now: it is the thread's request, not words for a stopped run."""
        if ask and not self.path.exists():
            self.save(ask)
            return True
        return False

    def archive(self, anchor: Path, into: Path) -> None:
        """Move it into ``into``, an archive folder in the agent's workbench under ``anchor`` (no
        link the agent made there is followed)."""
        beneath.move(anchor, self.path, into / ASK_FILE, src_anchor=self.folder)

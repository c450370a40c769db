"""What one start of a thread's run is, decided once where the start comes from, as a value.

Built by the intake for what people say (a new thread's request, ``/new``, a reply no run takes),
by ``Jobs`` for a restart, a takeover, a take-up and the words kept while a run ended, and by the
pull-request loop for a review's follow-up (a reply, from the forge). ``Jobs.start`` takes it, and
the run keeps it (``ThreadRun.start``); what only the thread's files can tell (a follow-up of a
finished request, words for a run stopped while confirming the requirement) the run reads there.

The request as the person wrote it (``SavedRequest``), kept in the thread's run_dir: the one place that reads it. A restart redoes an unfinished clarify from it, words for a run stopped while confirming the requirement leave it as it was, and ``/new`` moves it into the archive with the brief.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bot.core.thread import run_dir
from engine import Image
from engine.host import beneath, write_text_atomic

__all__ = ["ASK_FILE", "SavedRequest", "Start", "StartKind"]

# request: a thread's first request (a mention in a new thread); new: ``/new`` with words (the last
# run was archived); reply: words in a known thread that no run is taking (a follow-up, words for a
# stopped run, the same request going on after a spend limit); resume: no words, the run goes on
# where it stopped (after a restart or a takeover, or once its question is answered or Go on pressed)
StartKind = Literal["request", "new", "reply", "resume"]


@dataclass(frozen=True)
class Start:
    """One start: its ``kind``, the ``words`` said (none for a resume), ``by`` whom ("" the
    thread's creator), the ``images`` shared with them (the models see them; a restart sees only
    their names), and where it is said: ``ack_key`` the outbox key of the request's
    acknowledgement (it becomes the status line), ``status_ts`` the status message a resumed run
    keeps editing, ``banner_key`` what keys a resumed run's wake banner, ``restart_notice`` (the
    thread row's ``updated_at``) when the thread hears that a restart resumed it."""

    kind: StartKind
    words: str = ""
    by: str = ""
    images: tuple[Image, ...] = ()
    ack_key: str | None = None
    status_ts: str | None = None
    banner_key: str | None = None
    restart_notice: float | None = None

    @classmethod
    def request(cls, words: str, *, by: str = "", images: Sequence[Image] = (), ack_key: str | None = None,
                new: bool = False) -> Start:
        """A new request from a message: a thread's first, or ``/new``'s (``new``)."""
        return cls("new" if new else "request", words, by, tuple(images), ack_key=ack_key)

    @classmethod
    def reply(cls, words: str, *, by: str = "", images: Sequence[Image] = ()) -> Start:
        """Words in a known thread that no run is taking."""
        return cls("reply", words, by, tuple(images))

    @classmethod
    def resume(cls, *, status_ts: str | None, banner_key: str, restart_notice: float | None = None) -> Start:
        """The thread's run again where it stopped, editing its status message ``status_ts``."""
        return cls("resume", status_ts=status_ts, banner_key=banner_key, restart_notice=restart_notice)

    @property
    def new(self) -> bool:
        """``/new``: the request is saved anew, a bound thread opens a fresh branch, no wake banner."""
        return self.kind == "new"

    @property
    def resumed(self) -> bool:
        """No words: the run goes on from its saved request or its wake state."""
        return self.kind == "resume"


# -- The request as the person wrote it (``SavedRequest``), kept in the thread's run_dir ----------------------------------------
ASK_FILE = "bot-ask.txt"


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

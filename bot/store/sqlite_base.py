"""One SQLite connection to ``bot.db``, used from worker threads one operation at a time.

The engine's ``SqliteFile`` plumbing, as under ``SqliteSessionStore``: a stdlib ``sqlite3``
connection opened lazily, each operation run whole in a worker thread under a lock; other processes are kept out by SQLite (WAL, busy timeout, ``BEGIN
IMMEDIATE`` for every read-then-write). No asyncio lock, so the store works from any loop, and
``close()`` is an ordinary call.

The file is also checked to still be the one first opened, before every operation: an open
connection to a deleted (or replaced) ``bot.db`` goes on working on a file nobody will read again,
so every thread the bot knows would be forgotten at its next start without a word.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from bot.errors import StoreVanished
from bot.store.core import StoreCore
from bot.store.schema import connect
from engine.host import SqliteFile, immediate

__all__ = ["BUSY_TIMEOUT_S", "StoreBase"]

T = TypeVar("T")
log = logging.getLogger(__name__)

BUSY_TIMEOUT_S = 30.0  # how long an operation waits on another connection's write lock (tests lower it)


class StoreBase(SqliteFile, StoreCore):
    """The plumbing under ``BotStore``: ``SqliteFile`` with the bot's schema, the clock, the write
    transaction (``_immediate``), and the check that ``path`` is still the file first opened
    (``check_file``)."""

    def __init__(
        self, path: str | Path, *, busy_timeout: float | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        super().__init__(path, busy_timeout=BUSY_TIMEOUT_S if busy_timeout is None else busy_timeout)
        self._clock = clock
        self._identity: tuple[int, int] | None = None  # (device, inode) of the file first opened

    def _open(self) -> sqlite3.Connection:
        conn = connect(self.path, self.busy_timeout)
        if self._identity is None:
            st = os.stat(self.path)
            self._identity = (st.st_dev, st.st_ino)
        return conn

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        # before the lock and before a reopen after close(): a vanished file must not come back empty
        self.check_file()
        return super()._call(fn, *args)

    def check_file(self) -> None:
        """Raise ``StoreVanished`` when ``path`` is no longer the file this store first opened:
        deleted, or another file in its place (another inode). Before the first open: nothing."""
        if self._identity is None:
            return
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise StoreVanished(
                f"{str(self.path)!r} was deleted while the bot had it open; stopping, since nothing "
                "recorded from now on would be found again. Restore it from a backup before the bot "
                "starts again, or let it start with an empty one (the threads it knew are forgotten)."
            ) from None
        except OSError as exc:
            raise StoreVanished(f"{str(self.path)!r} cannot be looked at any more ({exc}); stopping. "
                                "Check the folder, then start the bot again.") from exc
        if (st.st_dev, st.st_ino) != self._identity:
            raise StoreVanished(
                f"{str(self.path)!r} was replaced by another file while the bot had it open (inode "
                f"{self._identity[1]} is now {st.st_ino}); stopping, so that the bot reads the new file "
                "from its start. If that was not meant, put the right file back before it starts again."
            )

    def close(self) -> None:
        """``SqliteFile.close``; a store whose file vanished first empties its write-ahead log.

        SQLite leaves ``bot.db-wal`` at the path when its database file moved, and whoever opens
        the file found there next (the restarted bot) would replay those pages onto it.
        """
        with self._lock:
            if self._conn is not None and self._identity is not None:
                try:
                    self.check_file()
                except StoreVanished:
                    try:  # into the old file, still open; every later operation is refused by _call
                        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    except sqlite3.Error as exc:
                        log.warning("could not empty %s-wal before closing (%s): move it aside before the "
                                    "bot starts again, or its pages land in the file now at that path",
                                    self.path, exc)
        super().close()

    async def _changed(self, sql: str, *args: Any) -> bool:
        """Run one write statement (atomic on its own: SQLite has one writer); True when it changed a row."""
        return await self._run(lambda conn: conn.execute(sql, args).rowcount > 0)

    @contextmanager
    def _immediate(self, conn: sqlite3.Connection, *, wait: float | None = None) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` (``engine.immediate``): the file's one write lock, taken first.

        With ``wait``, the busy timeout is at most ``wait`` seconds for this transaction only.
        """
        if wait is None:
            with immediate(conn):
                yield
            return
        conn.execute(f"PRAGMA busy_timeout = {int(min(self.busy_timeout, wait) * 1000)}")
        try:
            with immediate(conn):
                yield
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")

    async def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check``: "ok" for a sound file, else the problems found."""
        rows = await self._rows("PRAGMA integrity_check")
        return "\n".join(str(r[0]) for r in rows)

"""One SQLite connection to ``bot.db``, used from worker threads one operation at a time.

The engine's ``SqliteFile`` plumbing, as under ``SqliteSessionStore``: a stdlib ``sqlite3``
connection opened lazily, each operation run whole in a worker thread under a lock; other processes are kept out by SQLite (WAL, busy timeout, ``BEGIN
IMMEDIATE`` for every read-then-write). No asyncio lock, so the store works from any loop, and
``close()`` is an ordinary call.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.store.schema import connect
from engine import SqliteFile

__all__ = ["StoreBase"]


class StoreBase(SqliteFile):
    """The plumbing under ``BotStore``: ``SqliteFile`` with the bot's schema, and the clock."""

    def __init__(
        self, path: str | Path, *, busy_timeout: float = 30.0, clock: Callable[[], float] = time.time
    ) -> None:
        super().__init__(path, busy_timeout=busy_timeout)
        self._clock = clock

    def _open(self) -> sqlite3.Connection:
        return connect(self.path, self.busy_timeout)

    async def _changed(self, sql: str, *args: Any) -> bool:
        """Run one write statement (atomic on its own); True when it changed a row."""
        return await self._run(lambda conn: conn.execute(sql, args).rowcount > 0)

    def _now(self) -> float:
        return self._clock()

    async def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check``: "ok" for a sound file, else the problems found."""
        rows = await self._rows("PRAGMA integrity_check")
        return "\n".join(str(r[0]) for r in rows)

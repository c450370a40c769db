"""One SQLite connection to ``bot.db``, used from worker threads one operation at a time.

Same design as the engine's ``SqliteSessionStore``: a stdlib ``sqlite3`` connection opened
lazily, each operation run whole in a worker thread (``anyio.to_thread``) under a
``threading.Lock``; other processes are kept out by SQLite (WAL, busy timeout, ``BEGIN
IMMEDIATE`` for every read-then-write). No asyncio lock, so the store works from any loop, and
``close()`` is an ordinary call.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread

from bot.store_schema import connect
from engine.stores.sqlite_db import store_error

__all__ = ["StoreBase"]

T = TypeVar("T")


class StoreBase:
    """The plumbing under ``BotStore``: the lazily opened connection, the lock, and the clock."""

    def __init__(
        self, path: str | Path, *, busy_timeout: float = 30.0, clock: Callable[[], float] = time.time
    ) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._clock = clock
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(conn, *args)`` under the lock on the connection (opened on first use)."""
        with self._lock:
            try:
                if self._conn is None:
                    self._conn = connect(self.path, self.busy_timeout)
                return fn(self._conn, *args)
            except sqlite3.Error as exc:
                raise store_error(self.path, self.busy_timeout, exc) from exc

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        """``_call`` in a worker thread. Not abandoned on cancel: no write lands unseen later."""
        return await anyio.to_thread.run_sync(self._call, fn, *args)

    async def _rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        return await self._run(lambda conn: conn.execute(sql, args).fetchall())

    async def _changed(self, sql: str, *args: Any) -> bool:
        """Run one write statement (atomic on its own); True when it changed a row."""
        return await self._run(lambda conn: conn.execute(sql, args).rowcount > 0)

    def _now(self) -> float:
        return self._clock()

    def close(self) -> None:
        """Close the connection, waiting for an operation in flight. Twice is fine; use reopens."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    async def aclose(self) -> None:
        """``close()`` without blocking the event loop while an operation finishes."""
        await anyio.to_thread.run_sync(self.close)

    async def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check``: "ok" for a sound file, else the problems found."""
        rows = await self._rows("PRAGMA integrity_check")
        return "\n".join(str(r[0]) for r in rows)

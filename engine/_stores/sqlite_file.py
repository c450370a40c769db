"""One SQLite file behind one lazily opened connection, used from worker threads under a lock.

The engine's session store and the bot's own store both work this way: stdlib ``sqlite3`` (an
unclosed aiosqlite connection keeps the process from exiting), every operation run whole in a
worker thread so the event loop never waits on disk, and a synchronous ``close`` that works with
or without a running loop.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio

from engine._stores.sqlite_db import connect, store_error

T = TypeVar("T")


class SqliteFile:
    """One SQLite file at ``path`` behind a lazily opened connection, safe from any thread or loop.

    Public (``engine``) as a base class for hosts with a file of their own. The contract with a
    subclass: override ``_open`` to return the connection (``open_sqlite`` plus its own schema;
    the default opens the session store's); do every operation through ``_call`` (here, under
    the lock), ``_run`` (the same in a worker thread) or ``_rows`` (one read statement).
    ``sqlite3`` errors raised inside come out as ``StoreError`` naming the path and the fix.
    ``close``/``aclose`` may be called any number of times; a later use opens the file again.
    """

    def __init__(self, path: str | Path, *, busy_timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _open(self) -> sqlite3.Connection:
        return connect(self.path, self.busy_timeout)

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(conn, *args)`` under the lock on the connection (opened on first use)."""
        with self._lock:
            try:
                if self._conn is None:
                    self._conn = self._open()
                return fn(self._conn, *args)
            except sqlite3.Error as exc:
                raise store_error(self.path, self.busy_timeout, exc) from exc

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        """``_call`` in a worker thread. Not abandoned on cancel: no write lands unseen later."""
        return await anyio.to_thread.run_sync(self._call, fn, *args)

    async def _rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        """All rows of one read statement, in a worker thread."""
        return await self._run(lambda conn: conn.execute(sql, args).fetchall())

    def close(self) -> None:
        """Close the connection now, with or without a running event loop; waits for an
        operation in flight. Closing twice is fine; a later use reopens the file."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    async def aclose(self) -> None:
        """``close()`` without blocking the event loop while an operation finishes."""
        await anyio.to_thread.run_sync(self.close)

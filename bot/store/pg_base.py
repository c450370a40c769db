"""The plumbing under ``PgBotStore``: the bot's sync operations on PostgreSQL, through the engine's pool.

``engine.PgDatabase`` owns the asyncpg pool (on its own loop thread), the first-use migration
(component ``"bot"``, ``bot.store.pg_tables``) and the ``StoreError`` for every PostgreSQL or
connection failure. Each operation of the mixins, a sync ``fn(conn, *args)``, runs whole in a
worker thread against a ``PgConnection`` over one pooled connection, as ``BotStore`` runs it
against its SQLite connection.

Several bot replicas share one database, so every write takes one transaction-scoped advisory
lock (``BOT_LOCK``) first, waiting at most ``busy_timeout``: the writes are serialized exactly as
SQLite's single writer serializes them, across processes and machines. That covers the single
statements too, not only the read-then-writes, so ids are handed out in commit order (an identity
column alone is not: the outbox and inbox are read in id order).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from bot.store import sqlite_base as base
from bot.store.core import StoreCore
from bot.store.pg_conn import PgConnection
from bot.store.pg_tables import BOT_LOCK, COMPONENT, MIGRATIONS
from engine.host import PgDatabase

__all__ = ["PgStoreBase"]

T = TypeVar("T")


class PgStoreBase(PgDatabase, StoreCore):
    """The bot's tables in the PostgreSQL database at ``url`` (``postgresql://``; see the module).

    ``busy_timeout`` (seconds, default ``bot.store.sqlite_base.BUSY_TIMEOUT_S``) is how long a write
    waits for the lock another connection holds before a ``StoreError``; ``clock`` gives epoch
    seconds; ``max_connections`` caps the pool. There is no file to vanish: ``check_file`` does
    nothing, and a lost connection is a ``StoreError`` like any other failure.
    """

    component = COMPONENT
    migrations = MIGRATIONS

    def __init__(self, url: str, *, busy_timeout: float | None = None, clock: Callable[[], float] = time.time,
                 max_connections: int = 4, connect_timeout: float = 30.0) -> None:
        super().__init__(url, max_connections=max_connections, connect_timeout=connect_timeout)
        self.busy_timeout = base.BUSY_TIMEOUT_S if busy_timeout is None else busy_timeout
        self._clock = clock

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:  # type: ignore[override]
        """``fn(conn, *args)``, sync, whole in a worker thread on one pooled connection (a ``PgConnection``).

        Where ``PgDatabase._run`` awaits an async ``fn``, this one runs a sync one: the mixins'
        operations are shared with the SQLite store. Not abandoned on cancel.
        """
        return await super()._run(self._in_thread, fn, args)

    async def _in_thread(self, conn: Any, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        loop = asyncio.get_running_loop()  # the pool's own loop: the facade hands each statement back to it
        facade = PgConnection(conn, loop, where=self.where)
        return await loop.run_in_executor(None, functools.partial(fn, facade, *args))

    async def _rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        """All rows of one read statement (no lock: a reader never waits on PostgreSQL)."""
        return await self._run(lambda conn: conn.execute(sql, args).fetchall())

    async def _changed(self, sql: str, *args: Any) -> bool:
        """Run one write statement under the bot's lock (see the module); True when it changed a row."""
        def write(conn: PgConnection) -> bool:
            with self._immediate(conn):
                return conn.execute(sql, args).rowcount > 0
        return await self._run(write)

    @contextmanager
    def _immediate(self, conn: PgConnection, *, wait: float | None = None) -> Iterator[None]:
        """A transaction that first takes ``BOT_LOCK``, waiting at most ``wait`` (or ``busy_timeout``) seconds."""
        with conn.immediate(BOT_LOCK, self.busy_timeout if wait is None else min(wait, self.busy_timeout)):
            yield

    def check_file(self) -> None:
        """Nothing to check: the tables live on the server (``BotStore`` checks its file here)."""

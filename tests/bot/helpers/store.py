"""The bot store's two backends, for tests that must hold on both, and a clock moved by hand.

``backend`` (a fixture in tests/bot/conftest.py) is a ``Backend`` per parameter: SQLite on
``tmp_path/home/bot.db``, or PostgreSQL on a fresh database of the session's throwaway cluster.
A test that holds on SQLite only takes ``@sqlite_only``, or no backend at all.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from bot.store.bot_store import BotStore
from bot.store.pg_store import PgBotStore
from bot.store.pg_tables import BOT_LOCK

__all__ = ["Backend", "Clock", "Locker", "sqlite_only"]

Kind = Literal["sqlite", "postgres"]

# For a test about the SQLite file itself: the backend fixture with one parameter
sqlite_only = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


@dataclass
class Locker:
    """Another connection that takes the store's write lock (SQLite's ``BEGIN IMMEDIATE``, or the
    bot's advisory lock on PostgreSQL) and holds it until ``release``."""

    kind: Kind
    target: Any
    _conn: Any = field(default=None, repr=False)

    async def hold(self) -> None:
        if self.kind == "sqlite":
            self._conn = sqlite3.connect(self.target, isolation_level=None)
            self._conn.execute("BEGIN IMMEDIATE")
        else:
            import asyncpg

            self._conn = await asyncpg.connect(self.target)
            await self._conn.execute("SELECT pg_advisory_lock($1)", BOT_LOCK)

    async def release(self) -> None:
        if self._conn is None:
            return
        conn, self._conn = self._conn, None
        if self.kind == "sqlite":
            conn.execute("ROLLBACK")
            conn.close()
        else:
            await conn.close()  # the session's advisory lock goes with it


@dataclass
class Backend:
    """Where one test's bot state lives: ``target`` is the SQLite file or the PostgreSQL URL."""

    kind: Kind
    target: Any

    def store(self, **kwargs: Any) -> BotStore | PgBotStore:
        """A new store on the same state (a second one is another process's, or a restart's)."""
        return BotStore(self.target, **kwargs) if self.kind == "sqlite" else PgBotStore(self.target, **kwargs)

    def locker(self) -> Locker:
        """A connection of its own that can hold the write lock."""
        return Locker(self.kind, self.target)


class Clock:
    """A clock the test moves by hand: no waiting, no timing."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now

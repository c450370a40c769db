"""A small sync facade over one pooled asyncpg connection, shaped like the ``sqlite3`` calls the
bot's store makes: ``execute(sql, params)`` with ``?`` placeholders, a cursor with
``fetchone``/``fetchall``/``rowcount``, and ``immediate`` for a write transaction.

It is used from a worker thread while the connection's event loop runs on its own thread
(``engine.PgDatabase``'s): each statement is handed to that loop and waited for. asyncpg's errors
come out as they are; the store's base turns them into ``StoreError``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from engine import StoreError

__all__ = ["PgConnection", "PgCursor", "to_dollars"]

T = TypeVar("T")


@functools.lru_cache(maxsize=512)
def to_dollars(sql: str) -> str:
    """``sql`` with each ``?`` placeholder numbered for PostgreSQL (``$1``, ``$2``...); a ``?`` in a
    quoted literal or name stays."""
    out, n, quote = [], 0, ""
    for ch in sql:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "?":
            n += 1
            out.append(f"${n}")
            continue
        out.append(ch)
    return "".join(out)


def _returns_rows(sql: str) -> bool:
    upper = sql.lstrip().upper()
    return upper.startswith(("SELECT", "WITH")) or " RETURNING " in upper


@dataclass
class PgCursor:
    """What one statement gave: its rows (tuples), and how many rows it changed or returned."""

    rows: list[tuple[Any, ...]] = field(default_factory=list)
    rowcount: int = 0

    def fetchone(self) -> tuple[Any, ...] | None:
        """The first row, or None."""
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        """Every row."""
        return list(self.rows)


class PgConnection:
    """One asyncpg connection ``conn`` whose loop is ``loop``, used synchronously from another thread.

    ``execute`` fetches a statement that returns rows (a SELECT, or one with RETURNING) and
    executes any other for its row count, both through asyncpg's statement cache (one round
    trip once prepared). ``immediate(lock, wait_s)`` is a transaction that first takes the
    transaction-scoped advisory lock ``lock``, waiting at most ``wait_s`` seconds for it.
    """

    def __init__(self, conn: Any, loop: asyncio.AbstractEventLoop, *, where: str) -> None:
        self._conn, self._loop, self.where = conn, loop, where

    def _wait(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> PgCursor:
        """Run one statement with ``?`` placeholders and ``parameters``; its rows or its row count."""
        text = to_dollars(sql)
        if _returns_rows(text):
            rows = [tuple(r) for r in self._wait(self._conn.fetch(text, *parameters))]
            return PgCursor(rows, len(rows))
        status = self._wait(self._conn.execute(text, *parameters))  # "UPDATE 2", "INSERT 0 1", "DELETE 0"
        last = status.rsplit(" ", 1)[-1]
        return PgCursor([], int(last) if last.isdigit() else 0)

    @contextmanager
    def immediate(self, lock: int, wait_s: float) -> Iterator[None]:
        """A transaction holding the advisory lock ``lock`` from its first statement to its end.

        Waiting longer than ``wait_s`` for it raises ``StoreError`` (nothing done). Any exception
        inside rolls back and is raised again; a rollback that fails too (the connection is gone)
        leaves the first exception to tell.
        """
        import asyncpg

        # one round trip: a simple query may hold several statements
        begin = (f"BEGIN; SET LOCAL lock_timeout = {max(1, int(wait_s * 1000))}; "
                 f"SELECT pg_advisory_xact_lock({int(lock)})")
        try:
            self._wait(self._conn.execute(begin))
        except asyncpg.LockNotAvailableError as exc:
            self._rollback()
            raise StoreError(
                f"the bot's tables in {self.where} stayed locked by another connection for more than "
                f"{wait_s:g} s, so nothing was written. Another bot replica may hold a long transaction: "
                "look in pg_stat_activity for one waiting or idle in transaction, and end it."
            ) from exc
        except BaseException:
            self._rollback()
            raise
        try:
            yield
        except BaseException:
            self._rollback()
            raise
        self._wait(self._conn.execute("COMMIT"))

    def _rollback(self) -> None:
        if not self._conn.is_in_transaction():
            return
        try:
            self._wait(self._conn.execute("ROLLBACK"))
        except Exception:  # the connection is broken: the pool throws it away, the server rolls back
            pass

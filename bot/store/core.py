"""What the table mixins of the bot's store stand on, whichever database is under them.

Each operation is a sync function ``fn(conn, *args)`` that a backend's base runs whole in a worker
thread (``_run``); ``conn`` is a stdlib ``sqlite3`` connection (``bot.store.sqlite_base``) or the sync
facade over one pooled PostgreSQL connection (``bot.store.pg_conn``), and every statement is
written once, in SQL both accept (``?`` placeholders, ``ON CONFLICT``, ``RETURNING``, no rowid).
A read-then-write runs inside ``with self._immediate(conn):``, the backend's one write lock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

__all__ = ["Conn", "Cursor", "StoreCore"]

T = TypeVar("T")


class Cursor(Protocol):
    """The rows of one statement: ``fetchone``/``fetchall``, and ``rowcount`` for a write."""

    rowcount: int

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Conn(Protocol):
    """A connection as the mixins use it: one ``execute`` with ``?`` placeholders."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...


class StoreCore:
    """The mixins' common base: the clock, and (declared here, given by a backend's base) the runner.

    A backend's base comes before this class in the MRO (``class StoreBase(SqliteFile,
    StoreCore)``), so nothing here shadows its methods; ``__init__`` is the backend's, which sets
    ``_clock``.
    """

    _clock: Callable[[], float]  # epoch seconds (tests pass a fake one)
    busy_timeout: float  # seconds a write waits on another connection's write lock

    def _now(self) -> float:
        return self._clock()

    if TYPE_CHECKING:
        async def _run(self, fn: Callable[..., T], *args: Any) -> T:
            """``fn(conn, *args)`` whole, in a worker thread; database failures as ``StoreError``."""

        async def _rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
            """All rows of one read statement."""

        async def _changed(self, sql: str, *args: Any) -> bool:
            """One write statement, under the write lock; True when it changed a row."""

        # The base's method, not engine.immediate: only the base knows its backend's one write lock.
        def _immediate(self, conn: Any, *, wait: float | None = None) -> AbstractContextManager[None]:
            """A write transaction on ``conn`` holding the backend's one write lock, taken first;
            ``wait`` (seconds) shortens the wait for it below ``busy_timeout``."""

        def check_file(self) -> None:
            """Raise when the store's file vanished (SQLite); nothing on a database server."""


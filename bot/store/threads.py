"""Threads and handled event ids: the half of the bot's store that every event goes through.

A thread (a Slack thread -> its workspace and run state) is created once and updated field by
field; an event id and a message (channel + ts) are claimed once, restarts included: Slack
redelivers an event up to 3 times over minutes, and one mention arrives as app_mention and as
message.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from bot.core.thread import ACTIVE_STATES, THREAD_STATES, ThreadKey, ThreadState
from bot.store.core import Conn, StoreCore
from engine import StoreError

__all__ = ["ThreadsMixin"]


@dataclass(frozen=True)
class Thread:
    """One Slack thread and its workspace. ``last_seen_ts``: newest message ts seen in it."""

    key: ThreadKey
    workspace: str
    state: ThreadState
    last_seen_ts: str | None
    status_ts: str | None
    created_by: str
    created_at: float
    updated_at: float

    COLUMNS = "team, channel, thread_ts, workspace, state, last_seen_ts, status_ts, created_by, created_at, updated_at"

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Thread:
        """Build from a row selected with ``COLUMNS``."""
        return cls(ThreadKey(*row[:3]), *row[3:])


_THREAD = "team = ? AND channel = ? AND thread_ts = ?"
# Ties in created_at (one clock tick) go by the primary key: the same order on both databases.
_OLDEST_FIRST = "ORDER BY created_at, team, channel, thread_ts"


def _check_state(state: str) -> None:
    if state not in THREAD_STATES:
        raise StoreError(f"unknown thread state {state!r}. Use one of: {', '.join(sorted(THREAD_STATES))}.")


def _ts(ts: str) -> Decimal:
    """A Slack ts ("1712345678.123456") as an exact number: floats lose its last digit."""
    try:
        return Decimal(ts)
    except (InvalidOperation, TypeError):
        raise StoreError(f"{ts!r} is not a Slack message ts. Pass the message's ts, e.g. '1712345678.123456'.") from None


class ThreadsMixin(StoreCore):
    """The threads and claims half of the bot's store."""

    # -- threads --------------------------------------------------------------------------------

    async def get_thread(self, key: ThreadKey) -> Thread | None:
        """The thread at ``key``, or None if the bot never took it on."""
        rows = await self._rows(f"SELECT {Thread.COLUMNS} FROM threads WHERE {_THREAD}", *ThreadKey(*key))
        return Thread.from_row(rows[0]) if rows else None

    async def upsert_thread(
        self,
        key: ThreadKey,
        *,
        workspace: str | None = None,
        state: ThreadState | None = None,
        created_by: str | None = None,
        status_ts: str | None = None,
    ) -> Thread:
        """Create the thread, or update the fields given (None leaves a field as it is); return it.

        Creating needs ``workspace`` (the folder name); ``state`` defaults to "idle" then.
        """
        if state is not None:
            _check_state(state)
        return await self._run(self._upsert, ThreadKey(*key), workspace, state, created_by, status_ts)

    def _upsert(self, conn: Conn, key: ThreadKey, workspace: str | None, state: str | None,
                created_by: str | None, status_ts: str | None) -> Thread:
        now = self._now()
        with self._immediate(conn):
            exists = conn.execute(f"SELECT 1 FROM threads WHERE {_THREAD}", key).fetchone()
            if exists is None:
                if not workspace:
                    raise StoreError(
                        f"thread {'/'.join(key)} is not stored yet, and no workspace was given. Pass "
                        "workspace= (the folder name) when a thread is first recorded."
                    )
                conn.execute(
                    "INSERT INTO threads (team, channel, thread_ts, workspace, state, status_ts, created_by, "
                    "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*key, workspace, state or "idle", status_ts, created_by or "", now, now),
                )
            else:
                changes = {"workspace": workspace, "state": state, "created_by": created_by, "status_ts": status_ts}
                sets = [(col, val) for col, val in changes.items() if val is not None]
                conn.execute(
                    f"UPDATE threads SET {''.join(f'{col} = ?, ' for col, _ in sets)}updated_at = ? WHERE {_THREAD}",
                    (*(val for _, val in sets), now, *key),
                )
            row = conn.execute(f"SELECT {Thread.COLUMNS} FROM threads WHERE {_THREAD}", key).fetchone()
        return Thread.from_row(row)

    async def set_state(self, key: ThreadKey, state: ThreadState) -> bool:
        """Set the thread's run state; False if the thread is not stored."""
        _check_state(state)
        return await self._changed(
            f"UPDATE threads SET state = ?, updated_at = ? WHERE {_THREAD}", state, self._now(), *ThreadKey(*key))

    async def active_threads(self) -> list[Thread]:
        """Threads whose run was queued, running or waiting (for restart recovery), oldest first."""
        marks = ", ".join("?" for _ in ACTIVE_STATES)
        rows = await self._rows(
            f"SELECT {Thread.COLUMNS} FROM threads WHERE state IN ({marks}) {_OLDEST_FIRST}", *ACTIVE_STATES)
        return [Thread.from_row(r) for r in rows]

    async def threads_started_by(self, user: str, *, limit: int = 10) -> list[Thread]:
        """The newest ``limit`` threads ``user`` started, newest first (their App Home tab)."""
        rows = await self._rows(f"SELECT {Thread.COLUMNS} FROM threads WHERE created_by = ? "
                                "ORDER BY created_at DESC LIMIT ?", user, limit)
        return [Thread.from_row(r) for r in rows]

    async def thread_counts(self) -> dict[str, int]:
        """How many threads are in each state (the operator's metrics)."""
        return {state: int(n) for state, n in await self._rows("SELECT state, COUNT(*) FROM threads GROUP BY state")}

    async def threads_since(self, after: float) -> list[Thread]:
        """Threads changed, or with a message seen (a Slack ts is epoch seconds), at or after epoch
        ``after``, plus every active one; oldest first."""
        marks = ", ".join("?" for _ in ACTIVE_STATES)
        # DOUBLE PRECISION, not REAL: PostgreSQL's REAL has 4 bytes, and an epoch in it is off by minutes
        rows = await self._rows(
            f"SELECT {Thread.COLUMNS} FROM threads WHERE updated_at >= ? OR CAST(last_seen_ts AS DOUBLE PRECISION) "
            f">= ? OR state IN ({marks}) {_OLDEST_FIRST}", after, after, *ACTIVE_STATES)
        return [Thread.from_row(r) for r in rows]

    async def touch_seen(self, key: ThreadKey, ts: str) -> bool:
        """Move the thread's ``last_seen_ts`` forward to ``ts``; False if not newer (or no thread).

        ``updated_at`` stays: it marks the run's state changes, and notice keys are built on it.
        """
        new = _ts(ts)
        return await self._run(self._touch, ThreadKey(*key), ts, new)

    def _touch(self, conn: Conn, key: ThreadKey, ts: str, new: Decimal) -> bool:
        with self._immediate(conn):
            row = conn.execute(f"SELECT last_seen_ts FROM threads WHERE {_THREAD}", key).fetchone()
            if row is None or (row[0] is not None and _ts(row[0]) >= new):
                return False
            conn.execute(f"UPDATE threads SET last_seen_ts = ? WHERE {_THREAD}", (ts, *key))
            return True

    # -- handled events -------------------------------------------------------------------------

    async def claim_event(self, event_id: str) -> bool:
        """True the first time ``event_id`` is claimed, False ever after (restarts included).

        Slack redelivers an event up to 3 times over minutes, and a restart must not redo one.
        """
        return await self._changed("INSERT INTO events (event_id, at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                                   event_id, self._now())

    async def claim_message(self, channel: str, ts: str) -> bool:
        """Like ``claim_event`` for a message: a mention arrives as app_mention and as message."""
        return await self._changed(
            "INSERT INTO messages (channel, ts, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", channel, ts, self._now())

    async def claim(self, key: ThreadKey, ts: str, *, event_id: str | None, known_thread: bool) -> bool:
        """``claim_event``, ``claim_message`` and ``touch_seen`` of one event in one transaction.

        True when the event (``event_id``, if any) and the message (``key``'s channel + ``ts``)
        were both unclaimed; the thread's ``last_seen_ts`` then moves to ``ts``. With
        ``known_thread`` nothing is claimed unless the thread is stored. One transaction is one
        fsync: this runs before bolt acks. A ``ts`` that is not Slack's raises before any claim.
        """
        return await self._run(self._claim, ThreadKey(*key), ts, _ts(ts), event_id, known_thread)

    def _claim(self, conn: Conn, key: ThreadKey, ts: str, new: Decimal, event_id: str | None,
               known_thread: bool) -> bool:
        now = self._now()
        with self._immediate(conn):
            row = conn.execute(f"SELECT last_seen_ts FROM threads WHERE {_THREAD}", key).fetchone()
            if known_thread and row is None:
                return False
            if event_id and not conn.execute("INSERT INTO events (event_id, at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                                              (event_id, now)).rowcount:
                return False  # the event's claim stays, as with claim_event alone
            if not conn.execute("INSERT INTO messages (channel, ts, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                                (key.channel, ts, now)).rowcount:
                return False
            if row is not None and (row[0] is None or _ts(row[0]) < new):
                conn.execute(f"UPDATE threads SET last_seen_ts = ? WHERE {_THREAD}", (ts, *key))
            return True

    async def prune_events(self, older_than_s: float) -> int:
        """Forget event and message claims older than ``older_than_s`` seconds; return how many.

        Slack stops redelivering after hours, so days-old claims only take space.
        """
        return await self._run(self._prune, self._now() - older_than_s)

    def _prune(self, conn: Conn, before: float) -> int:
        with self._immediate(conn):
            gone = conn.execute("DELETE FROM events WHERE at < ?", (before,)).rowcount
            gone += conn.execute("DELETE FROM messages WHERE at < ?", (before,)).rowcount
        return gone

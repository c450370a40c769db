"""The two queues in ``bot.db``: the outbox (notices to post, each once) and the inbox (words said
to a running thread that the run has not taken yet)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from bot.core.thread import ThreadKey
from bot.store.core import Conn, StoreCore
from engine import StoreError

__all__ = ["QueuesMixin"]


OutboxState = Literal["pending", "sent", "failed"]


@dataclass(frozen=True)
class OutboxItem:
    """A notice waiting to be posted (``pending``), posted (``sent``) or given up on (``failed``)."""

    id: int
    thread: ThreadKey
    kind: str
    dedupe_key: str
    payload: dict[str, Any]
    created_at: float
    state: OutboxState
    attempts: int
    error: str | None
    retry_at: float | None
    sent_ts: str | None

    COLUMNS = (
        "id, team, channel, thread_ts, kind, dedupe_key, payload, created_at, state, attempts, error, "
        "retry_at, sent_ts"
    )

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> OutboxItem:
        """Build from a row selected with ``COLUMNS``."""
        return cls(row[0], ThreadKey(*row[1:4]), row[4], row[5], json.loads(row[6]), *row[7:])


@dataclass(frozen=True)
class InboxItem:
    """Words a person said in a thread while its run was busy: text, who, and the message ts."""

    id: int
    text: str
    by: str
    ts: str
    at: float


_THREAD = "team = ? AND channel = ? AND thread_ts = ?"


class QueuesMixin(StoreCore):
    """The outbox and inbox half of ``BotStore``."""

    # -- outbox ---------------------------------------------------------------------------------

    async def enqueue(self, thread: ThreadKey, kind: str, dedupe_key: str, payload: dict[str, Any]) -> bool:
        """Queue a notice for ``thread``; False (nothing queued) when ``dedupe_key`` was queued before.

        The key is kept after sending, so a notice re-emitted after a restart is posted once.
        ``payload`` must be JSON (the message arguments: text, blocks, ...).
        """
        try:
            data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise StoreError(
                f"the {kind!r} notice {dedupe_key!r} cannot be stored as JSON ({exc}); nothing was "
                "queued. Pass only JSON values (dict, list, str, int, float, bool, None)."
            ) from exc
        return await self._changed(
            "INSERT INTO outbox (team, channel, thread_ts, kind, dedupe_key, payload, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            *ThreadKey(*thread), kind, dedupe_key, data, self._now())

    async def pending_outbox(self, limit: int = 50) -> list[OutboxItem]:
        """Notices due now, oldest first: insertion order, and per thread never past a waiting one.

        An item whose ``retry_at`` is still ahead holds back the later items of its thread (Slack
        must show them in order) but not other threads' items.
        """
        now = self._now()
        rows = await self._rows(
            f"SELECT {OutboxItem.COLUMNS} FROM outbox o WHERE o.state = 'pending' "
            "AND (o.retry_at IS NULL OR o.retry_at <= ?) AND NOT EXISTS ("
            "  SELECT 1 FROM outbox p WHERE p.team = o.team AND p.channel = o.channel "
            "  AND p.thread_ts = o.thread_ts AND p.state = 'pending' AND p.id < o.id AND p.retry_at > ?"
            ") ORDER BY o.id LIMIT ?",
            now, now, limit)
        return [OutboxItem.from_row(r) for r in rows]

    async def mark_sent(self, item_id: int, ts: str | None) -> bool:
        """Record that the item was posted as the message at ``ts``; False for an unknown id."""
        return await self._changed(
            "UPDATE outbox SET state = 'sent', sent_ts = ?, sent_at = ?, retry_at = NULL WHERE id = ?",
            ts, self._now(), item_id)

    async def mark_failed(self, item_id: int, error: str, retry_at: float | None) -> bool:
        """Record a failed post: try again at ``retry_at`` (epoch), or give up with None.

        A given-up item leaves the pending list, so the rest of its thread goes on.
        """
        # CAST: PostgreSQL cannot tell the type of a bare "? IS NULL"
        return await self._changed(
            "UPDATE outbox SET attempts = attempts + 1, error = ?, retry_at = ?, "
            "state = CASE WHEN CAST(? AS DOUBLE PRECISION) IS NULL THEN 'failed' ELSE 'pending' END "
            "WHERE id = ? AND state = 'pending'",
            error[:2000], retry_at, retry_at, item_id)

    async def sent_ts(self, dedupe_key: str) -> str | None:
        """The ts of the message posted for ``dedupe_key`` (e.g. to edit a status line), or None."""
        rows = await self._rows("SELECT sent_ts FROM outbox WHERE dedupe_key = ?", dedupe_key)
        return rows[0][0] if rows else None

    async def outbox_item(self, dedupe_key: str) -> OutboxItem | None:
        """The outbox item queued under ``dedupe_key`` in whatever state, or None."""
        rows = await self._rows(f"SELECT {OutboxItem.COLUMNS} FROM outbox WHERE dedupe_key = ?", dedupe_key)
        return OutboxItem.from_row(rows[0]) if rows else None

    # -- inbox ----------------------------------------------------------------------------------

    async def push_inbox(self, thread: ThreadKey, text: str, by: str, ts: str) -> bool:
        """Keep what ``by`` said at ``ts`` for the run; False if that message was pushed before."""
        return await self._changed(
            "INSERT INTO inbox (team, channel, thread_ts, text, by_user, ts, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            *ThreadKey(*thread), text, by, ts, self._now())

    async def inbox_waiting(self, thread: ThreadKey) -> int:
        """How many messages in ``thread``'s inbox are not taken yet."""
        rows = await self._rows(f"SELECT COUNT(*) FROM inbox WHERE {_THREAD} AND drained_at IS NULL",
                                *ThreadKey(*thread))
        return int(rows[0][0])

    async def drain_inbox(self, thread: ThreadKey) -> list[InboxItem]:
        """Take every message not taken yet from ``thread``'s inbox, oldest first (each only once)."""
        return await self._run(self._drain, ThreadKey(*thread))

    def _drain(self, conn: Conn, thread: ThreadKey) -> list[InboxItem]:
        with self._immediate(conn):
            rows = conn.execute(
                f"SELECT id, text, by_user, ts, at FROM inbox WHERE {_THREAD} AND drained_at IS NULL ORDER BY id",
                thread).fetchall()
            if rows:
                conn.execute(
                    f"UPDATE inbox SET drained_at = ? WHERE {_THREAD} AND drained_at IS NULL AND id <= ?",
                    (self._now(), *thread, rows[-1][0]))
        return [InboxItem(*r) for r in rows]

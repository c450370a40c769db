"""Who acts on each thread when several bot replicas share one database: leases, forwarded events
and outbox claims.

``leases``: one row per thread, the replica that owns it and until when (a heartbeat moves that
forward). ``forwards``: an event a replica received for a thread another one owns, kept until the
owner (whoever it is by then) has handled it. ``outbox_claims``: the replica posting a notice and
until when, so two replicas never post the same one. A replica that stops renewing loses all of
it by expiry. One process on SQLite uses none of this (``bot.store.replicas.Solo``).

Every read-then-write is one ``immediate`` transaction: SQLite's write lock, PostgreSQL's
advisory lock. Writers take turns, so a takeover cannot race a renewal or another takeover.
The time is each replica's clock: replicas keep their clocks in step (NTP), well inside a lease.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from bot.core.thread import ACTIVE_STATES, ThreadKey
from bot.store.core import Conn, StoreCore

__all__ = ["Claim", "Forward", "LeasesMixin"]

_THREAD = "team = ? AND channel = ? AND thread_ts = ?"

Claim = Literal["fresh", "stale"]  # stale: another replica claimed it before and stopped renewing


@dataclass(frozen=True)
class Forward:
    """An event kept for the thread's owner: ``op`` names the handler, ``args`` its JSON arguments."""

    id: int
    thread: ThreadKey
    op: str
    args: dict[str, Any]


class LeasesMixin(StoreCore):
    """Leases, forwarded events and outbox claims of ``BotStore``; see the module docstring."""

    # -- leases ---------------------------------------------------------------------------------

    async def take_lease(self, key: ThreadKey, owner: str, ttl: float) -> str | None:
        """Own ``key`` until now + ``ttl``: None when it is ``owner``'s now (new, already its own,
        or expired), else the live owner's id (nothing changed)."""
        return await self._run(self._take, ThreadKey(*key), owner, ttl)

    def _take(self, conn: Conn, key: ThreadKey, owner: str, ttl: float) -> str | None:
        now = self._now()
        with self._immediate(conn):
            row = conn.execute(f"SELECT owner, expires_at FROM leases WHERE {_THREAD}", key).fetchone()
            if row is not None and row[0] != owner and row[1] >= now:
                return str(row[0])
            self._own(conn, key, owner, now + ttl, exists=row is not None)
        return None

    @staticmethod
    def _own(conn: Conn, key: ThreadKey, owner: str, until: float, *, exists: bool) -> None:
        if exists:
            conn.execute(f"UPDATE leases SET owner = ?, expires_at = ? WHERE {_THREAD}", (owner, until, *key))
        else:
            conn.execute("INSERT INTO leases (team, channel, thread_ts, owner, expires_at) VALUES (?, ?, ?, ?, ?)",
                         (*key, owner, until))

    async def renew_leases(self, owner: str, ttl: float) -> set[ThreadKey]:
        """Move every lease ``owner`` holds, and its claims on notices not posted yet, to now +
        ``ttl``; return the threads it still holds.

        A lease another replica took over (this one was too slow to renew) is not among them.
        """
        return await self._run(self._renew, owner, ttl)

    def _renew(self, conn: Conn, owner: str, ttl: float) -> set[ThreadKey]:
        with self._immediate(conn):
            conn.execute("UPDATE leases SET expires_at = ? WHERE owner = ?", (self._now() + ttl, owner))
            conn.execute("UPDATE outbox_claims SET expires_at = ? WHERE owner = ? AND item_id IN "
                         "(SELECT id FROM outbox WHERE state = 'pending')", (self._now() + ttl, owner))
            rows = conn.execute("SELECT team, channel, thread_ts FROM leases WHERE owner = ?", (owner,)).fetchall()
        return {ThreadKey(*r) for r in rows}

    async def release_leases(self, owner: str) -> int:
        """Give up every lease and outbox claim of ``owner`` (a replica stopping cleanly): the others
        take over at their next look instead of after the expiry. Returns the leases given up."""
        return await self._run(self._release, owner)

    def _release(self, conn: Conn, owner: str) -> int:
        with self._immediate(conn):
            conn.execute("DELETE FROM outbox_claims WHERE owner = ?", (owner,))
            return conn.execute("DELETE FROM leases WHERE owner = ?", (owner,)).rowcount

    async def lease_owner(self, key: ThreadKey) -> str | None:
        """The replica whose lease on ``key`` is live now, or None."""
        rows = await self._rows(f"SELECT owner FROM leases WHERE {_THREAD} AND expires_at >= ?",
                                *ThreadKey(*key), self._now())
        return str(rows[0][0]) if rows else None

    async def take_orphans(self, owner: str, ttl: float, limit: int = 20) -> list[ThreadKey]:
        """Own the threads that need an owner and have none alive: a run going (queued, running,
        waiting) or a forwarded event waiting; oldest first, at most ``limit``."""
        return await self._run(self._orphans, owner, ttl, limit)

    def _orphans(self, conn: Conn, owner: str, ttl: float, limit: int) -> list[ThreadKey]:
        now = self._now()
        marks = ", ".join("?" for _ in ACTIVE_STATES)
        with self._immediate(conn):
            rows = conn.execute(
                "SELECT t.team, t.channel, t.thread_ts, l.owner FROM threads t LEFT JOIN leases l "
                "ON l.team = t.team AND l.channel = t.channel AND l.thread_ts = t.thread_ts "
                "WHERE (l.owner IS NULL OR l.expires_at < ?) AND (t.state IN (" + marks + ") OR EXISTS ("
                "  SELECT 1 FROM forwards f WHERE f.team = t.team AND f.channel = t.channel "
                "  AND f.thread_ts = t.thread_ts)) ORDER BY t.created_at, t.team, t.channel, t.thread_ts LIMIT ?",
                (now, *ACTIVE_STATES, limit)).fetchall()
            taken = []
            for team, channel, thread_ts, was in rows:
                key = ThreadKey(team, channel, thread_ts)
                self._own(conn, key, owner, now + ttl, exists=was is not None)
                taken.append(key)
        return taken

    # -- forwarded events -----------------------------------------------------------------------

    async def forward(self, key: ThreadKey, op: str, args: dict[str, Any]) -> None:
        """Keep an event for whichever replica owns ``key`` when it next looks."""
        await self._changed("INSERT INTO forwards (team, channel, thread_ts, op, args, at) VALUES (?, ?, ?, ?, ?, ?)",
                            *ThreadKey(*key), op, json.dumps(args, ensure_ascii=False), self._now())

    async def forwarded_to(self, owner: str, limit: int = 50) -> list[Forward]:
        """The events waiting for threads ``owner`` holds a live lease on, in arrival order."""
        rows = await self._rows(
            "SELECT f.id, f.team, f.channel, f.thread_ts, f.op, f.args FROM forwards f JOIN leases l "
            "ON l.team = f.team AND l.channel = f.channel AND l.thread_ts = f.thread_ts "
            "WHERE l.owner = ? AND l.expires_at >= ? ORDER BY f.id LIMIT ?", owner, self._now(), limit)
        return [Forward(r[0], ThreadKey(*r[1:4]), r[4], json.loads(r[5])) for r in rows]

    async def drop_forward(self, forward_id: int) -> None:
        """Forget a forwarded event once it was handled (after, not before: a death re-handles it)."""
        await self._changed("DELETE FROM forwards WHERE id = ?", forward_id)

    # -- outbox claims --------------------------------------------------------------------------

    async def claim_outbox(self, item_id: int, owner: str, ttl: float) -> Claim | None:
        """Claim outbox item ``item_id`` for ``owner`` to post: ``fresh`` (no one else had it),
        ``stale`` (another replica claimed it and stopped renewing: it may have posted it), None
        (another replica holds a live claim: leave it, and the rest of its thread). A claim lasts
        ``ttl`` and is renewed with the owner's leases (``renew_leases``)."""
        return await self._run(self._claim_item, item_id, owner, ttl)

    def _claim_item(self, conn: Conn, item_id: int, owner: str, ttl: float) -> Claim | None:
        now = self._now()
        with self._immediate(conn):
            row = conn.execute("SELECT owner, expires_at FROM outbox_claims WHERE item_id = ?", (item_id,)).fetchone()
            if row is None:
                conn.execute("INSERT INTO outbox_claims (item_id, owner, expires_at) VALUES (?, ?, ?)",
                             (item_id, owner, now + ttl))
                return "fresh"
            if row[0] != owner and row[1] >= now:
                return None
            conn.execute("UPDATE outbox_claims SET owner = ?, expires_at = ? WHERE item_id = ?",
                         (owner, now + ttl, item_id))
        return "fresh" if row[0] == owner else "stale"

"""Keeping ``bot.db`` in shape while the bot runs: old rows pruned in small batches, and the file
checked to still be the one the bot opened.

Without pruning every handled event leaves two claim rows and every notice an outbox row for good
(about 150 bytes an event in claims alone: 180 MB a million). The ``Housekeeper`` deletes, in
transactions of ``BATCH`` rows with a short pause between (so no other write waits long on the
lock), rows older than ``RETENTION_S``: event and message claims (Slack stops redelivering after
hours), delivered notices (their key dedupes a notice re-emitted after a restart, which happens
within minutes), words a run has already taken from the inbox, and (several replicas) leases
on threads with no run going and claims on notices already posted. Pending notices, questions and
threads are never touched: old buttons must keep working. Freed pages are reused by SQLite, so
the file stays flat under steady traffic (``bench/housekeeping.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Literal, NoReturn

from bot.errors import StoreVanished
from bot.store.core import Conn, StoreCore
from engine import StoreError

__all__ = ["BATCH", "EXIT_VANISHED", "Housekeeper", "HousekeepingMixin", "Pruned", "RETENTION_S",
           "Table"]

log = logging.getLogger(__name__)

RETENTION_S = 24 * 3600.0
BATCH = 500  # rows a transaction: a few ms of holding the write lock
PAUSE_S = 0.05  # between batches: other writers (claims before an ack) get the lock
PRUNE_BUSY_S = 1.0  # a batch's wait on another process's write lock (other operations wait 30 s)
PRUNE_EVERY_S = 600.0
CHECK_EVERY_S = 2.0  # how soon a deleted or replaced bot.db stops the bot
EXIT_VANISHED = 3  # flower-bot's exit status when bot.db vanished (the service manager restarts it)

Table = Literal["events", "messages", "outbox", "inbox", "leases", "outbox_claims"]
TABLES: tuple[Table, ...] = ("events", "messages", "outbox", "inbox", "leases", "outbox_claims")
# The rows of each table that may go, oldest first; each query walks an index from its old end.
_OLD: dict[Table, str] = {
    "events": "SELECT event_id FROM events WHERE at < ? ORDER BY at LIMIT ?",
    "messages": "SELECT channel, ts FROM messages WHERE at < ? ORDER BY at LIMIT ?",
    "outbox": "SELECT id FROM outbox WHERE state = 'sent' AND sent_at < ? ORDER BY id LIMIT ?",
    "inbox": "SELECT id FROM inbox WHERE drained_at IS NOT NULL AND drained_at < ? LIMIT ?",
    # a replica's lease on a thread with no run going, unchanged for the retention: its next
    # event takes a lease anew (several replicas only)
    "leases": "SELECT l.team, l.channel, l.thread_ts FROM leases l LEFT JOIN threads t ON t.team = l.team "
              "AND t.channel = l.channel AND t.thread_ts = l.thread_ts WHERE (t.state IS NULL OR t.state NOT IN "
              "('queued', 'running', 'waiting')) AND COALESCE(t.updated_at, l.expires_at) < ? LIMIT ?",
    # a claim's expiry stops moving once its notice is posted or given up
    "outbox_claims": "SELECT item_id FROM outbox_claims WHERE expires_at < ? AND item_id NOT IN "
                     "(SELECT id FROM outbox WHERE state = 'pending') LIMIT ?",
}
# Each table's primary key (no rowid: PostgreSQL has none)
_KEY: dict[Table, str] = {"events": "event_id", "messages": "(channel, ts)", "outbox": "id", "inbox": "id",
                          "leases": "(team, channel, thread_ts)", "outbox_claims": "item_id"}


class HousekeepingMixin(StoreCore):
    """The pruning half of ``BotStore``: one small batch at a time."""

    async def prune_batch(self, table: Table, older_than_s: float, limit: int = BATCH) -> int:
        """Delete at most ``limit`` of ``table``'s prunable rows (see the module) older than
        ``older_than_s`` seconds, oldest first, in one transaction; return how many went."""
        if table not in _OLD:
            raise StoreError(f"no table {table!r} to prune. Use one of: {', '.join(TABLES)}.")
        return await self._run(self._prune_batch, table, self._now() - older_than_s, limit)

    def _prune_batch(self, conn: Conn, table: Table, before: float, limit: int) -> int:
        # a short wait on another process's lock: this connection's other users (a claim before
        # its ack) queue behind it, and a skipped batch only waits for the next round
        with self._immediate(conn, wait=PRUNE_BUSY_S):
            return conn.execute(f"DELETE FROM {table} WHERE {_KEY[table]} IN ({_OLD[table]})",
                                (before, limit)).rowcount


@dataclass
class Pruned:
    """One housekeeping round: rows deleted per table, batches run, the longest batch in seconds."""

    rows: dict[Table, int] = field(default_factory=dict)
    batches: int = 0
    longest_s: float = 0.0

    @property
    def total(self) -> int:
        """Rows deleted in all tables."""
        return sum(self.rows.values())


class Housekeeper:
    """Prunes ``store`` every ``prune_every_s`` and checks its file every ``check_every_s``.

    ``run()`` goes on until the file vanishes (``StoreVanished``, logged once as an error: the
    caller stops the bot); a busy or failing database only skips a round (logged). ``prune()``
    is one round, for tests and the bench; ages are by the store's own clock.
    """

    def __init__(self, store: HousekeepingMixin, *, retention_s: float = RETENTION_S, batch: int = BATCH,
                 pause_s: float = PAUSE_S, prune_every_s: float = PRUNE_EVERY_S,
                 check_every_s: float = CHECK_EVERY_S) -> None:
        self.store, self.retention_s, self.batch, self.pause_s = store, retention_s, batch, pause_s
        self.prune_every_s, self.check_every_s = prune_every_s, check_every_s

    async def prune(self) -> Pruned:
        """Delete every prunable row older than the retention, table by table, ``batch`` rows a
        transaction with ``pause_s`` between batches; return what went."""
        done = Pruned()
        for table in TABLES:
            while True:
                started = time.perf_counter()
                gone = await self.store.prune_batch(table, self.retention_s, self.batch)
                done.longest_s = max(done.longest_s, time.perf_counter() - started)
                done.batches += 1
                done.rows[table] = done.rows.get(table, 0) + gone
                if gone < self.batch:
                    break
                await asyncio.sleep(self.pause_s)
        return done

    async def run(self) -> NoReturn:
        """Check the file and prune, forever; raises ``StoreVanished`` (logged) when bot.db goes."""
        next_prune = time.monotonic()  # a first round at start: a bot that was down has a backlog
        try:
            while True:
                self.store.check_file()
                if time.monotonic() >= next_prune:
                    await self._round()
                    next_prune = time.monotonic() + self.prune_every_s
                await asyncio.sleep(self.check_every_s)
        except StoreVanished as exc:
            log.error("flower-bot is stopping: %s", exc)
            raise

    async def _round(self) -> None:
        try:
            done = await self.prune()
        except StoreVanished:
            raise
        except StoreError as exc:  # busy or failing: the rows wait for the next round
            log.warning("housekeeping of bot.db skipped this round: %s", exc)
            return
        if done.total:
            log.info("housekeeping: %d old row(s) deleted from bot.db (%s) in %d batch(es), longest %.0f ms",
                     done.total, ", ".join(f"{t} {n}" for t, n in done.rows.items() if n), done.batches,
                     done.longest_s * 1000)

"""Which bot process acts on a thread: one process on SQLite (``Solo``), or one of several replicas
on PostgreSQL (``Replicas``), each owning threads through leases in the database.

A replica acts only on threads it owns. An event for a thread another live replica owns is
forwarded through the database (``forwards``) and handled there, the same code as if it had
arrived there; an event for a thread nobody owns (new, or its owner died) makes the receiver its
owner. Each replica renews its leases every ``heartbeat_s``; a replica that stops renewing (killed,
frozen, cut off) loses them after ``lease_s``, and the next scan of another replica
(every ``heartbeat_s``) takes over its threads that have a run going or an event waiting, and
resumes those runs. Takeover so comes within ``lease_s + heartbeat_s`` of the death (20 s by default).

Forwarded events are found by polling, every ``poll_s`` (0.2 s): a bound on their latency that
survives a dropped database connection, which LISTEN/NOTIFY would not (a notification sent while
the listener reconnects is lost). ``bench/replicas.py`` measures it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from bot.core.thread import ThreadKey
from bot.store.bot_store import BotStore, StoreError
from bot.store.leases import Claim

__all__ = ["HEARTBEAT_S", "LEASE_S", "POLL_S", "Replicas", "Solo", "replica_id"]

log = logging.getLogger(__name__)

LEASE_S = 15.0  # a lease not renewed for this long is anyone's: takeover fits in 30 s with margin
HEARTBEAT_S = 5.0  # how often leases are renewed and orphaned threads looked for
POLL_S = 0.2  # how often forwarded events are looked for: their latency bound

Resume = Callable[[ThreadKey], Awaitable[Any]]
Dispatch = Callable[[ThreadKey, str, dict[str, Any]], Awaitable[Any]]
Lost = Callable[[ThreadKey], Awaitable[Any]]


def replica_id() -> str:
    """This process's replica id: host, pid and a random part (a restarted process is another replica)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class Solo:
    """One bot process on its own database file: every thread is its own, nothing is forwarded."""

    clustered = False

    async def here(self, key: ThreadKey) -> bool:
        """True: this process owns every thread."""
        return True

    async def forward(self, key: ThreadKey, op: str, args: dict[str, Any]) -> None:
        raise RuntimeError("a single bot process never forwards an event")  # here() is always True

    async def claim_notice(self, item_id: int) -> Claim | None:
        """Every notice is this process's to post, and never posted by anyone else."""
        return "fresh"

    def start(self, *, resume: Resume, dispatch: Dispatch, lost: Lost) -> None:
        """Nothing runs in the background: the start resumes every run itself (``Jobs.resume_all``)."""

    async def close(self) -> None:
        """Nothing to give up."""


class Replicas:
    """One replica among several on a PostgreSQL ``store``; see the module docstring.

    ``start`` begins the heartbeat, the takeover scan and the forwarded-event poll, calling
    ``resume`` for each run taken over, ``dispatch`` for each event forwarded here, and ``lost``
    for each thread whose lease another replica took (this one was too slow: its run must stop
    without a word, the new owner resumes it). ``close`` releases every lease, so the others take
    over at their next scan instead of after the expiry.
    """

    clustered = True

    def __init__(self, store: BotStore, *, id: str | None = None, lease_s: float = LEASE_S,
                 heartbeat_s: float = HEARTBEAT_S, poll_s: float = POLL_S) -> None:
        if heartbeat_s >= lease_s:
            raise ValueError(f"heartbeat_s ({heartbeat_s}) must be shorter than lease_s ({lease_s}); "
                             "a lease would expire between two renewals.")
        self.store, self.id = store, id or replica_id()
        self.lease_s, self.heartbeat_s, self.poll_s = lease_s, heartbeat_s, poll_s
        self._mine: set[ThreadKey] = set()
        self._tasks: list[asyncio.Task[None]] = []

    async def here(self, key: ThreadKey) -> bool:
        """True when this replica owns ``key`` now (it may have just taken it); False when another
        live replica does (forward the event)."""
        owner = await self.store.take_lease(key, self.id, self.lease_s)
        if owner is None:
            self._mine.add(ThreadKey(*key))
        return owner is None

    async def forward(self, key: ThreadKey, op: str, args: dict[str, Any]) -> None:
        """Keep the event for the thread's owner, which handles it within ``poll_s``."""
        await self.store.forward(key, op, args)

    async def claim_notice(self, item_id: int) -> Claim | None:
        """Claim an outbox item for this replica to post (``LeasesMixin.claim_outbox``)."""
        return await self.store.claim_outbox(item_id, self.id, self.lease_s)  # renewed with the leases

    def start(self, *, resume: Resume, dispatch: Dispatch, lost: Lost) -> None:
        self._tasks = [asyncio.create_task(self._beat(resume, lost), name="flower-replica-beat"),
                       asyncio.create_task(self._poll(dispatch), name="flower-replica-poll")]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        try:
            await self.store.release_leases(self.id)
        except StoreError as exc:  # the others take over after the expiry instead
            log.warning("could not release this replica's leases (%s); others take its threads over in %.0f s",
                        exc, self.lease_s)

    async def _beat(self, resume: Resume, lost: Lost) -> None:
        """Renew, stop what was lost, take over what has no live owner; every ``heartbeat_s``."""
        while True:
            try:
                still = await self.store.renew_leases(self.id, self.lease_s)
                for key in sorted(self._mine - still):  # taken over (this one was too slow), or pruned
                    await lost(key)
                self._mine = still
                for key in await self.store.take_orphans(self.id, self.lease_s):
                    self._mine.add(key)
                    log.info("replica %s took over thread %s", self.id, key)
                    await resume(key)
            except StoreError as exc:  # the database is away: try again at the next beat
                log.warning("replica %s could not renew its leases: %s", self.id, exc)
            await asyncio.sleep(self.heartbeat_s)

    async def _poll(self, dispatch: Dispatch) -> None:
        """Handle the events forwarded to this replica's threads, in arrival order."""
        while True:
            try:
                for item in await self.store.forwarded_to(self.id):
                    try:
                        await dispatch(item.thread, item.op, item.args)
                    except StoreError:
                        raise
                    except Exception:  # one broken event must not stop the others; it is logged, then dropped
                        log.exception("handling forwarded %s for thread %s failed", item.op, item.thread)
                    await self.store.drop_forward(item.id)
            except StoreError as exc:
                log.warning("replica %s could not read forwarded events: %s", self.id, exc)
            await asyncio.sleep(self.poll_s)

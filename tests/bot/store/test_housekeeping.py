"""Housekeeping of bot.db on real SQLite files (and of the same tables on a real PostgreSQL): what a
round deletes and keeps, in batches; the file staying flat under steady traffic; the background
loop riding out a lock and stopping when the file goes."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from contextlib import closing

import pytest

from bot.core.thread import ThreadKey
from bot.errors import StoreVanished
from bot.store.bot_store import BotStore
from bot.store.housekeeping import RETENTION_S, Housekeeper
from tests.bot.helpers.store import Backend, Clock

T1 = ThreadKey("T0TEAM", "C0GENERAL", "1712345678.000100")
DAY = 86400.0


def _unsynced(store: BotStore) -> None:
    """No fsync per commit on this test's file: thousands of rows in seconds (sizes are the same).
    The test cluster of PostgreSQL never syncs."""
    if isinstance(store, BotStore):
        store._call(lambda conn: conn.execute("PRAGMA synchronous = OFF"))


async def _event(store: BotStore, n: int, clock: Clock) -> None:
    """One handled reply, as the bot records it: its claims, and a notice posted for it."""
    ts = f"{1712345679 + n}.000100"
    assert await store.claim(T1, ts, event_id=f"Ev{n:09d}", known_thread=True)
    await store.enqueue(T1, "note", f"note:{n}", {"text": f"notice {n} " + "x" * 200})
    item = (await store.pending_outbox(limit=1))[0]
    await store.mark_sent(item.id, f"{clock.now:.6f}")


async def test_a_round_deletes_old_claims_and_delivered_notices_in_batches_and_keeps_the_rest(backend: Backend):
    clock = Clock()
    store = backend.store(clock=clock)
    _unsynced(store)
    await store.upsert_thread(T1, workspace="w", state="parked")
    qid = await store.add_question(T1, "q1", "Which port?", ["8080", "9000"])
    for n in range(1200):
        assert await store.claim(T1, f"{1712345679 + n}.000100", event_id=f"Ev{n:09d}", known_thread=True)
    for key in ("sent", "pending", "failed"):
        await store.enqueue(T1, "note", f"old:{key}", {"text": key})
    items = {i.dedupe_key: i for i in await store.pending_outbox()}
    await store.mark_sent(items["old:sent"].id, "1.1")
    await store.mark_failed(items["old:failed"].id, "channel_not_found", None)
    await store.push_inbox(T1, "taken", "U1", "1712345000.000001")
    await store.drain_inbox(T1)
    await store.push_inbox(T1, "not taken yet", "U1", "1712345000.000002")

    clock.now += RETENTION_S + 60  # all of the above is a day old; what follows is new
    assert await store.claim(T1, "1712399999.000100", event_id="EvNEW", known_thread=True)
    await store.enqueue(T1, "note", "new:sent", {"text": "new"})
    await store.mark_sent((await store.outbox_item("new:sent")).id, "2.2")

    done = await Housekeeper(store, batch=500, pause_s=0).prune()
    assert done.rows == {"events": 1200, "messages": 1200, "outbox": 1, "inbox": 1, "leases": 0, "outbox_claims": 0}
    assert done.batches == 3 + 3 + 1 + 1 + 1 + 1  # 500 + 500 + 200 a claim table: no transaction holds more
    assert (await Housekeeper(store, pause_s=0).prune()).total == 0

    assert not await store.claim(T1, "1712399999.000100", event_id="EvNEW", known_thread=True)  # kept
    assert (await store.outbox_item("old:sent")) is None and (await store.outbox_item("new:sent")).state == "sent"
    assert (await store.outbox_item("old:pending")).state == "pending"
    assert (await store.outbox_item("old:failed")).state == "failed"
    assert [i.text for i in await store.drain_inbox(T1)] == ["not taken yet"]
    assert (await store.get_thread(T1)).state == "parked" and (await store.get_question(qid)).open
    if backend.kind == "sqlite":
        assert await store.integrity_check() == "ok"
    await store.aclose()


async def _pages(store: BotStore) -> int:
    return (await store._rows("PRAGMA page_count"))[0][0]


# -- SQLite only: the file's size, its lock and its disappearance ------------------------------


async def test_bot_db_stays_flat_under_steady_traffic_and_grows_without_housekeeping(tmp_path):
    per_day, days = 800, 4
    sizes: dict[bool, list[int]] = {}
    for housekeeping in (True, False):
        clock = Clock()
        store = BotStore(tmp_path / f"bot-{housekeeping}.db", clock=clock)
        _unsynced(store)
        await store.upsert_thread(T1, workspace="w")
        keeper = Housekeeper(store, pause_s=0)
        sizes[housekeeping] = []
        for n in range(per_day * days):
            clock.now += DAY / per_day
            await _event(store, n, clock)
            if housekeeping and n % (per_day // 24) == 0:  # about hourly
                await keeper.prune()
            if (n + 1) % per_day == 0:
                sizes[housekeeping].append(await _pages(store))
        await store.aclose()
    kept, grown = sizes[True], sizes[False]
    # a day's rows are always kept; from day 2 on the freed pages hold the new rows
    assert max(kept[1:]) <= kept[1] * 1.1, kept
    assert grown[-1] >= grown[0] * 3, grown
    assert kept[-1] * 2 < grown[-1], (kept, grown)


async def test_the_loop_rides_out_a_lock_and_stops_once_when_the_file_goes(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="bot.store.housekeeping")
    clock = Clock()
    store = BotStore(tmp_path / "bot.db", clock=clock)  # 30 s for other operations; a batch waits 1 s
    await store.claim_event("Ev1")
    clock.now += 2 * RETENTION_S
    keeper = Housekeeper(store, pause_s=0, prune_every_s=0.05, check_every_s=0.02)

    async def logged(needle: str) -> None:
        while not any(needle in r.getMessage() for r in caplog.records):
            await asyncio.sleep(0.02)

    with closing(sqlite3.connect(store.path, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        running = asyncio.create_task(keeper.run())
        await asyncio.wait_for(logged("housekeeping of bot.db skipped this round"), 20)  # not after 30 s
        other.execute("ROLLBACK")
    assert (await store._rows("PRAGMA busy_timeout"))[0][0] == 30_000  # the others' wait is as it was
    await asyncio.wait_for(logged("1 old row(s) deleted"), 30)
    assert not running.done()
    store.path.unlink()
    with pytest.raises(StoreVanished):
        await asyncio.wait_for(running, 30)
    stops = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(stops) == 1 and "flower-bot is stopping" in stops[0].getMessage()
    assert "was deleted while the bot had it open" in stops[0].getMessage()
    await store.aclose()

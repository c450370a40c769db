"""Leases, forwarded events and outbox claims (``bot.store.leases``) on both backends: who owns a
thread, what a takeover takes, what a slow replica loses, and what housekeeping removes."""

from __future__ import annotations

from bot.core.thread import ThreadKey
from bot.store.housekeeping import RETENTION_S, Housekeeper
from tests.bot.helpers.store import Backend, Clock

T1 = ThreadKey("T0TEAM", "C0GENERAL", "1712345678.000100")
T2 = ThreadKey("T0TEAM", "C0GENERAL", "1712345678.000200")
T3 = ThreadKey("T0TEAM", "C0GENERAL", "1712345678.000300")


async def test_a_thread_has_one_live_owner_and_an_expired_lease_is_anyones(backend: Backend):
    clock = Clock()
    store = backend.store(clock=clock)
    assert await store.take_lease(T1, "a", 15) is None  # new: a's
    assert await store.take_lease(T1, "b", 15) == "a"  # a's and alive: b forwards
    assert await store.take_lease(T1, "a", 15) is None  # a again: still a's, renewed
    assert await store.lease_owner(T1) == "a"
    clock.now += 16
    assert await store.lease_owner(T1) is None
    assert await store.take_lease(T1, "b", 15) is None  # expired: b's now
    clock.now += 1
    assert await store.renew_leases("a", 15) == set()  # a was too slow: nothing is a's any more
    assert await store.renew_leases("b", 15) == {T1}
    assert await store.release_leases("b") == 1 and await store.lease_owner(T1) is None
    await store.aclose()


async def test_takeover_takes_only_threads_with_a_run_going_or_an_event_waiting(backend: Backend):
    clock = Clock()
    store = backend.store(clock=clock)
    for key, state in ((T1, "running"), (T2, "done"), (T3, "done")):
        await store.upsert_thread(key, workspace=key.thread_ts, state=state)
        assert await store.take_lease(key, "dead", 15) is None
    await store.forward(T3, "message", {"event": {"text": "hi"}})
    assert await store.take_orphans("b", 15) == []  # the owner is alive
    clock.now += 16  # ... and now it is not
    assert sorted(await store.take_orphans("b", 15)) == sorted([T1, T3])  # T2 is idle: no owner needed
    assert await store.take_orphans("c", 15) == []  # taken once
    assert [f.op for f in await store.forwarded_to("b")] == ["message"]
    assert await store.forwarded_to("dead") == []
    await store.aclose()


async def test_an_outbox_claim_is_one_replicas_and_a_dead_claimers_is_stale(backend: Backend):
    clock = Clock()
    store = backend.store(clock=clock)
    await store.enqueue(T1, "note", "n1", {"text": "one"})
    item = (await store.pending_outbox())[0]
    assert await store.claim_outbox(item.id, "a", 15) == "fresh"
    assert await store.claim_outbox(item.id, "a", 15) == "fresh"  # its own again
    assert await store.claim_outbox(item.id, "b", 15) is None  # a is posting it
    clock.now += 10
    await store.renew_leases("a", 15)  # a's heartbeat renews its claim on a notice not posted yet
    clock.now += 10
    assert await store.claim_outbox(item.id, "b", 15) is None
    clock.now += 16  # a stopped renewing: it may have posted it, so b must look first
    assert await store.claim_outbox(item.id, "b", 15) == "stale"
    await store.aclose()


async def test_housekeeping_drops_idle_threads_leases_and_claims_on_posted_notices(backend: Backend):
    clock = Clock()
    store = backend.store(clock=clock)
    await store.upsert_thread(T1, workspace="w1", state="running")
    await store.upsert_thread(T2, workspace="w2", state="done")
    for key in (T1, T2):
        await store.take_lease(key, "a", 15)
    for key in ("posted", "waiting"):
        await store.enqueue(T1, "note", key, {"text": key})
    items = {i.dedupe_key: i for i in await store.pending_outbox()}
    for item in items.values():
        assert await store.claim_outbox(item.id, "a", 15) == "fresh"
    await store.mark_sent(items["posted"].id, "1.1")

    clock.now += RETENTION_S + 60
    await store.renew_leases("a", 15)  # a lives on: its leases are renewed, not its finished claims
    done = await Housekeeper(store, pause_s=0).prune()
    assert done.rows["leases"] == 1 and done.rows["outbox_claims"] == 1
    assert await store.lease_owner(T1) == "a" and await store.lease_owner(T2) is None  # T2 idle a day
    assert await store.claim_outbox(items["waiting"].id, "b", 15) is None  # still a's
    assert await store.renew_leases("a", 15) == {T1}
    await store.aclose()

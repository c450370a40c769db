"""Several bot replicas on one database (issue 17), in one process: each thread is owned by one
replica through a lease; an event that reaches another replica is forwarded to the owner; a
replica that goes away has its threads taken over and their runs resumed, saying so once.

Real slack-bolt against the fake Slack (one Socket Mode connection per replica, the test picks
which one receives each event), the real CLI against the offline model. ``test_replica_chaos``
kills replicas as processes.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from bot.core.thread import ThreadKey
from bot.store.replicas import Replicas
from engine.testing.roles import CLARIFIER
from tests.bot.helpers.app import ACHIEVED, CHANNEL, OPTIONS, posted, question, script
from tests.bot.helpers.process import first_button, posts

REPLICA = dataclasses.replace(OPTIONS, replicas=True, lease_s=3.0, heartbeat_s=0.5)
DONE = "Done: the goal is achieved"


@pytest.fixture(params=["sqlite", "postgres"])
def two_replicas(request, make_bot):
    """``await two_replicas()``: replica a on Socket Mode connection 0, b on connection 1, sharing
    one bot.db, or one PostgreSQL database (FLOWER_DATABASE_URL)."""
    env = {"FLOWER_DATABASE_URL": request.getfixturevalue("postgres_url")} if request.param == "postgres" else {}

    async def start():
        return await make_bot(REPLICA, **env), await make_bot(REPLICA, **env)
    return start


async def test_a_click_at_another_replica_reaches_the_run_where_it_runs(two_replicas, slack_env, fake_model):
    slack = slack_env
    script(fake_model, verdicts=(ACHIEVED,))
    a, b = await two_replicas()
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event, to=1)  # b receives the mention: the thread is b's
    thread, key = event["ts"], ThreadKey("T0001", CHANNEL, event["ts"])
    q_ts, q_call = await question(slack, thread)
    assert await a.store.lease_owner(key) == b.replicas.id

    await slack.click(CHANNEL, q_ts, first_button(q_call)["action_id"], user="U0BOB", to=0)  # a receives the click
    await posted(slack, thread, DONE)

    clar = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
    assert any("Python" in t for _, t in clar[-1].tool_results)  # the click's answer reached b's clarifier
    assert key not in a.jobs._runs  # the run was b's alone
    assert await a.store.lease_owner(key) == b.replicas.id
    assert await a.store.forwarded_to(b.replicas.id) == []  # handled, then forgotten
    assert len(posts(slack, thread, DONE)) == 1
    assert len([c for c in slack.calls("chat.postMessage", thread_ts=thread)
                if (c.body.get("text") or "").startswith("Question")]) == 1


async def test_a_replica_that_stops_has_its_run_taken_over_and_resumed_once(two_replicas, slack_env, fake_model):
    slack = slack_env
    script(fake_model, verdicts=(ACHIEVED,))
    a, b = await two_replicas()
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event, to=1)
    thread, key = event["ts"], ThreadKey("T0001", CHANNEL, event["ts"])
    q_ts, q_call = await question(slack, thread)
    await slack.wait_until(lambda: len([r for r in fake_model.message_requests if CLARIFIER(r.body)]) >= 1)

    await b.close()  # a clean stop gives its leases up: a takes the thread over at its next look
    await posted(slack, thread, "bot restarted")
    await slack.wait_until(lambda: len([r for r in fake_model.message_requests if CLARIFIER(r.body)]) >= 2,
                           what="the resumed clarifier asking again, in the model")
    assert await a.store.lease_owner(key) == a.replicas.id
    await slack.click(CHANNEL, q_ts, first_button(q_call)["action_id"], user="U0BOB", to=0)  # the old button
    await posted(slack, thread, DONE)

    assert len(posts(slack, thread, "bot restarted")) == 1
    assert len(posts(slack, thread, DONE)) == 1
    assert len([c for c in slack.calls("chat.postMessage", thread_ts=thread)
                if (c.body.get("text") or "").startswith("Question")]) == 1  # not asked twice in Slack


async def test_a_replica_too_slow_to_renew_loses_the_thread_and_stops_its_run(backend):
    """A replica frozen past its lease (a long GC pause, a suspended VM, a cut network): another
    takes the thread over and resumes it; the slow one, at its next heartbeat, learns it lost the
    thread and stops its run there, so the run never goes on in two places."""
    store = backend.store()
    key = ThreadKey("T0001", CHANNEL, "1712345678.000100")
    await store.upsert_thread(key, workspace="w", state="running")
    slow = Replicas(store, id="slow", lease_s=1.0, heartbeat_s=0.2)
    quick = Replicas(store, id="quick", lease_s=1.0, heartbeat_s=0.2)
    assert await slow.here(key)  # slow owns the thread; its heartbeat is not running (frozen)
    resumed, lost = asyncio.Queue(), asyncio.Queue()

    async def never(*_):
        raise AssertionError("no event was forwarded")

    quick.start(resume=resumed.put, dispatch=never, lost=lost.put)
    assert await asyncio.wait_for(resumed.get(), 60) == key  # taken over once the lease ran out
    assert not await slow.here(key)  # slow's events now go to quick
    slow.start(resume=resumed.put, dispatch=never, lost=lost.put)  # slow wakes up
    assert await asyncio.wait_for(lost.get(), 60) == key
    assert resumed.empty() and lost.empty()  # nothing else taken or lost by anyone
    await slow.close()
    assert await store.lease_owner(key) == "quick"  # slow's close gave up nothing of quick's
    await quick.close()
    assert await store.lease_owner(key) is None
    await store.aclose()

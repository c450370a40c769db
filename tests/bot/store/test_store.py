"""The bot store through real SQLite files and a real PostgreSQL: what survives a restart, what is
handled once, who wins a race. Each test runs on both backends unless it is about the SQLite file."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bot.core.thread import ThreadKey
from bot.store.bot_store import BotStore, StoreError
from tests.bot.helpers.store import Backend, Clock, sqlite_only

T1 = ThreadKey("T0TEAM", "C0GENERAL", "1712345678.000100")
T2 = ThreadKey("T0TEAM", "C0GENERAL", "1712345999.000200")
HELPER = Path(__file__).parents[1] / "helpers" / "store_race.py"  # a second process, run as a script


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "home" / "bot.db"


@pytest.fixture
async def store(backend: Backend, clock: Clock):
    s = backend.store(clock=clock)
    yield s
    if backend.kind == "sqlite":
        assert await s.integrity_check() == "ok"
    await s.aclose()


def reopen(backend: Backend, store: BotStore, clock: Clock) -> BotStore:
    """A restart: the connection closed, a new store on the same file (or database)."""
    store.close()
    return backend.store(clock=clock)


# -- threads ------------------------------------------------------------------------------------


async def test_threads_survive_a_restart(backend: Backend, store: BotStore, clock: Clock) -> None:
    created = await store.upsert_thread(T1, workspace="req-1", created_by="U0ALICE", state="running")
    assert (created.workspace, created.state, created.created_by) == ("req-1", "running", "U0ALICE")
    clock.now += 5
    updated = await store.upsert_thread(T1, status_ts="1712345678.000200")
    assert updated.workspace == "req-1" and updated.state == "running"  # untouched fields stay
    assert updated.status_ts == "1712345678.000200" and updated.updated_at == created.updated_at + 5
    assert await store.touch_seen(T1, "1712345678.000300")
    again = reopen(backend, store, clock)
    thread = await again.get_thread(T1)
    assert thread == replace(updated, last_seen_ts="1712345678.000300")
    assert await again.get_thread(T2) is None
    again.close()


async def test_upsert_needs_a_workspace_to_create(store: BotStore) -> None:
    with pytest.raises(StoreError, match=r"not stored yet, and no workspace was given\. Pass workspace="):
        await store.upsert_thread(T1, state="queued")
    assert await store.get_thread(T1) is None


async def test_unknown_state_is_refused(store: BotStore) -> None:
    await store.upsert_thread(T1, workspace="w")
    with pytest.raises(StoreError, match=r"unknown thread state 'paused'\. Use one of: done, failed, idle"):
        await store.set_state(T1, "paused")  # type: ignore[arg-type]
    assert not await store.set_state(T2, "done")  # no such thread


async def test_active_threads_in_creation_order(store: BotStore, clock: Clock) -> None:
    states = ["waiting", "done", "queued", "failed", "running", "stopped", "idle"]
    for i, state in enumerate(states):
        clock.now += 1
        await store.upsert_thread(ThreadKey("T", "C", f"1.{i:06d}"), workspace=f"w{i}", state=state)
    assert [t.workspace for t in await store.active_threads()] == ["w0", "w2", "w4"]
    assert await store.set_state(ThreadKey("T", "C", "1.000004"), "done")
    assert [t.state for t in await store.active_threads()] == ["waiting", "queued"]


@pytest.mark.parametrize(
    ("first", "second", "moved"),
    [
        ("1712345678.000100", "1712345678.000101", True),
        ("1712345678.000101", "1712345678.000100", False),
        ("1712345678.000100", "1712345678.000100", False),
        ("999999999.999999", "1000000000.000000", True),  # not a string comparison
        ("1712345678.1234567", "1712345678.1234568", True),  # not a float comparison
    ],
)
async def test_touch_seen_only_moves_forward(store: BotStore, first: str, second: str, moved: bool) -> None:
    await store.upsert_thread(T1, workspace="w")
    assert await store.touch_seen(T1, first)
    assert await store.touch_seen(T1, second) is moved
    assert (await store.get_thread(T1)).last_seen_ts == (second if moved else first)


async def test_touch_seen_refuses_a_bad_ts_and_a_missing_thread(store: BotStore) -> None:
    assert not await store.touch_seen(T1, "1.0")
    with pytest.raises(StoreError, match=r"'yesterday' is not a Slack message ts"):
        await store.touch_seen(T1, "yesterday")


# -- handled events -----------------------------------------------------------------------------


async def test_claims_are_once_even_across_a_restart(backend: Backend, store: BotStore, clock: Clock) -> None:
    assert await store.claim_event("Ev01")
    assert not await store.claim_event("Ev01")
    assert await store.claim_message("C0GENERAL", "1712345678.000100")
    assert not await store.claim_message("C0GENERAL", "1712345678.000100")
    assert await store.claim_message("C0RANDOM", "1712345678.000100")  # same ts, other channel
    again = reopen(backend, store, clock)
    assert not await again.claim_event("Ev01")
    assert not await again.claim_message("C0GENERAL", "1712345678.000100")
    assert await again.claim_event("Ev02")
    again.close()


async def test_one_claim_does_event_then_message_then_last_seen(store: BotStore) -> None:
    reply = "1712345678.000200"
    assert not await store.claim(T1, reply, event_id="Ev1", known_thread=True)  # not a thread of ours
    assert await store.claim_event("Ev1") and await store.claim_message(T1.channel, reply)  # so nothing was claimed
    await store.upsert_thread(T1, workspace="w")
    assert await store.claim(T1, "1712345678.000300", event_id="Ev2", known_thread=True)
    assert (await store.get_thread(T1)).last_seen_ts == "1712345678.000300"
    assert not await store.claim(T1, "1712345678.000300", event_id="Ev3", known_thread=True)  # the pair's twin
    assert not await store.claim_event("Ev3")  # its event id stays claimed, as claim_event alone would
    assert not await store.claim(T1, "1712345678.000400", event_id="Ev2", known_thread=True)  # a redelivery
    assert await store.claim_message(T1.channel, "1712345678.000400")  # ...claims no message
    assert await store.claim(T2, T2.thread_ts, event_id=None, known_thread=False)  # a new mention: no thread yet
    assert await store.get_thread(T2) is None
    assert await store.claim(T1, "1712345678.000250", event_id=None, known_thread=True)  # older: claimed, not seen
    assert (await store.get_thread(T1)).last_seen_ts == "1712345678.000300"
    with pytest.raises(StoreError, match=r"'junk' is not a Slack message ts"):
        await store.claim(T1, "junk", event_id="Ev9", known_thread=True)
    assert await store.claim_event("Ev9")  # refused before anything was claimed


async def test_concurrent_claims_have_one_winner(backend: Backend, clock: Clock) -> None:
    stores = [backend.store(clock=clock) for _ in range(3)]
    wins = await asyncio.gather(*(s.claim_event(f"Ev{i % 10}") for i in range(60) for s in stores))
    assert sum(wins) == 10
    for s in stores:
        s.close()


async def test_prune_forgets_only_old_claims(store: BotStore, clock: Clock) -> None:
    await store.claim_event("old")
    await store.claim_message("C1", "1.000001")
    clock.now += 3 * 86400
    await store.claim_event("new")
    assert await store.prune_events(2 * 86400) == 2
    assert await store.claim_event("old")  # forgotten, so claimable again
    assert not await store.claim_event("new")
    assert await store.prune_events(2 * 86400) == 0


# -- questions ----------------------------------------------------------------------------------


async def test_question_life(store: BotStore) -> None:
    qid = await store.add_question(T1, "k1", "目标达不成,怎么办?", ["接受", "修改目标"], asked_by="判定",
                                   default="接受", deadline=2_000_000.0)
    q = await store.get_question(qid)
    assert (q.text, q.options, q.asked_by, q.default, q.deadline) == ("目标达不成,怎么办?", ("接受", "修改目标"),
                                                                      "判定", "接受", 2_000_000.0)
    assert q.open and not q.answered and q.message_ts is None
    assert await store.set_question_message(qid, "1712345678.000500")
    assert [p.id for p in await store.pending_questions(T1)] == [qid]
    assert await store.pending_questions(T2) == []
    assert await store.answer_question(qid, "接受", "U0ALICE")
    assert not await store.answer_question(qid, "修改目标", "U0BOB")  # the first answer stands
    q = await store.get_question((T1, "k1"))
    assert (q.answer, q.answered_by, q.message_ts) == ("接受", "U0ALICE", "1712345678.000500")
    assert await store.pending_questions(T1) == []
    assert (await store.answered_unconsumed(T1, "k1")).id == qid
    taken = await store.consume_answer(qid)
    assert taken.answer == "接受" and taken.consumed_at is not None
    assert await store.consume_answer(qid) is None
    assert await store.answered_unconsumed(T1, "k1") is None


async def test_asking_again_returns_the_open_question(store: BotStore) -> None:
    first = await store.add_question(T1, "k1", "which?", ["a", "b"])
    assert await store.add_question(T1, "k1", "which?", ["a", "b"]) == first
    assert await store.add_question(T2, "k1", "which?", ["a", "b"]) != first  # other thread
    other = await store.add_question(T1, "k2", "why?")
    assert [q.id for q in await store.pending_questions(T1)] == [first, other]
    await store.consume_answer(first)
    assert await store.add_question(T1, "k1", "which?", ["a", "b"]) > first  # closed: a new ask


async def test_timed_out_question_refuses_a_late_answer(store: BotStore) -> None:
    qid = await store.add_question(T1, "k", "go on?", ["yes", "no"], default="yes")
    closed = await store.consume_answer((T1, "k"))
    assert closed.id == qid and closed.answer is None and not closed.open
    assert not await store.answer_question(qid, "no", "U0ALICE")
    assert not await store.answer_question((T1, "k"), "no", "U0ALICE")
    assert (await store.get_question(qid)).answer is None


async def test_close_questions_closes_a_threads_untaken_questions_only(store: BotStore) -> None:
    open_q = await store.add_question(T1, "k1", "which?", ["a", "b"])
    answered = await store.add_question(T1, "k2", "why?")
    assert await store.answer_question(answered, "because", "U0ALICE")
    taken = await store.add_question(T1, "k3", "done?")
    await store.consume_answer(taken)
    other = await store.add_question(T2, "k1", "which?", ["a", "b"])
    assert [q.id for q in await store.close_questions(T1)] == [open_q]  # the unanswered one, to update its message
    assert await store.pending_questions(T1) == []
    assert await store.answered_unconsumed(T1, "k2") is None  # a fresh run asking it again is asked anew
    assert not await store.answer_question(open_q, "a", "U0BOB")
    assert [q.id for q in await store.pending_questions(T2)] == [other]  # other threads untouched
    assert await store.close_questions(T1) == []


async def test_unknown_questions(store: BotStore) -> None:
    assert await store.get_question(12345) is None
    assert await store.get_question((T1, "nope")) is None
    assert not await store.answer_question(12345, "x", "U0ALICE")
    assert not await store.answer_question((T1, "nope"), "x", "U0ALICE")
    assert await store.consume_answer((T1, "nope")) is None
    with pytest.raises(StoreError, match=r"by its id \(an int\) or by \(thread key, question_key\); got 'k'"):
        await store.get_question("k")  # type: ignore[arg-type]


async def test_buttons_work_after_a_restart_and_a_resumed_run_is_not_asked_twice(
    backend: Backend, store: BotStore, clock: Clock
) -> None:
    qid = await store.add_question(T1, "clarify#1", "Which database?", ["SQLite", "Postgres"],
                                   message_ts="1712345678.000900")
    store.close()  # the bot goes down with the question open

    after = backend.store(clock=clock)
    assert [q.id for q in await after.pending_questions(T1)] == [qid]
    assert await after.answer_question(qid, "Postgres", "U0BOB")  # an old button, clicked now
    after.close()

    resumed = backend.store(clock=clock)  # the run resumes and asks the same question
    waiting = await resumed.answered_unconsumed(T1, "clarify#1")
    assert waiting is not None and (waiting.answer, waiting.answered_by) == ("Postgres", "U0BOB")
    assert await resumed.add_question(T1, "clarify#1", "Which database?", ["SQLite", "Postgres"]) == qid
    assert (await resumed.consume_answer(qid)).answer == "Postgres"
    assert await resumed.answered_unconsumed(T1, "clarify#1") is None
    resumed.close()


async def test_two_stores_answering_at_once_have_one_winner(backend: Backend, clock: Clock) -> None:
    """Two connections (each in its own worker thread) race on 20 questions: one winner each."""
    a, b = backend.store(clock=clock), backend.store(clock=clock)
    ids = [await a.add_question(T1, f"k{i}", f"q{i}", ["x", "y"]) for i in range(20)]
    results = await asyncio.gather(*(s.answer_question(qid, s is a and "x" or "y", who)
                                     for qid in ids for s, who in ((a, "U0A"), (b, "U0B"))))
    assert sum(results) == len(ids)
    for qid, (won_a, won_b) in zip(ids, zip(results[::2], results[1::2])):
        assert won_a != won_b
        q = await b.get_question(qid)
        assert q.answered_by == ("U0A" if won_a else "U0B") and q.answer == ("x" if won_a else "y")
    a.close()
    b.close()


async def test_two_processes_answering_at_once_have_one_winner(backend: Backend, clock: Clock) -> None:
    store = backend.store(clock=clock)
    ids = [await store.add_question(T1, f"k{i}", f"q{i}", ["x"]) for i in range(40)]
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable, str(HELPER), str(backend.target), name, *map(str, ids),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        for name in ("P1", "P2")
    ]
    for proc in procs:
        assert (await proc.stdout.readline()).strip() == b"ready"
    for proc in procs:  # both start together
        proc.stdin.write(b"go\n")
        await proc.stdin.drain()
    outputs = [await proc.communicate() for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0]
    wins = [json.loads(out) for out, _ in outputs]
    for qid in ids:
        assert [w[str(qid)] for w in wins].count(True) == 1, qid
        q = await store.get_question(qid)
        assert q.answered_by == ("P1" if wins[0][str(qid)] else "P2")
    if backend.kind == "sqlite":
        assert await store.integrity_check() == "ok"
    store.close()


# -- outbox -------------------------------------------------------------------------------------


async def test_outbox_posts_each_notice_once_even_across_a_restart(backend: Backend, store: BotStore,
                                                                   clock: Clock) -> None:
    payload = {"text": "判定:未达成 ✅", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "x"}}]}
    assert await store.enqueue(T1, "verdict", "T1/verdict/1", payload)
    assert not await store.enqueue(T1, "verdict", "T1/verdict/1", {"text": "other"})
    [item] = await store.pending_outbox()
    assert (item.kind, item.dedupe_key, item.payload, item.state) == ("verdict", "T1/verdict/1", payload, "pending")
    assert await store.mark_sent(item.id, "1712345678.000700")
    assert await store.pending_outbox() == []
    again = reopen(backend, store, clock)
    assert not await again.enqueue(T1, "verdict", "T1/verdict/1", payload)
    assert await again.sent_ts("T1/verdict/1") == "1712345678.000700"
    assert await again.sent_ts("never") is None
    again.close()


async def test_outbox_order_and_retries(store: BotStore, clock: Clock) -> None:
    for key, thread in [("a1", T1), ("b1", T2), ("a2", T1), ("b2", T2), ("a3", T1)]:
        await store.enqueue(thread, "notice", key, {"text": key})
    keys = lambda items: [i.dedupe_key for i in items]  # noqa: E731
    assert keys(await store.pending_outbox()) == ["a1", "b1", "a2", "b2", "a3"]
    assert keys(await store.pending_outbox(limit=2)) == ["a1", "b1"]
    first = (await store.pending_outbox())[0]
    assert await store.mark_failed(first.id, "ratelimited", clock.now + 30)
    # a1 waits, so T1's later notices wait behind it; T2 goes on.
    assert keys(await store.pending_outbox()) == ["b1", "b2"]
    clock.now += 30
    assert keys(await store.pending_outbox()) == ["a1", "b1", "a2", "b2", "a3"]
    item = await store.outbox_item("a1")
    assert (item.attempts, item.error, item.state) == (1, "ratelimited", "pending")
    assert await store.mark_failed(first.id, "channel_not_found", None)  # give up on it
    assert keys(await store.pending_outbox()) == ["b1", "a2", "b2", "a3"]
    assert (await store.outbox_item("a1")).state == "failed"
    assert not await store.mark_failed(first.id, "again", None)  # no longer pending


async def test_outbox_refuses_non_json(store: BotStore) -> None:
    with pytest.raises(StoreError, match=r"'status' notice 'k' cannot be stored as JSON .*nothing was queued"):
        await store.enqueue(T1, "status", "k", {"when": object()})
    assert await store.pending_outbox() == []


# -- inbox --------------------------------------------------------------------------------------


async def test_inbox_drains_once_in_order_and_survives_a_restart(backend: Backend, store: BotStore,
                                                                 clock: Clock) -> None:
    assert await store.push_inbox(T1, "also add tests", "U0ALICE", "1712345678.000801")
    assert not await store.push_inbox(T1, "also add tests", "U0ALICE", "1712345678.000801")  # redelivered
    assert await store.push_inbox(T2, "other thread", "U0BOB", "1712345678.000802")
    assert await store.push_inbox(T1, "用中文写文档 🌸", "U0BOB", "1712345678.000803")
    again = reopen(backend, store, clock)
    items = await again.drain_inbox(T1)
    assert [(i.text, i.by, i.ts) for i in items] == [
        ("also add tests", "U0ALICE", "1712345678.000801"), ("用中文写文档 🌸", "U0BOB", "1712345678.000803")]
    assert await again.drain_inbox(T1) == []
    assert [i.text for i in await again.drain_inbox(T2)] == ["other thread"]
    again.close()


# -- SQLite only: the file ----------------------------------------------------------------------


@sqlite_only
async def test_file_is_wal_with_sound_integrity(store: BotStore, db: Path) -> None:
    await store.claim_event("Ev1")
    assert db.exists()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT event_id FROM events").fetchall() == [("Ev1",)]
    finally:
        conn.close()


async def test_at_home(tmp_path: Path) -> None:
    s = BotStore.at_home(tmp_path / "fh")
    assert await s.claim_event("e")
    assert (tmp_path / "fh" / "bot.db").exists()
    s.close()


async def test_not_a_database(tmp_path: Path) -> None:
    bad = tmp_path / "bot.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    s = BotStore(bad)
    with pytest.raises(StoreError, match=r"is not a SQLite database, or is damaged .*Move the file aside"):
        await s.claim_event("e")
    s.close()


async def test_a_folder_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    s = BotStore(tmp_path / "file" / "bot.db")
    with pytest.raises(StoreError, match=r"cannot create the folder .* Set FLOWER_HOME to a writable folder"):
        await s.claim_event("e")


async def test_newer_schema_is_refused(db: Path) -> None:
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    s = BotStore(db)
    with pytest.raises(StoreError, match=r"written by a newer flower-bot \(schema 99, this one knows 1\)"):
        await s.get_thread(T1)
    s.close()


async def test_open_pull_requests_are_watched_until_merged_or_retired_and_pokes_make_them_due(
        store: BotStore) -> None:
    await store.save_pr_report(T1, "flower/a", "{}")  # proposed: not opened, not watched
    assert await store.watched_pull_requests() == []
    await store.set_pull_request(T1, "flower/a", number=3, url="https://github.com/acme/app/pull/3", state="open",
                                 pushed="c0ffee")
    await store.set_pull_request(T2, "flower/b", number=4, url="https://github.com/acme/app/pull/4", state="open",
                                 pushed="beef")
    [a, b] = await store.watched_pull_requests()
    assert (a.pr.number, a.poll_at, a.state) == (3, 0.0, "{}")  # never read: due at once
    await store.save_pr_watch(T1, "flower/a", poll_at=1e9, state='{"seen": ["line:1"]}')
    await store.save_pr_watch(T2, "flower/b", poll_at=1e9, state="{}")
    by_thread = {w.pr.thread: w for w in await store.watched_pull_requests()}
    assert by_thread[T1].state == '{"seen": ["line:1"]}' and by_thread[T1].poll_at == 1e9

    await store.poke_pull_requests(number=None, branch="", sha="c0ffee")  # a check on the pushed commit
    by_thread = {w.pr.thread: w for w in await store.watched_pull_requests()}
    assert by_thread[T1].poll_at == 0 and by_thread[T2].poll_at == 1e9
    await store.poke_pull_requests(number=4)
    assert all(w.poll_at == 0 for w in await store.watched_pull_requests())

    await store.retire_pr_watches(T1)  # /new: the thread's work moved to a new branch
    await store.poke_pull_requests(number=3, branch="flower/a")  # a webhook does not bring it back
    await store.set_pr_state(T2, "flower/b", "merged")
    assert await store.watched_pull_requests() == []

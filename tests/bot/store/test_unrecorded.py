"""A mention or reply that storage refuses is answered in its thread, at once, without bot.db.

Real slack-bolt against the fake Slack, real SQLite. The faults are made for real: another
connection holding the write lock past the bot's busy timeout; a full database (the bot's own
connection capped with ``PRAGMA max_page_count`` once the pages it writes to are full); a
read-only one (``PRAGMA query_only`` on the bot's connection); a workspaces folder that cannot be
written (an immutable folder for root, which ignores modes; a 0555 one otherwise).
"""

from __future__ import annotations

import asyncio
import errno
import os
import sqlite3
import subprocess
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from bot.core.thread import ThreadKey
from bot.errors import StoreVanished
from bot.inbound.gate import cannot_take
from bot.store.bot_store import BotStore, StoreError
from bot.store.faults import StorageFault, diagnose
from tests.bot.helpers.app import CHANNEL, CLARIFY_ONLY, asked_thread, brief_only, posted

CANNOT = "I can't take this right now"
BUSY_TIMEOUT_S = 0.5  # the bot's wait on another connection's lock, in these tests (30 s in production)


# -- the diagnosis, on errors real SQLite and the OS raise --------------------------------------


def _refused(store: BotStore, statement: str) -> StoreError:
    with pytest.raises(StoreError) as caught:
        store._call(lambda conn: conn.execute(statement))
    return caught.value


def test_sqlite_faults_are_named_by_sqlites_own_code(tmp_path):
    insert = "INSERT INTO events (event_id, at) VALUES ('Ev000000001', 2e9)"  # shaped as Slack's
    store = BotStore(tmp_path / "bot.db", busy_timeout=0.05)
    store._call(lambda conn: None)
    with locked(store.path):
        busy = _refused(store, insert)
    assert diagnose(busy) == StorageFault("database", "busy", str(busy))
    assert store._call(_fill_up, "events") > 0
    assert diagnose(_refused(store, insert)).fault == "full"
    store._call(_unfill, "events")
    store._call(lambda conn: conn.execute("PRAGMA query_only = 1"))
    assert diagnose(_refused(store, insert)).fault == "read-only"
    store.close()
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite at all" * 512)
    with pytest.raises(StoreError) as caught:
        BotStore(junk)._call(lambda conn: None)
    assert diagnose(caught.value).fault == "broken"


@pytest.mark.parametrize(("exc", "fault"), [
    (OSError(errno.ENOSPC, "No space left on device", "/h/workspaces/x"), ("workspaces", "full")),
    (OSError(errno.EROFS, "Read-only file system", "/h/workspaces/x/runs"), ("workspaces", "read-only")),
    (PermissionError(errno.EACCES, "Permission denied", "/srv/repo/.git"), ("files", "read-only")),
    (PermissionError(errno.EPERM, "Operation not permitted"), ("files", "read-only")),
    (StoreVanished("'/h/bot.db' was deleted"), ("database", "gone")),
])
def test_os_faults_and_a_vanished_file_are_storage_faults(exc, fault):
    found = diagnose(exc, workspaces=Path("/h/workspaces"))
    assert (found.where, found.fault) == fault
    assert CANNOT in cannot_take(found) and "try again in a minute" in cannot_take(found)


@pytest.mark.parametrize("exc", [
    ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"),  # Slack or the model unreachable
    StoreError("'x' is not a Slack message ts"),  # the store refused a value: a bug, not the disk
    ValueError("boom"),
    KeyError("channel"),
])
def test_other_errors_are_not_storage_faults(exc):
    assert diagnose(exc) is None


# -- the faults, made on a running bot ---------------------------------------------------------


def _fill_up(conn: sqlite3.Connection, table: str) -> int:
    """Cap the file at its size and fill the last page of ``table`` (and its indexes), on this
    connection only: the next row of that table needs a page there is no room for. Rows shaped
    like the bot's, keys sorting before its own, so its next row lands where the filler did."""
    (pages,) = conn.execute("PRAGMA page_count").fetchone()
    conn.execute(f"PRAGMA max_page_count = {pages}")
    sql = {"events": "INSERT INTO events (event_id, at) VALUES (?, ?)",
           "outbox": "INSERT INTO outbox (team, channel, thread_ts, kind, dedupe_key, payload, created_at) "
                     "VALUES ('A', 'A', '1.1', 'filler', ?, '{}', ?)"}[table]
    n = 0
    while True:
        n += 1
        try:
            conn.execute(sql, (f"A{n:010d}", float(n)))
        except sqlite3.OperationalError as exc:
            assert "full" in str(exc)
            return n - 1


def _unfill(conn: sqlite3.Connection, table: str) -> None:
    conn.execute("PRAGMA max_page_count = 4294967294")
    conn.execute(f"DELETE FROM {table} WHERE {'event_id' if table == 'events' else 'dedupe_key'} LIKE 'A%'")


@contextmanager
def locked(db: Path):
    """Another connection holding bot.db's write lock until the block ends."""
    with closing(sqlite3.connect(db, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            other.execute("ROLLBACK")


@pytest.fixture
def short_busy_timeout(monkeypatch):
    monkeypatch.setattr("bot.store.sqlite_base.BUSY_TIMEOUT_S", BUSY_TIMEOUT_S)


async def _all_posted(bot) -> None:
    """Wait until the outbox has nothing pending: a lock taken then hits no post in flight."""
    while await bot.store.pending_outbox():
        await asyncio.sleep(0.05)


def _cannot(slack, thread_ts: str) -> list:
    return [c for c in slack.calls("chat.postMessage", thread_ts=thread_ts) if CANNOT in (c.body.get("text") or "")]


async def _answered(slack, event, *, why: str):
    """The answer in the event's thread saying ``why``; the event was acked."""
    thread = event.get("thread_ts") or event["ts"]
    said = await posted(slack, thread, CANNOT)
    assert why in said.body["text"] and "try again in a minute" in said.body["text"]
    return said


async def test_a_mention_while_bot_db_is_locked_past_the_busy_timeout_is_answered(
        short_busy_timeout, make_bot, slack_env, fake_model):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)
    brief_only(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    with locked(bot.config.db_path):
        envelope = await slack.send_event(event)
        await slack.wait_ack(envelope)
        await _answered(slack, event, why="the bot's database is busy")
    # a late redelivery after the lock (Slack's, of an event whose ack came late) starts nothing
    mark = slack.mark()
    await slack.wait_ack(await slack.redeliver(envelope))
    assert await bot.store.get_thread(ThreadKey("T0001", CHANNEL, event["ts"])) is None
    assert len(slack.calls("chat.postMessage", thread_ts=event["ts"])) == 1
    # once the lock is gone, a mention works as ever
    again = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(again)
    await posted(slack, again["ts"], "Done", after=mark)


async def test_a_mention_when_bot_db_is_full_or_read_only_is_answered(make_bot, slack_env, fake_model):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)
    brief_only(fake_model)

    assert await bot.store._run(_fill_up, "events") > 0  # the claim's own table: refused before the ack
    full = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.wait_ack(await slack.send_event(full))
    await _answered(slack, full, why="the disk under the bot's database is full")
    await bot.store._run(_unfill, "events")

    assert await bot.store._run(_fill_up, "outbox") > 0  # claimed, acked, then the first notice is refused
    late = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.wait_ack(await slack.send_event(late))
    await _answered(slack, late, why="the disk under the bot's database is full")
    await bot.store._run(_unfill, "outbox")

    await bot.store._run(lambda conn: conn.execute("PRAGMA query_only = 1"))
    read_only = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.wait_ack(await slack.send_event(read_only))
    await _answered(slack, read_only, why="the bot's database is read-only")
    await bot.store._run(lambda conn: conn.execute("PRAGMA query_only = 0"))

    assert not fake_model.message_requests  # no run started for any of them
    for event in (full, read_only):
        assert await bot.store.get_thread(ThreadKey("T0001", CHANNEL, event["ts"])) is None


@contextmanager
def read_only_folder(path: Path):
    """``path`` (a folder) made unwritable for this process for the block, or the test skipped."""
    if os.geteuid() != 0:
        path.chmod(0o555)
        try:
            yield
        finally:
            path.chmod(0o755)
        return
    # root writes through any mode: an immutable folder refuses even root (ext4, xfs, btrfs)
    made = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot make {path} unwritable for root here: chattr +i said {made.stderr.strip()!r}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


async def test_a_mention_whose_workspace_cannot_be_made_is_answered(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)
    brief_only(fake_model)
    workspaces = tmp_path / "home" / "workspaces"
    workspaces.mkdir(parents=True, exist_ok=True)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    with read_only_folder(workspaces):
        await slack.wait_ack(await slack.send_event(event))
        await _answered(slack, event, why="the workspaces folder is read-only")
    assert not fake_model.message_requests and not list(workspaces.iterdir())
    assert await bot.store.get_thread(ThreadKey("T0001", CHANNEL, event["ts"])) is None


async def test_a_reply_during_a_lock_shorter_than_the_busy_timeout_reaches_its_run(make_bot, slack_env, fake_model):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)  # the production busy timeout: 30 s
    thread, q_ts, _ = await asked_thread(slack, fake_model)
    await _all_posted(bot)
    reply = slack.user_message(CHANNEL, "Go, please", thread_ts=thread)
    with locked(bot.config.db_path):
        await slack.send_event(reply)
        await asyncio.sleep(1.0)  # the lock lasts a while: the reply's claim waits on it
        assert not slack.calls("chat.update", ts=q_ts)
    updated = await slack.wait_for("chat.update", ts=q_ts)
    assert "Go, please" in str(updated.arg("blocks"))
    await posted(slack, thread, "Done")
    assert not [c for c in slack.calls("chat.postMessage", thread_ts=thread) if CANNOT in (c.body.get("text") or "")]


async def test_a_reply_the_lock_keeps_out_is_answered_and_chatter_elsewhere_is_not(
        short_busy_timeout, make_bot, slack_env, fake_model):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)
    thread, q_ts, _ = await asked_thread(slack, fake_model)
    await _all_posted(bot)
    reply = slack.user_message(CHANNEL, "Go, please", thread_ts=thread)
    elsewhere = slack.user_message(CHANNEL, "lunch?", thread_ts=slack.user_message(CHANNEL, "hi")["ts"])
    pair = slack.thread_mention(CHANNEL, thread, "also a README")  # app_mention + message, one ts
    with locked(bot.config.db_path):
        await slack.wait_ack(await slack.send_event(elsewhere))
        await slack.wait_ack(await slack.send_event(reply))
        await _answered(slack, reply, why="the bot's database is busy")
        for envelope in await slack.send_events(*pair):
            await slack.wait_ack(envelope)
        await slack.wait_until(lambda: len(_cannot(slack, thread)) == 2, what="the pair answered")
    assert not slack.calls("chat.postMessage", thread_ts=elsewhere["thread_ts"])
    await _all_posted(bot)
    assert len(_cannot(slack, thread)) == 2  # the reply's and the pair's: one answer for the pair
    # the question is still open: the person says it again, and it is taken
    await slack.send_event(slack.user_message(CHANNEL, "Go, please", thread_ts=thread))
    updated = await slack.wait_for("chat.update", ts=q_ts)
    assert "Go, please" in str(updated.arg("blocks"))

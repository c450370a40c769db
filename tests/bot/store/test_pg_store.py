"""The bot's state on a real PostgreSQL, as several bot replicas share it: the tables are SQLite's
twins; two replicas racing for one event, message or click have one winner; what one records the
other sees; a replica's lock is waited for, within the busy timeout; an unreachable database says
which (never its password) and what to fix; FLOWER_DATABASE_URL puts a whole bot on it.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from pathlib import Path

import pytest

from bot.core.thread import ThreadKey
from bot.settings.config import Config
from bot.store.bot_store import BotStore, StoreError
from bot.store.factory import open_bot_store
from bot.store.faults import diagnose
from bot.store.housekeeping import RETENTION_S, Housekeeper
from bot.store.pg_conn import to_dollars
from bot.store.pg_store import PgBotStore
from bot.store.pg_tables import COMPONENT, MIGRATIONS
from bot.store.schema import SCHEMA
from engine.testing.postgres import PostgresServer
from tests.bot.helpers.store import Clock, Locker

T1 = ThreadKey("T0TEAM", "C0GENERAL", "1712345678.000100")
_KIND = {"TEXT": "text", "text": "text", "REAL": "number", "double precision": "number",
         "INTEGER": "integer", "integer": "integer", "bigint": "integer"}


def db_name(url: str) -> str:
    return url.split("?")[0].rsplit("/", 1)[-1]


# -- the tables -------------------------------------------------------------------------------------


def _sqlite_tables() -> dict[str, dict[str, object]]:
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    tables: dict[str, dict[str, object]] = {}
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
        info = conn.execute(f"PRAGMA table_info({name})").fetchall()  # cid, name, type, notnull, default, pk
        indexes = conn.execute(f"PRAGMA index_list({name})").fetchall()  # seq, name, unique, origin, partial
        cols = lambda index: tuple(r[2] for r in conn.execute(f"PRAGMA index_info({index})"))  # noqa: E731
        tables[name] = {
            # an INTEGER PRIMARY KEY is the rowid, and SQLite reports it nullable: it never is
            "columns": [(c[1], _KIND[c[2]], bool(c[3] or c[5])) for c in info],
            "primary key": tuple(c[1] for c in sorted((c for c in info if c[5]), key=lambda c: c[5])),
            "unique": sorted(cols(i[1]) for i in indexes if i[3] == "u"),
            "indexes": sorted((i[1], cols(i[1])) for i in indexes if i[3] == "c"),
        }
    conn.close()
    return tables


async def _postgres_tables(url: str) -> dict[str, dict[str, object]]:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        tables: dict[str, dict[str, object]] = {}
        names = [r[0] for r in await conn.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
            "AND table_name <> 'schema_version' ORDER BY table_name")]
        for name in names:
            info = await conn.fetch("SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                                    "WHERE table_name = $1 ORDER BY ordinal_position", name)
            keys = await conn.fetch(
                "SELECT i.indisprimary, i.indisunique, c.relname, array(SELECT a.attname FROM unnest(i.indkey) "
                "WITH ORDINALITY AS k(attnum, n) JOIN pg_attribute a ON a.attrelid = i.indrelid AND "
                "a.attnum = k.attnum ORDER BY k.n) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                "WHERE i.indrelid = $1::regclass", name)
            tables[name] = {
                "columns": [(r[0], _KIND[r[1]], r[2] == "NO") for r in info],
                "primary key": next(tuple(k[3]) for k in keys if k[0]),
                "unique": sorted(tuple(k[3]) for k in keys if k[1] and not k[0]),
                "indexes": sorted((k[2], tuple(k[3])) for k in keys if not k[1]),
            }
        return tables
    finally:
        await conn.close()


async def test_the_postgresql_tables_are_the_sqlite_tables_twins(postgres_url: str) -> None:
    """Names, columns in order, their kinds and NOT NULL, keys and indexes: a table added to one
    schema file and not the other fails here."""
    store = PgBotStore(postgres_url)
    await store.get_thread(T1)  # migrates
    await store.aclose()
    pg, lite = await _postgres_tables(postgres_url), _sqlite_tables()
    assert sorted(pg) == sorted(lite)
    for table in lite:
        assert pg[table] == lite[table], table


async def test_a_database_from_a_newer_bot_is_refused_by_name(postgres_url: str,
                                                              postgres_server: PostgresServer) -> None:
    first = PgBotStore(postgres_url)
    await first.claim_event("Ev1")
    await first.aclose()
    postgres_server.sql(f"INSERT INTO schema_version (component, version, what) VALUES ('{COMPONENT}', "
                        f"{len(MIGRATIONS) + 1}, 'later')", db_name(postgres_url))
    later = PgBotStore(postgres_url)
    with pytest.raises(StoreError, match=rf"the 'bot' tables in .* are at schema version {len(MIGRATIONS) + 1}, "
                                         rf"and this flower knows versions up to {len(MIGRATIONS)} only\. Upgrade flower"):
        await later.claim_event("Ev2")
    await later.aclose()


@pytest.mark.parametrize(("sql", "pg"), [
    ("a = ? AND b = ?", "a = $1 AND b = $2"),
    ("x = '?' AND y = ?", "x = '?' AND y = $1"),  # in a literal: text, not a placeholder
    ('SELECT "odd?name" FROM t WHERE z IN (?, ?, ?)', 'SELECT "odd?name" FROM t WHERE z IN ($1, $2, $3)'),
    ("x = 'it''s ?' OR y = ?", "x = 'it''s ?' OR y = $1"),
    ("no placeholders", "no placeholders"),
])
def test_placeholders_are_numbered_outside_quotes(sql: str, pg: str) -> None:
    assert to_dollars(sql) == pg


# -- two replicas -----------------------------------------------------------------------------------


def _replica(url: str, start: threading.Barrier, ids: list[int], name: str, out: dict[str, dict]) -> None:
    """One replica in a thread with its own event loop and pool, as a second process would have."""
    async def go() -> dict:
        store = PgBotStore(url)
        await store.get_thread(T1)  # connected and migrated before the start
        start.wait()
        won = {}
        for i, qid in enumerate(ids):
            won[f"claim{i}"] = await store.claim(T1, f"1712345679.{i:06d}", event_id=f"Ev{i}", known_thread=True)
            won[f"event{i}"] = await store.claim_event(f"Other{i}")
            won[f"message{i}"] = await store.claim_message("C0RANDOM", f"1712345679.{i:06d}")
            won[f"click{i}"] = await store.answer_question(qid, f"answer from {name}", name)
        await store.aclose()
        return won
    out[name] = asyncio.run(go())


async def test_two_replicas_claiming_the_same_events_messages_and_clicks_at_once_have_one_winner(
    postgres_url: str
) -> None:
    setup = PgBotStore(postgres_url)
    await setup.upsert_thread(T1, workspace="w", state="waiting")
    ids = [await setup.add_question(T1, f"k{i}", f"q{i}", ["x", "y"]) for i in range(30)]
    start, out = threading.Barrier(2), {}
    threads = [threading.Thread(target=_replica, args=(postgres_url, start, ids, name, out)) for name in ("R1", "R2")]
    for t in threads:
        t.start()
    await asyncio.to_thread(lambda: [t.join(240) for t in threads])
    assert sorted(out) == ["R1", "R2"]
    for what in out["R1"]:
        assert [out["R1"][what], out["R2"][what]].count(True) == 1, what
    for i, qid in enumerate(ids):
        q = await setup.get_question(qid)
        winner = "R1" if out["R1"][f"click{i}"] else "R2"
        assert (q.answered_by, q.answer) == (winner, f"answer from {winner}")
    assert (await setup.get_thread(T1)).last_seen_ts == f"1712345679.{len(ids) - 1:06d}"
    await setup.aclose()


async def test_what_one_replica_records_the_other_sees(postgres_url: str) -> None:
    a, b = PgBotStore(postgres_url), PgBotStore(postgres_url)
    qid = await a.add_question(T1, "clarify#1", "Which database?", ["SQLite", "Postgres"])
    assert [q.id for q in await b.pending_questions(T1)] == [qid]
    assert await a.answer_question(qid, "Postgres", "U0BOB")  # the click reached replica a
    seen = await b.answered_unconsumed(T1, "clarify#1")  # the run lives on replica b
    assert seen is not None and (seen.answer, seen.answered_by) == ("Postgres", "U0BOB")
    assert not await b.answer_question(qid, "SQLite", "U0CAROL")  # a late click on b loses
    assert (await b.consume_answer(qid)).answer == "Postgres"
    assert await a.consume_answer(qid) is None
    assert await a.enqueue(T1, "verdict", "T1/verdict/1", {"text": "done"})
    assert not await b.enqueue(T1, "verdict", "T1/verdict/1", {"text": "done"})  # posted once, whoever queues
    [item] = await b.pending_outbox()
    assert await b.mark_sent(item.id, "1712345678.000900")
    assert await a.sent_ts("T1/verdict/1") == "1712345678.000900" and await a.pending_outbox() == []
    await a.aclose()
    await b.aclose()


# -- the lock ---------------------------------------------------------------------------------------


async def _waiting_for_the_lock(url: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        while not await conn.fetchval("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"):
            await asyncio.sleep(0.02)
    finally:
        await conn.close()


async def test_a_write_waits_for_another_replicas_lock_within_the_busy_timeout(postgres_url: str) -> None:
    store, patient = PgBotStore(postgres_url, busy_timeout=0.3), PgBotStore(postgres_url)
    await store.upsert_thread(T1, workspace="w")
    locker = Locker("postgres", postgres_url)
    await locker.hold()
    try:
        with pytest.raises(StoreError, match=r"the bot's tables in postgresql://postgres@/.* stayed locked by another "
                                             r"connection for more than 0\.3 s, so nothing was written\. .*"
                                             r"pg_stat_activity") as caught:
            await store.claim_event("Ev1")
        assert diagnose(caught.value).fault == "busy"
        assert (await store.get_thread(T1)).workspace == "w"  # reads never wait
        waiting = asyncio.create_task(patient.claim(T1, "1712345678.000200", event_id="Ev2", known_thread=True))
        await asyncio.wait_for(_waiting_for_the_lock(postgres_url), 30)
        assert not waiting.done()
    finally:
        await locker.release()
    assert await asyncio.wait_for(waiting, 30)  # it went on once the lock was let go
    assert await store.claim_event("Ev1")  # the refused claim had written nothing
    await store.aclose()
    await patient.aclose()


async def test_the_housekeeper_rides_out_a_replicas_lock(postgres_url: str, caplog) -> None:
    caplog.set_level(logging.INFO, logger="bot.store.housekeeping")
    clock = Clock()
    store = PgBotStore(postgres_url, clock=clock)  # 30 s for other operations; a batch waits 1 s
    await store.claim_event("Ev1")
    clock.now += 2 * RETENTION_S
    keeper = Housekeeper(store, pause_s=0, prune_every_s=0.05, check_every_s=0.02)

    async def logged(needle: str) -> None:
        while not any(needle in r.getMessage() for r in caplog.records):
            await asyncio.sleep(0.02)

    locker = Locker("postgres", postgres_url)
    await locker.hold()
    running = asyncio.create_task(keeper.run())
    try:
        await asyncio.wait_for(logged("housekeeping of bot.db skipped this round"), 20)  # not after 30 s
        await locker.release()
        await asyncio.wait_for(logged("1 old row(s) deleted"), 30)
        assert not running.done()  # nothing to check on a server: it goes on
    finally:
        await locker.release()
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
    await store.aclose()


# -- out of reach -----------------------------------------------------------------------------------


async def test_a_database_out_of_reach_says_which_without_the_password_and_what_to_fix() -> None:
    nowhere = PgBotStore("postgresql://flower:s3cret@127.0.0.1:1/flower", connect_timeout=5)  # a closed port
    with pytest.raises(StoreError, match=r"cannot reach PostgreSQL at postgresql://flower:\*\*\*@127\.0\.0\.1:1/flower "
                                         r".*Check that the server is running") as caught:
        await nowhere.claim_event("Ev1")
    assert "s3cret" not in str(caught.value) and diagnose(caught.value).where == "database"
    await nowhere.aclose()
    with PostgresServer() as server:  # its own cluster, stopped below: the session's stays up
        url = server.create_database().replace("postgres@", "postgres:s3cret@")  # trust login: the password is unused
        store = PgBotStore(url, connect_timeout=5)
        assert await store.claim_event("Ev1")
        await asyncio.to_thread(server.restart)  # the pool's idle connection is cut: the next call reconnects
        assert not await store.claim_event("Ev1")
        server.stop()
        gone = r"cannot reach PostgreSQL at postgresql://postgres:\*\*\*@/t_1\?host="
        with pytest.raises(StoreError, match=gone) as caught:
            await store.claim_event("Ev2")
        assert "s3cret" not in str(caught.value) and diagnose(caught.value).fault == "broken"
        await store.aclose()


# -- FLOWER_DATABASE_URL ----------------------------------------------------------------------------


async def test_open_bot_store_takes_the_url_and_never_opens_a_file_under_flower_home(
    tmp_path: Path, postgres_url: str
) -> None:
    home = tmp_path / "home"
    on_file = open_bot_store(Config(bot_token="xoxb-1", app_token="xapp-1", home=home))
    assert isinstance(on_file, BotStore) and on_file.path == home / "bot.db"
    on_server = open_bot_store(Config(bot_token="xoxb-1", app_token="xapp-1", home=home, database_url=postgres_url))
    assert isinstance(on_server, PgBotStore) and on_server.url == postgres_url
    assert await on_server.claim_event("Ev1")
    await on_server.aclose()
    assert not home.exists()


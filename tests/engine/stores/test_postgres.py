"""PostgresSessionStore and its trim/prune layers on a real, throwaway PostgreSQL cluster.

The SDK's conformance suite (nothing skipped) on the plain and the pruning store, the same extras
as the SQLite store's tests (monotonic mtime shared with the summary, uuid dedup, cascade delete,
whole batches under concurrency, two processes, bad input), the versioned schema, the errors, the
test kit itself, and what the model is shown on resume being the same on both backends.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import SessionStore, fold_session_summary
from claude_agent_sdk.testing import run_session_store_conformance

from engine import StoreError
from engine.authoring import (
    PostgresSessionStore,
    PrunePolicy,
    PruningPostgresSessionStore,
    PruningSessionStore,
    TrimmingPostgresSessionStore,
    TrimPolicy,
)
from engine._stores.pg_schema import Migration, migrate
from engine.testing import PostgresServer, PostgresServerError
from engine.testing import postgres as kit
from tests.engine.stores.backends import assert_both_writers_whole, two_writers

KEY: Any = {"project_key": "proj", "session_id": "sess"}
SUB1: Any = {**KEY, "subpath": "subagents/agent-1"}
SUB2: Any = {**KEY, "subpath": "subagents/agent-2"}
OPTIONAL = ("list_sessions", "list_session_summaries", "delete", "list_subkeys")
DATA = Path(__file__).parent / "data"


def x(**fields: Any) -> dict[str, Any]:
    return {"type": "x", **fields}


def db_name(url: str) -> str:
    return url.split("?")[0].rsplit("/", 1)[-1]


@pytest.fixture
async def store(postgres_url: str):
    s = PostgresSessionStore(postgres_url)
    yield s
    await s.aclose()


# -- the protocol ----------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [PostgresSessionStore, TrimmingPostgresSessionStore, PruningPostgresSessionStore])
async def test_passes_the_sdk_conformance_suite_with_nothing_skipped(
    cls: type, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    for name in OPTIONAL:  # the suite silently skips any optional method the store inherits
        assert getattr(cls, name) is not getattr(SessionStore, name), name
    made: list[Any] = []
    numbers = itertools.count()

    def make() -> Any:
        url = postgres_server.create_database()  # one empty database per contract
        made.append(cls(url) if cls is PostgresSessionStore else cls(url, tmp_path / f"ws{next(numbers)}"))
        return made[-1]

    try:
        await run_session_store_conformance(make)
    finally:
        for s in made:
            await s.aclose()
            postgres_server.drop_database(s.url)
    assert len(made) == 15, "one probe plus a fresh store per contract: all 14 contracts ran"


async def test_mtime_strictly_increases_and_is_shared_with_the_summary(store: PostgresSessionStore) -> None:
    second = PostgresSessionStore(store.url)  # another pool on the database, as another machine
    seen: list[int] = []
    try:
        for i in range(60):  # far more writes than milliseconds: equal clock times are bumped
            writer = (store, second)[i % 2]
            sid = "abc"[i % 3]
            await writer.append({"project_key": "p", "session_id": sid}, [x(n=i)])
            await writer.append({"project_key": "p", "session_id": sid, "subpath": "subagents/s"}, [x(n=i)])
            listed = {e["session_id"]: e["mtime"] for e in await store.list_sessions("p")}
            summaries = {e["session_id"]: e["mtime"] for e in await second.list_session_summaries("p")}
            assert summaries == listed
            seen.append(listed[sid])
    finally:
        await second.aclose()
    assert all(later > earlier for earlier, later in itertools.pairwise(seen))
    assert seen[0] > 1e12  # epoch milliseconds


async def test_uuid_is_the_idempotency_key_within_one_key(store: PostgresSessionStore) -> None:
    a, b, c = x(uuid="a", v=1), x(uuid="b", v=1), x(uuid="c", v=1)
    untagged, odd = {"type": "custom-title", "customTitle": "t"}, x(uuid=5)
    await store.append(KEY, [a, b, x(uuid="a", v=2)])  # a repeat inside one batch: the first wins
    await store.append(KEY, [x(uuid="b", v=3), c, untagged, odd])  # a retried entry is ignored
    await store.append(KEY, [untagged, odd])  # no (string) uuid: appended again
    await store.append(SUB1, [a, a])
    assert await store.load(KEY) == [a, b, c, untagged, odd, untagged, odd]
    assert await store.load(SUB1) == [a]


async def test_load_returns_fresh_objects_and_any_text_round_trips(store: PostgresSessionStore) -> None:
    # jsonb would refuse the NUL and the lone surrogate; the text column keeps them
    original = [
        {"type": "user", "uuid": f"u{i}", "message": {"content": f"需求 {i} 🌸 \ud800 \x00", "n": [1.5, None, True, {"k": i}]}}
        for i in range(3)
    ]
    await store.append(KEY, original)
    first = await store.load(KEY)
    assert first == original
    first[0]["message"]["n"][3]["k"] = 99
    assert await store.load(KEY) == original


async def test_the_summary_is_the_sdk_fold_of_main_transcript_batches(store: PostgresSessionStore) -> None:
    batches = [
        [{"type": "user", "uuid": "u1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w",
          "message": {"role": "user", "content": "build the parser"}}],
        [{"type": "custom-title", "customTitle": "T1"}],
        [{"type": "tag", "tag": "wip"}, {"type": "custom-title", "customTitle": "T2"}],
    ]
    expected = None
    for batch in batches:
        await store.append(KEY, batch)
        expected = fold_session_summary(expected, KEY, batch)
    await store.append(SUB1, [{"type": "custom-title", "customTitle": "a subagent's title"}])
    (summary,) = await store.list_session_summaries("proj")
    assert expected is not None and summary["data"] == expected["data"]
    assert summary["data"]["custom_title"] == "T2" and summary["data"]["first_prompt"] == "build the parser"


async def test_subpaths_are_separate_and_deleting_the_main_key_cascades(
    store: PostgresSessionStore, postgres_server: PostgresServer
) -> None:
    only_sub = {"project_key": "proj", "session_id": "other", "subpath": "subagents/agent-1"}
    # byte order, as SQLite sorts: upper case before lower, '-' before '.'
    for key in (KEY, SUB2, SUB1, {**KEY, "subpath": "subagents/B"}, only_sub,
                {"project_key": "proj2", "session_id": "sess"}):
        await store.append(key, [x(uuid="same", at=str(key))])
    assert await store.list_subkeys(KEY) == ["subagents/B", "subagents/agent-1", "subagents/agent-2"]
    assert [s["session_id"] for s in await store.list_sessions("proj")] == ["sess"]
    assert await store.has_session("sess") and not await store.has_session("other")

    await store.delete(SUB1)
    assert await store.load(SUB1) is None and "subagents/agent-1" not in await store.list_subkeys(KEY)
    assert await store.load(KEY) == [x(uuid="same", at=str(KEY))]

    await store.delete(KEY)
    assert await store.load(KEY) is None and await store.load(SUB2) is None
    assert await store.list_sessions("proj") == [] and await store.list_session_summaries("proj") == []
    assert await store.load(only_sub) == [x(uuid="same", at=str(only_sub))]
    await store.delete({"project_key": "proj2", "session_id": "sess"})
    assert not await store.has_session("sess")
    db = db_name(store.url)  # the rows are gone from the tables, not hidden
    assert postgres_server.sql("SELECT count(*) FROM session_entries", db).strip() == "1"
    assert postgres_server.sql("SELECT count(*) FROM session_meta", db).strip() == "1"


# -- tasks, loops, processes -----------------------------------------------------------------


async def test_concurrent_tasks_keep_every_batch_whole_and_in_order(store: PostgresSessionStore) -> None:
    async def writer(w: int) -> None:
        for b in range(10):
            await store.append(KEY, [x(uuid=f"{w}-{b}-{i}", w=w, b=b) for i in range(20)])

    async def reader() -> None:
        for _ in range(10):
            entries = await store.load(KEY) or []
            assert len(entries) % 20 == 0  # never half a batch

    await asyncio.gather(*(writer(w) for w in range(6)), reader(), reader())
    entries = await store.load(KEY)
    assert entries is not None and len(entries) == 6 * 10 * 20
    runs = [(e["w"], e["b"]) for e in entries[::20]]
    for start, (w, b) in zip(range(0, len(entries), 20), runs):
        assert {(e["w"], e["b"]) for e in entries[start : start + 20]} == {(w, b)}
    for w in range(6):
        assert [b for ww, b in runs if ww == w] == list(range(10))


def test_built_outside_a_loop_used_from_several_loops_and_closed_without_one(postgres_url: str) -> None:
    s = PostgresSessionStore(postgres_url)
    s.close()  # never used: nothing to close
    asyncio.run(s.append(KEY, [x(n=1)]))
    assert asyncio.run(s.load(KEY)) == [x(n=1)]  # another loop, the same pool
    s.close()
    s.close()
    assert asyncio.run(s.has_session("sess"))  # a later call opens a new pool
    asyncio.run(s.aclose())


def test_two_processes_appending_to_one_database_lose_nothing(postgres_url: str) -> None:
    two_writers(postgres_url)  # the database is empty: both processes race to create the tables (the migration lock)

    async def check() -> None:
        s = PostgresSessionStore(postgres_url)
        try:
            await assert_both_writers_whole(s)
        finally:
            await s.aclose()

    asyncio.run(check())


# -- the schema ------------------------------------------------------------------------------


async def test_the_schema_is_migrated_once_even_by_stores_starting_together(
    postgres_url: str, postgres_server: PostgresServer
) -> None:
    stores = [PostgresSessionStore(postgres_url) for _ in range(5)]  # five stores (one shared pool): five first uses, five migrations at once
    try:
        await asyncio.gather(*(s.append({"project_key": "p", "session_id": f"s{i}"}, [x()])
                               for i, s in enumerate(stores)))
    finally:
        for s in stores:
            await s.aclose()
    rows = postgres_server.sql("SELECT component, version FROM schema_version", db_name(postgres_url))
    assert rows.split() == ["sessions|1"]


async def test_a_database_from_a_newer_flower_is_refused_by_name(postgres_url: str, postgres_server: PostgresServer) -> None:
    s = PostgresSessionStore(postgres_url)
    await s.append(KEY, [x()])
    await s.aclose()
    postgres_server.sql("INSERT INTO schema_version (component, version, what) VALUES ('sessions', 2, 'later')",
                        db_name(postgres_url))
    with pytest.raises(StoreError, match=r"schema version 2, and this flower knows versions up to 1 only\. Upgrade"):
        await s.load(KEY)


async def test_migrations_run_in_order_each_once_and_a_failed_one_leaves_nothing(postgres_url: str) -> None:
    import asyncpg

    steps = [Migration(1, "a table", "CREATE TABLE t (n int)"), Migration(2, "a row", "INSERT INTO t VALUES (1)")]
    conn = await asyncpg.connect(postgres_url)
    try:
        assert await migrate(conn, "demo", steps[:1], where="db") == 1
        assert await migrate(conn, "demo", steps, where="db") == 2
        assert await migrate(conn, "demo", steps, where="db") == 2  # nothing left to do
        assert await conn.fetchval("SELECT count(*) FROM t") == 1
        broken = [*steps, Migration(3, "half", "INSERT INTO t VALUES (2); SELECT no_such_function()")]
        with pytest.raises(asyncpg.UndefinedFunctionError):
            await migrate(conn, "demo", broken, where="db")
        assert await conn.fetchval("SELECT count(*) FROM t") == 1  # the failed migration left no row
        assert await conn.fetchval("SELECT max(version) FROM schema_version WHERE component = 'demo'") == 2
        with pytest.raises(ValueError, match=r"numbered 1, 2, 3\.\.\. in order; got \[2\]"):
            await migrate(conn, "demo", steps[1:], where="db")
    finally:
        await conn.close()


# -- bad input and failures ------------------------------------------------------------------


async def test_a_batch_that_cannot_be_serialized_writes_nothing(store: PostgresSessionStore) -> None:
    await store.append(KEY, [x(uuid="a")])
    for bad in (x(obj=object()), x(s={1, 2}), ["not", "a", "dict"]):
        with pytest.raises(StoreError, match=r"entry 1 of the batch for 'proj/sess'.*nothing from this batch was written"):
            await store.append(KEY, [x(uuid="b"), bad, x(uuid="c")])
    assert await store.load(KEY) == [x(uuid="a")]


def test_a_url_that_is_not_postgresql_is_refused_at_once() -> None:
    with pytest.raises(StoreError, match=r"needs a postgresql:// URL; got 'sqlite:///x\.db'\. Use postgresql://"):
        PostgresSessionStore("sqlite:///x.db")


async def test_an_unreachable_server_or_a_missing_database_says_what_to_fix(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    nowhere = PostgresSessionStore(f"postgresql://flower:s3cret@/db?host={tmp_path}&port=5999", connect_timeout=5)
    with pytest.raises(StoreError, match="cannot reach PostgreSQL at") as caught:
        await nowhere.load(KEY)
    assert "s3cret" not in str(caught.value) and "flower:***@" in str(caught.value)
    missing = PostgresSessionStore(postgres_server.url("no_such_db"))
    with pytest.raises(StoreError, match=r"has no such database .*Create it \(createdb NAME\)"):
        await missing.append(KEY, [x()])
    stranger = PostgresSessionStore(postgres_server.url().replace("postgres@", "nobody_here@"))
    with pytest.raises(StoreError, match=r"refused the login .*Check the user and password"):
        await stranger.load(KEY)
    for s in (nowhere, missing, stranger):
        await s.aclose()


async def test_a_database_restart_between_two_calls_costs_neither() -> None:
    with PostgresServer() as server:  # its own cluster: the session's stays up for the other tests
        s = PostgresSessionStore(server.create_database())
        await s.append(KEY, [x(n=1)])
        await asyncio.to_thread(server.restart)  # the pool's idle connection is cut
        await s.append(KEY, [x(n=2)])
        assert await s.load(KEY) == [x(n=1), x(n=2)]
        await s.aclose()


# -- the test kit ----------------------------------------------------------------------------


def test_missing_binaries_fail_loudly_with_the_package_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(kit, "DEBIAN_ROOT", tmp_path / "none")
    with pytest.raises(PostgresServerError, match=r"not installed.*Run: apt-get install postgresql"):
        PostgresServer()


def test_the_server_listens_on_its_socket_only_and_is_deleted_at_stop(postgres_server: PostgresServer) -> None:
    assert postgres_server.sql("SHOW listen_addresses").strip() == ""
    assert postgres_server.sql("SHOW fsync").strip() == "off"
    assert (postgres_server.socket_dir / ".s.PGSQL.5432").exists()
    with PostgresServer() as other:  # a second cluster beside the session's, then gone
        root = other.socket_dir
        assert other.sql("SELECT 1").strip() == "1"
    assert not root.exists()


# -- the layers: what the model is shown is the same on both backends ------------------------


def _samples() -> dict[str, list[dict[str, Any]]]:
    return {p.stem: [json.loads(line) for line in p.read_text().splitlines() if line]
            for p in sorted(DATA.glob("*.jsonl"))}


async def test_the_pruning_store_loads_the_same_entries_and_report_on_both_backends(
    tmp_path: Path, postgres_url: str
) -> None:
    policies = (TrimPolicy(keep_recent=0, min_chars=100), None, PrunePolicy(keep_denials=0))
    lite = PruningSessionStore(tmp_path / "sessions.db", tmp_path, *policies)
    pg = PruningPostgresSessionStore(postgres_url, tmp_path, *policies)
    try:
        for name, entries in _samples().items():
            key = {"project_key": "proj", "session_id": name}
            for s in (lite, pg):
                await s.append(key, copy.deepcopy(entries))
            shown = await lite.load(key)
            lite_report = dict(lite.last_report)
            assert await pg.load(key) == shown, name
            assert pg.last_report == lite_report and pg.trim_report() == lite.trim_report()
            assert shown != entries, f"{name}: the layers cut nothing, so the comparison proves little"
    finally:
        lite.close()
        await pg.aclose()
    assert isinstance(pg, TrimmingPostgresSessionStore) and isinstance(pg, PostgresSessionStore)

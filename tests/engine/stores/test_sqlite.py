"""SqliteSessionStore on real SQLite files.

The SDK's own conformance suite (nothing skipped), the spec's extras (strictly monotonic mtime
shared with the summary sidecar, uuid dedup, subpath keys and cascade delete), the synchronous
read-only helpers, bad input, tasks/loops/processes writing at once, and, at the end, the real
Claude Code CLI writing its transcript into the store and resuming from it.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeAgentOptions,
    ResultMessage,
    SessionStore,
    fold_session_summary,
    get_subagent_messages_from_store,
    list_sessions_from_store,
    list_subagents_from_store,
    project_key_for_directory,
    query,
    rename_session_via_store,
)
from claude_agent_sdk.testing import run_session_store_conformance

from engine._errors import FlowerError
from engine._stores.sqlite import (
    SqliteSessionStore,
    StoreError,
    entry_context_tokens,
    last_context_tokens,
    session_exists,
)
from engine.testing import FakeModel, prompt_contains, text, tool_use
from tests.engine.stores.backends import assert_both_writers_whole, two_writers

KEY: Any = {"project_key": "proj", "session_id": "sess"}
SUB1: Any = {**KEY, "subpath": "subagents/agent-1"}
SUB2: Any = {**KEY, "subpath": "subagents/agent-2"}
OPTIONAL = ("list_sessions", "list_session_summaries", "delete", "list_subkeys")


@pytest.fixture
def store(tmp_path: Path):
    s = SqliteSessionStore(tmp_path / "runs" / "sessions.db")
    yield s
    s.close()


def x(**fields: Any) -> dict[str, Any]:
    return {"type": "x", **fields}


def assistant(tokens: tuple[int, int, int], **extra: Any) -> dict[str, Any]:
    """An assistant entry shaped like the CLI's (one content block, the turn's usage)."""
    inp, read, create = tokens
    usage = {"input_tokens": inp, "cache_read_input_tokens": read, "cache_creation_input_tokens": create,
             "output_tokens": 7, "server_tool_use": {"web_search_requests": 0}}
    message = {"id": "msg_1", "role": "assistant", "model": "claude-opus-5-5", "usage": usage,
               "content": [{"type": "text", "text": "ok"}]}
    return {"type": "assistant", "isSidechain": False, "uuid": f"a{tokens}", "message": message, **extra}


def synthetic_error() -> dict[str, Any]:
    """The CLI's synthetic API-error entry (as recorded from CLI 2.1.332 on an HTTP 529)."""
    entry = assistant((0, 0, 0), isApiErrorMessage=True, error="server_error", apiErrorStatus=529)
    entry["message"]["model"] = "<synthetic>"
    entry["uuid"] = "synthetic"
    return entry


# -- the protocol ----------------------------------------------------------------------------


async def test_passes_the_sdk_conformance_suite_with_nothing_skipped(tmp_path: Path) -> None:
    for name in OPTIONAL:  # the suite silently skips any optional method the store inherits
        assert getattr(SqliteSessionStore, name) is not getattr(SessionStore, name), name
    made: list[SqliteSessionStore] = []
    numbers = itertools.count()

    def make() -> SqliteSessionStore:
        made.append(SqliteSessionStore(tmp_path / f"{next(numbers)}.db"))
        return made[-1]

    try:
        await run_session_store_conformance(make)
    finally:
        for s in made:
            s.close()
    assert len(made) == 15, "one probe plus a fresh store per contract: all 14 contracts ran"


async def test_mtime_strictly_increases_and_is_shared_with_the_summary(store: SqliteSessionStore) -> None:
    second = SqliteSessionStore(store.path)  # another connection to the file, as another process
    seen: list[int] = []
    try:
        for i in range(60):  # far more writes than milliseconds: equal wall-clock times are bumped
            writer = (store, second)[i % 2]
            sid = "abc"[i % 3]
            await writer.append({"project_key": "p", "session_id": sid}, [x(n=i)])
            await writer.append({"project_key": "p", "session_id": sid, "subpath": "subagents/s"}, [x(n=i)])
            listed = {e["session_id"]: e["mtime"] for e in await store.list_sessions("p")}
            summaries = {e["session_id"]: e["mtime"] for e in await second.list_session_summaries("p")}
            assert summaries == listed
            seen.append(listed[sid])
    finally:
        second.close()
    assert all(later > earlier for earlier, later in itertools.pairwise(seen))
    assert seen[0] > 1e12  # epoch milliseconds


async def test_uuid_is_the_idempotency_key_within_one_key(store: SqliteSessionStore) -> None:
    a, b, c = x(uuid="a", v=1), x(uuid="b", v=1), x(uuid="c", v=1)
    untagged, odd = {"type": "custom-title", "customTitle": "t"}, x(uuid=5)
    await store.append(KEY, [a, b, x(uuid="a", v=2)])  # a repeat inside one batch: the first wins
    await store.append(KEY, [x(uuid="b", v=3), c, untagged, odd])  # a retried entry is ignored
    await store.append(KEY, [untagged, odd])  # no (string) uuid: appended again
    await store.append(SUB1, [a, a])
    assert await store.load(KEY) == [a, b, c, untagged, odd, untagged, odd]
    assert await store.load(SUB1) == [a]


async def test_load_returns_fresh_objects_a_subclass_may_edit(store: SqliteSessionStore) -> None:
    class Editing(SqliteSessionStore):
        async def load(self, key: Any) -> Any:
            entries = await super().load(key)
            for entry in entries or []:
                entry["message"]["content"] = "edited"
            return entries[:-1] if entries else entries

    original = [
        {"type": "user", "uuid": f"u{i}", "message": {"content": f"需求 {i} 🌸 \ud800", "n": [1.5, None, True, {"k": i}]}}
        for i in range(3)
    ]
    await store.append(KEY, original)
    editing = Editing(store.path)
    try:
        assert [e["message"]["content"] for e in await editing.load(KEY)] == ["edited", "edited"]
    finally:
        editing.close()
    first = await store.load(KEY)
    assert first == original
    first[0]["message"]["n"][3]["k"] = 99
    assert await store.load(KEY) == original


async def test_the_summary_is_the_sdk_fold_of_main_transcript_batches(store: SqliteSessionStore) -> None:
    batches = [
        [{"type": "user", "uuid": "u1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w",
          "message": {"role": "user", "content": "build the parser"}}],
        [assistant((1, 2, 3), timestamp="2026-01-01T00:00:01.000Z"), {"type": "custom-title", "customTitle": "T1"}],
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
    assert await store.list_session_summaries("elsewhere") == []


async def test_subpaths_are_separate_and_deleting_the_main_key_cascades(store: SqliteSessionStore) -> None:
    only_sub = {"project_key": "proj", "session_id": "other", "subpath": "subagents/agent-1"}
    for key in (KEY, SUB2, SUB1, only_sub, {"project_key": "proj2", "session_id": "sess"}):
        await store.append(key, [x(uuid="same", at=str(key))])
    assert await store.list_subkeys(KEY) == ["subagents/agent-1", "subagents/agent-2"]
    assert [s["session_id"] for s in await store.list_sessions("proj")] == ["sess"]
    assert await store.has_session("sess") and not await store.has_session("other")

    await store.delete(SUB1)
    assert await store.load(SUB1) is None and await store.list_subkeys(KEY) == ["subagents/agent-2"]
    assert await store.load(KEY) == [x(uuid="same", at=str(KEY))]

    await store.delete(KEY)
    assert await store.load(KEY) is None and await store.load(SUB2) is None
    assert await store.list_sessions("proj") == [] and await store.list_session_summaries("proj") == []
    assert await store.load(only_sub) == [x(uuid="same", at=str(only_sub))]
    assert await store.has_session("sess")  # still stored under proj2
    await store.delete({"project_key": "proj2", "session_id": "sess"})
    assert not await store.has_session("sess")
    with sqlite3.connect(store.path) as conn:  # the rows are gone from the file, not hidden
        assert conn.execute("SELECT count(*) FROM entries").fetchone() == (1,)
        assert conn.execute("SELECT count(*) FROM meta").fetchone() == (1,)


# -- tasks, loops, processes -----------------------------------------------------------------


async def test_concurrent_tasks_keep_every_batch_whole_and_in_order(store: SqliteSessionStore) -> None:
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


def test_built_outside_a_loop_used_from_several_loops_and_closed_without_one(tmp_path: Path) -> None:
    db = tmp_path / "deep" / "er" / "sessions.db"
    s = SqliteSessionStore(db)
    assert not db.parent.exists()  # nothing happens before first use
    asyncio.run(s.append(KEY, [x(n=1)]))
    assert asyncio.run(s.load(KEY)) == [x(n=1)]
    s.close()
    s.close()
    assert not Path(f"{db}-wal").exists()  # the last connection really closed (SQLite removed the WAL)
    assert asyncio.run(s.has_session("sess"))  # a later call reopens
    asyncio.run(s.aclose())
    assert not Path(f"{db}-wal").exists()


def test_two_processes_appending_to_one_file_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "runs" / "sessions.db"  # does not exist yet: both processes race to create it
    two_writers(str(db))

    async def check() -> None:
        s = SqliteSessionStore(db)
        try:
            await assert_both_writers_whole(s)
            assert len(await s.list_session_summaries("proj")) == 3
        finally:
            s.close()

    asyncio.run(check())


# -- bad input -------------------------------------------------------------------------------


async def test_a_batch_that_cannot_be_serialized_writes_nothing(store: SqliteSessionStore) -> None:
    await store.append(KEY, [x(uuid="a")])
    loop: dict[str, Any] = {}
    loop["self"] = loop
    for bad in (x(obj=object()), x(s={1, 2}), loop, ["not", "a", "dict"]):
        with pytest.raises(StoreError, match=r"entry 1 of the batch for 'proj/sess'.*nothing from this batch was written"):
            await store.append(KEY, [x(uuid="b"), bad, x(uuid="c")])
    with pytest.raises(StoreError):
        await store.append({"project_key": "proj", "session_id": "new"}, [x(obj=object())])
    assert await store.load(KEY) == [x(uuid="a")]
    assert await store.load({"project_key": "proj", "session_id": "new"}) is None
    assert [s["session_id"] for s in await store.list_sessions("proj")] == ["sess"]


async def test_a_file_that_is_not_sqlite_is_a_store_error_and_stays_untouched(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    junk = b"these are notes, not a database\n" * 200
    db.write_bytes(junk)
    s = SqliteSessionStore(db)
    for call in (s.append(KEY, [x(n=1)]), s.load(KEY), s.list_sessions("proj")):
        with pytest.raises(StoreError) as caught:
            await call
        assert isinstance(caught.value, FlowerError)
        assert str(db) in str(caught.value) and "not a SQLite database" in str(caught.value)
        assert "Move the file aside" in str(caught.value)
    s.close()
    with pytest.raises(StoreError, match="not a SQLite database"):
        session_exists(db, "sess")
    assert db.read_bytes() == junk


async def test_a_folder_where_the_file_should_be_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "sessions.db").mkdir()
    with pytest.raises(StoreError, match=r"cannot open .*sessions\.db.*not a folder"):
        await SqliteSessionStore(tmp_path / "sessions.db").load(KEY)


@pytest.mark.parametrize("opened_first", [True, False])
async def test_a_database_locked_past_the_timeout_is_a_store_error(tmp_path: Path, opened_first: bool) -> None:
    db = tmp_path / "sessions.db"
    setup = SqliteSessionStore(db)
    await setup.append({"project_key": "p", "session_id": "setup"}, [x()])
    setup.close()
    s = SqliteSessionStore(db, busy_timeout=0.05)
    if opened_first:
        await s.append(KEY, [x(n=1)])
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        with pytest.raises(StoreError) as caught:
            await s.append(KEY, [x(n=2)])
        assert str(db) in str(caught.value) and "0.05s busy_timeout" in str(caught.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    await s.append(KEY, [x(n=3)])
    assert [e["n"] for e in await s.load(KEY) or []] == ([1, 3] if opened_first else [3])
    s.close()


# -- the synchronous read-only helpers -------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "tokens"),
    [
        (assistant((100, 2000, 30)), 2130),
        (assistant((5, 0, 0)), 5),
        ({"type": "assistant", "message": {"usage": {"input_tokens": 9}}}, 9),
        ({"type": "assistant", "message": {"usage": {"input_tokens": 9, "cache_read_input_tokens": None}}}, 9),
        ({"type": "assistant", "message": {"usage": {"input_tokens": True}}}, 0),
        ({"type": "assistant", "message": {"usage": {}}}, 0),
        (synthetic_error(), None),
        (assistant((1, 1, 1), isApiErrorMessage=True), None),
        ({"type": "assistant", "message": {"model": "<synthetic>", "usage": {"input_tokens": 4}}}, None),
        (assistant((1, 1, 1), isSidechain=True), None),
        ({"type": "assistant", "message": {"content": "no usage"}}, None),
        ({"type": "assistant", "message": "a string"}, None),
        ({"type": "assistant"}, None),
        ({"type": "user", "message": {"usage": {"input_tokens": 4}}}, None),
        ({"type": "last-prompt", "lastPrompt": "hi"}, None),
    ],
)
def test_entry_context_tokens(entry: dict[str, Any], tokens: int | None) -> None:
    assert entry_context_tokens(entry) == tokens


def test_the_read_helpers_never_create_a_missing_database(tmp_path: Path) -> None:
    db = tmp_path / "runs" / "sessions.db"
    assert session_exists(db, "sess") is False
    assert last_context_tokens(db, "sess") is None
    assert not db.parent.exists()
    db.parent.mkdir()
    assert session_exists(db, "sess") is False and not db.exists()


async def test_the_read_helpers_read_the_main_transcript_and_write_nothing(store: SqliteSessionStore) -> None:
    tool_result = {"type": "user", "uuid": "r1", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "assistant " * 500}]}}
    await store.append(KEY, [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "go"}},
        assistant((10, 0, 0)), tool_result, assistant((100, 2000, 30)),
        {"type": "last-prompt", "lastPrompt": "go"},
    ])
    await store.append(KEY, [synthetic_error(), {"type": "cost-state"}])
    await store.append(SUB1, [assistant((999, 999, 999))])  # a subagent's context is not the session's
    await store.append({"project_key": "proj", "session_id": "only-sub", "subpath": "subagents/a"}, [assistant((1, 1, 1))])
    await store.append({"project_key": "proj", "session_id": "no-turn"}, [x(uuid="q")])

    db = store.path
    assert session_exists(db, "sess") and last_context_tokens(db, "sess") == 2130  # read while the store is open
    await store.append(KEY, [assistant((200, 3000, 0))])
    assert last_context_tokens(db, "sess") == 3200  # sees the write through the WAL at once
    store.close()

    before = (hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns)
    assert session_exists(db, "sess") is True
    assert session_exists(db, "only-sub") is False and session_exists(db, "nope") is False
    assert last_context_tokens(db, "sess") == 3200
    assert last_context_tokens(db, "no-turn") is None and last_context_tokens(db, "only-sub") is None
    assert last_context_tokens(db, "nope") is None
    assert (hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns) == before


def test_the_read_helpers_treat_a_foreign_sqlite_file_as_empty(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    assert session_exists(db, "sess") is False and last_context_tokens(db, "sess") is None


# -- the real CLI ----------------------------------------------------------------------------


async def _run(ws: Path, env: dict[str, str], store: SqliteSessionStore, prompt: str, **options: Any) -> ResultMessage:
    opts = ClaudeAgentOptions(cwd=str(ws), env=env, permission_mode="bypassPermissions", session_store=store, **options)
    results = [m async for m in query(prompt=prompt, options=opts) if isinstance(m, ResultMessage)]
    assert results and not results[-1].is_error, results
    return results[-1]


async def test_the_cli_transcript_lands_in_the_store_and_resume_reads_it_back(
    tmp_path: Path, fake_model: FakeModel, fake_model_env: dict[str, str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SqliteSessionStore(tmp_path / "runs" / "sessions.db")
    usage = {"input_tokens": 1200, "cache_read_input_tokens": 30000, "cache_creation_input_tokens": 345}
    fake_model.rule(text("NOTED-IT", usage=usage), when=prompt_contains("REMEMBER-PAPAYA"), name="first")
    second = fake_model.rule(text("it was papaya"), when=prompt_contains("WHAT-WAS-IT"), name="second")
    fake_model.fallback(text("ok"), repeat_last=True)

    try:
        sid = (await _run(ws, fake_model_env, store, "REMEMBER-PAPAYA")).session_id
        key: Any = {"project_key": project_key_for_directory(ws), "session_id": sid}
        entries = await store.load(key) or []
        assert {"user", "assistant"} <= {e["type"] for e in entries}
        assert await store.has_session(sid) and session_exists(store.path, sid)
        assert last_context_tokens(store.path, sid) == 1200 + 30000 + 345

        # The SDK's listing reads our summary sidecar; a rename is folded in and is not stale.
        await rename_session_via_store(store, sid, "papaya session", directory=str(ws))
        (info,) = await list_sessions_from_store(store, directory=str(ws))
        assert (info.session_id, info.summary) == (sid, "papaya session")

        # Resume comes from the store alone: the CLI's own copy on disk is gone.
        for local in Path(fake_model_env["CLAUDE_CONFIG_DIR"]).rglob(f"{sid}.jsonl"):
            local.unlink()
        resumed = await _run(ws, fake_model_env, store, "WHAT-WAS-IT", resume=sid)
        assert resumed.session_id == sid
        (request,) = second.requests
        assert "REMEMBER-PAPAYA" in request.shown and "NOTED-IT" in request.shown
        assert len(await store.load(key) or []) > len(entries)
    finally:
        await store.aclose()


async def test_a_subagent_transcript_is_stored_under_its_own_subpath(
    tmp_path: Path, fake_model: FakeModel, fake_model_env: dict[str, str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SqliteSessionStore(tmp_path / "runs" / "sessions.db")
    task = {"description": "sub", "prompt": "SUBTASK-KIWI", "subagent_type": "general-purpose"}
    fake_model.rule(tool_use("Agent", task), text("delegated"), when=prompt_contains("DELEGATE-IT"), name="main")
    fake_model.rule(text("kiwi done", usage={"input_tokens": 77777}), when=prompt_contains("SUBTASK-KIWI"))
    fake_model.fallback(text("ok", usage={"input_tokens": 4321}), repeat_last=True)
    try:
        sid = (await _run(ws, fake_model_env, store, "DELEGATE-IT")).session_id
        key: Any = {"project_key": project_key_for_directory(ws), "session_id": sid}
        (subpath,) = await store.list_subkeys(key)
        assert subpath.startswith("subagents/agent-")
        sub_turns = [e for e in await store.load({**key, "subpath": subpath}) or [] if e["type"] in ("user", "assistant")]
        main_turns = [e for e in await store.load(key) or [] if e["type"] in ("user", "assistant")]
        assert sub_turns and all(e["isSidechain"] for e in sub_turns) and "SUBTASK-KIWI" in str(sub_turns[0])
        assert main_turns and not any(e["isSidechain"] for e in main_turns)
        assert [s["session_id"] for s in await store.list_sessions(key["project_key"])] == [sid]
        # The SDK's own readers find the subagent through list_subkeys and load.
        (agent_id,) = await list_subagents_from_store(store, sid, directory=str(ws))
        messages = await get_subagent_messages_from_store(store, sid, agent_id, directory=str(ws))
        assert "kiwi done" in str([m.message for m in messages])
        tokens = last_context_tokens(store.path, sid)
        assert tokens is not None and tokens != 77777  # the subagent's turn is not the main context
    finally:
        await store.aclose()

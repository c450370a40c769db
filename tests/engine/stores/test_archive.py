"""``session_archive``: the same store and the same read-only answers on SQLite and on PostgreSQL,
and on PostgreSQL, workspaces that share one database never see each other's sessions."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import project_key_for_directory

from engine import StoreError
from engine.authoring import PruningPostgresSessionStore, PruningSessionStore
from engine._resume.policies import EphemeralPolicy, PrunePolicy, TrimPolicy
from engine._resume.archive import PostgresArchive, SqliteArchive, session_archive
from engine.testing import PostgresServer

LAYERS = (TrimPolicy(keep_recent=3), EphemeralPolicy(), PrunePolicy(keep_denials=2))


def assistant(tokens: tuple[int, int, int], **extra: Any) -> dict[str, Any]:
    i, r, c = tokens
    return {"type": "assistant", "message": {"role": "assistant", "model": "m", "content": "ok", "usage": {
        "input_tokens": i, "cache_read_input_tokens": r, "cache_creation_input_tokens": c}}, **extra}


def folder(root: Path, name: str) -> Path:
    path = root / name
    path.mkdir()
    return path


async def write_session(archive: SqliteArchive | PostgresArchive, session_id: str, tokens: tuple[int, int, int],
                        *, sub_only: bool = False) -> None:
    store = archive.store(*LAYERS)
    key: Any = {"project_key": project_key_for_directory(archive.workspace), "session_id": session_id}
    try:
        if sub_only:
            await store.append({**key, "subpath": "subagents/a"}, [assistant(tokens)])
        else:
            await store.append(key, [{"type": "user", "message": {"role": "user", "content": "go"}},
                                     assistant(tokens), {"type": "last-prompt", "lastPrompt": "go"}])
    finally:
        store.close()


def test_the_backend_is_chosen_once_with_the_same_layers(tmp_path: Path) -> None:
    ws = folder(tmp_path, "ws")
    lite = session_archive(tmp_path / "runs", ws)
    assert lite == SqliteArchive((tmp_path / "runs" / "sessions.db").resolve(), ws.resolve())
    pg = session_archive(tmp_path / "runs", ws, "postgresql://u@/db?host=/nowhere")
    assert pg == PostgresArchive("postgresql://u@/db?host=/nowhere", ws.resolve())
    assert pg.project_key == project_key_for_directory(ws)  # the CLI's key for its cwd
    for archive, cls in ((lite, PruningSessionStore), (pg, PruningPostgresSessionStore)):
        store = archive.store(*LAYERS)
        assert type(store) is cls
        assert (store.policy, store.ephemeral, store.prune) == LAYERS and store.workspace == ws.resolve()
        store.close()
    assert not (tmp_path / "runs").exists()  # making the store opened nothing
    with pytest.raises(StoreError, match="needs a postgresql:// URL"):
        session_archive(tmp_path / "runs", ws, "mysql://db").store(*LAYERS)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_both_backends_answer_the_same_looks(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("postgres_url") if kind == "postgres" else None
    ws = folder(tmp_path, "ws")
    archive = session_archive(tmp_path / "runs", ws, url)
    assert archive.has_session("sess") is False and archive.last_context_tokens("sess") is None  # nothing yet
    await write_session(archive, "sess", (100, 2000, 30))
    await write_session(archive, "only-sub", (1, 1, 1), sub_only=True)
    answers = await asyncio.to_thread(lambda: (
        archive.has_session("sess"), archive.has_session("only-sub"), archive.has_session("nope"),
        archive.last_context_tokens("sess"), archive.last_context_tokens("only-sub")))
    assert answers == (True, False, False, 2130, None)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_session_of_bookkeeping_lines_only_is_not_there_to_resume(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    # Claude Code 2.1.337 mirrors an api-request-route line when a session starts, before the prompt:
    # a run killed then leaves a transcript the CLI finds no conversation in ("No conversation found
    # with session ID" on --resume), so the lineage must start that step afresh instead.
    url = request.getfixturevalue("postgres_url") if kind == "postgres" else None
    ws = folder(tmp_path, "ws")
    archive = session_archive(tmp_path / "runs", ws, url)
    store = archive.store(*LAYERS)
    key: Any = {"project_key": project_key_for_directory(archive.workspace), "session_id": "early"}
    try:
        await store.append(key, [{"type": "api-request-route", "provider": "customEndpoint", "credential": "key",
                                  "sessionId": "early"}])
        assert await asyncio.to_thread(archive.has_session, "early") is False
        await store.append(key, [{"type": "queue-operation", "operation": "enqueue", "content": "go"},
                                 {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "go"}}])
        assert await asyncio.to_thread(archive.has_session, "early") is True  # the prompt: resumable
    finally:
        store.close()


async def test_a_look_creates_nothing(tmp_path: Path, postgres_url: str, postgres_server: PostgresServer) -> None:
    ws = folder(tmp_path, "ws")
    for url in (None, postgres_url):
        archive = session_archive(tmp_path / "runs", ws, url)
        assert await asyncio.to_thread(archive.has_session, "sess") is False
        assert await asyncio.to_thread(archive.last_context_tokens, "sess") is None
    assert not (tmp_path / "runs").exists()
    name = postgres_url.split("?")[0].rsplit("/", 1)[-1]
    assert postgres_server.sql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", name).strip() == "0"


async def test_two_workspaces_in_one_database_never_see_each_others_sessions(
    tmp_path: Path, postgres_url: str
) -> None:
    a = session_archive(tmp_path / "a-runs", folder(tmp_path, "a"), postgres_url)
    b = session_archive(tmp_path / "b-runs", folder(tmp_path, "b"), postgres_url)
    assert isinstance(a, PostgresArchive) and isinstance(b, PostgresArchive) and a.project_key != b.project_key
    await write_session(a, "only-a", (1, 0, 0))
    await write_session(b, "only-b", (2, 0, 0))
    await write_session(a, "both", (10, 0, 0))  # one id under two keys: each workspace sees its own
    await write_session(b, "both", (20, 0, 0))

    def looks(archive: PostgresArchive) -> tuple[Any, ...]:
        return (archive.has_session("only-a"), archive.has_session("only-b"),
                archive.last_context_tokens("only-a"), archive.last_context_tokens("only-b"),
                archive.last_context_tokens("both"))

    assert await asyncio.to_thread(looks, a) == (True, False, 1, None, 10)
    assert await asyncio.to_thread(looks, b) == (False, True, None, 2, 20)
    store = a.store(*LAYERS)  # what the SDK lists and resumes from is per key too
    try:
        assert sorted(s["session_id"] for s in await store.list_sessions(a.project_key)) == ["both", "only-a"]
        both = await store.load({"project_key": b.project_key, "session_id": "both"})
        assert both is not None and both[1]["message"]["usage"]["input_tokens"] == 20
    finally:
        store.close()

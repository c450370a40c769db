"""``SqliteSessionStore``: the SDK's ``SessionStore`` protocol on one SQLite file (``runs/sessions.db``).

The file is the archive: trimming and pruning happen at ``load()`` time in the wrapper around
it (``engine._resume``) and never change a stored byte. Tables and opening: ``engine._stores.sqlite_db``; synchronous read-only
helpers for code outside the event loop: ``engine._stores.sqlite_read``.

Concurrency (chosen over aiosqlite on purpose): one stdlib ``sqlite3`` connection, opened lazily
on first use, every operation run whole in a worker thread (``anyio.to_thread``, so it works under
whatever event loop the SDK runs on) under a ``threading.Lock``. aiosqlite keeps a non-daemon
thread per connection, so a store never closed hangs interpreter exit, and an asyncio lock binds
to one loop; a plain lock around a plain connection has neither problem and makes ``close()`` an
ordinary synchronous call. Other processes are kept out by SQLite itself: WAL mode, a busy
timeout, and ``BEGIN IMMEDIATE`` on every write.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import anyio.to_thread
from claude_agent_sdk import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
    fold_session_summary,
)

from engine._stores.batch import JSON_DUMPS, parse_rows, serialize_batch, split_key
from engine._stores.sqlite_db import StoreError, immediate
from engine._stores.sqlite_file import SqliteFile
from engine._stores.sqlite_read import entry_context_tokens, last_context_tokens, session_exists

__all__ = [
    "SESSIONS_FILE",
    "SqliteSessionStore",
    "StoreError",
    "entry_context_tokens",
    "last_context_tokens",
    "session_exists",
]

SESSIONS_FILE = "sessions.db"  # the session database's name in a run_dir, as the spec names it

LOAD_CHUNK = 200  # rows parsed at a time: peak memory ~1.7x the transcript, not 3.7x (bench)


def _load_rows(conn: sqlite3.Connection, split: tuple[str, str, str]) -> list[Any] | None:
    """The key's entries in order; None for a key never written, [] for an emptied one.

    One statement is one snapshot (another process's delete cannot land between two reads),
    read in chunks so the raw rows, the joined text and the parsed entries never all coexist.
    """
    cursor = conn.execute(
        "SELECT e.data FROM meta m LEFT JOIN entries e ON e.key_id = m.id "
        "WHERE m.project_key = ? AND m.session_id = ? AND m.subpath = ? ORDER BY e.seq",
        split,
    )
    out: list[Any] = []
    seen_key = False
    while rows := cursor.fetchmany(LOAD_CHUNK):
        seen_key = True
        out.extend(parse_rows([data for (data,) in rows if data is not None]))
    return out if seen_key else None


class SqliteSessionStore(SqliteFile, SessionStore):
    """The SDK ``SessionStore`` protocol, every optional method included, on one SQLite file.

    ``path`` (and its folder) is created on first use, not at construction, so the store can be
    built outside an event loop. An entry's ``uuid`` is its idempotency key within a store key (a
    re-appended uuid is ignored; entries without one are always appended). ``load`` returns a
    fresh list of fresh dicts, so the shaping passes (``engine._resume``) may edit it freely. Safe across tasks,
    threads and processes. Failures raise ``StoreError`` naming the path and the fix;
    ``busy_timeout`` is how many seconds to wait for another process's write lock.
    """

    def __init__(self, path: str | Path, *, busy_timeout: float = 30.0) -> None:
        super().__init__(path, busy_timeout=busy_timeout)
        self._last_mtime = 0

    def _next_mtime(self, conn: sqlite3.Connection) -> int:
        """Storage write time in epoch ms, strictly increasing across every write to the file.

        list_sessions and the summary sidecar share this clock; were two writes to share an mtime,
        the SDK's staleness fast path (summary.mtime < session mtime) would misjudge. The floor is
        read inside the write transaction, so the clock is monotonic across processes too.
        """
        (db_max,) = conn.execute("SELECT max(mtime) FROM meta").fetchone()
        floor = max(self._last_mtime, db_max or 0)
        now = time.time_ns() // 1_000_000
        self._last_mtime = now if now > floor else floor + 1
        return self._last_mtime

    # -- the protocol -----------------------------------------------------------------------

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Persist a batch in one transaction: all of it or, on any error, none of it."""
        if entries:
            # serialized in the worker thread but outside the lock: others keep reading meanwhile
            await anyio.to_thread.run_sync(self._append_sync, key, entries)

    def _append_sync(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        rows = serialize_batch(key, entries)  # outside the lock: other tasks keep reading meanwhile
        self._call(self._append_txn, key, entries, rows)

    def _append_txn(self, conn: sqlite3.Connection, key: SessionKey, entries: list, rows: list) -> None:
        pk, sid, sub = split_key(key)
        with immediate(conn):
            mtime = self._next_mtime(conn)
            conn.execute(
                "INSERT INTO meta (project_key, session_id, subpath, mtime) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (project_key, session_id, subpath) DO UPDATE SET mtime = excluded.mtime",
                (pk, sid, sub, mtime),
            )
            (key_id,) = conn.execute(
                "SELECT id FROM meta WHERE project_key = ? AND session_id = ? AND subpath = ?",
                (pk, sid, sub),
            ).fetchone()
            conn.executemany(
                "INSERT OR IGNORE INTO entries (key_id, uuid, data) VALUES (?, ?, ?)",
                [(key_id, uuid, data) for uuid, data in rows],
            )
            if sub:
                return  # a subagent's transcript must not change the main session's summary
            row = conn.execute(
                "SELECT mtime, data FROM summaries WHERE project_key = ? AND session_id = ?", (pk, sid)
            ).fetchone()
            prev: SessionSummaryEntry | None = (
                None if row is None else {"session_id": sid, "mtime": row[0], "data": json.loads(row[1])}
            )
            folded = fold_session_summary(prev, key, entries)
            conn.execute(
                "INSERT OR REPLACE INTO summaries (project_key, session_id, mtime, data) "
                "VALUES (?, ?, ?, ?)",
                (pk, sid, mtime, json.dumps(folded["data"], **JSON_DUMPS)),
            )

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """Every entry of ``key`` in append order (fresh objects), or None if it was never written."""
        return await self._run(_load_rows, split_key(key))

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """Main transcripts of ``project_key`` with their mtimes (epoch ms), in no set order."""
        rows = await self._rows(
            "SELECT session_id, mtime FROM meta WHERE project_key = ? AND subpath = ''", project_key)
        return [{"session_id": sid, "mtime": mtime} for sid, mtime in rows]

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """The summary sidecars of ``project_key``'s main transcripts, as the SDK folded them."""
        rows = await self._rows(
            "SELECT session_id, mtime, data FROM summaries WHERE project_key = ?", project_key)
        return [{"session_id": sid, "mtime": mtime, "data": json.loads(data)} for sid, mtime, data in rows]

    async def delete(self, key: SessionKey) -> None:
        """Delete one key; deleting a main transcript also deletes its subkeys and its summary."""
        await self._run(self._delete_txn, key)

    def _delete_txn(self, conn: sqlite3.Connection, key: SessionKey) -> None:
        pk, sid, sub = split_key(key)
        where, args = "project_key = ? AND session_id = ?", (pk, sid)
        if sub:
            where, args = where + " AND subpath = ?", (pk, sid, sub)
        with immediate(conn):
            conn.execute(f"DELETE FROM entries WHERE key_id IN (SELECT id FROM meta WHERE {where})", args)
            conn.execute(f"DELETE FROM meta WHERE {where}", args)
            if not sub:
                conn.execute("DELETE FROM summaries WHERE project_key = ? AND session_id = ?", (pk, sid))

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths stored under a session (subagent transcripts), sorted; never the main one."""
        rows = await self._rows(
            "SELECT subpath FROM meta WHERE project_key = ? AND session_id = ? AND subpath <> '' "
            "ORDER BY subpath",
            key["project_key"], key["session_id"],
        )
        return [sub for (sub,) in rows]

    # -- for the engine ---------------------------------------------------------------------

    async def has_session(self, session_id: str) -> bool:
        """True if a main transcript of ``session_id`` is stored, under any project key."""
        rows = await self._rows(
            "SELECT 1 FROM meta WHERE session_id = ? AND subpath = '' LIMIT 1", session_id)
        return bool(rows)

"""``PostgresSessionStore``: the SDK's ``SessionStore`` protocol on a PostgreSQL database.

The same semantics as ``SqliteSessionStore``, for several machines sharing one database: the same
keys, uuid dedup, append order, strictly increasing mtime shared with the summary sidecar,
cascade delete, sorted subkeys. Like the SQLite file, the tables are the archive: trimming and
pruning happen at ``load()`` time in the same wrapper as on SQLite (``engine._resume``).

Driver: asyncpg (over psycopg 3): its pool and binary protocol come in one wheel with no libpq
to install. The pool and the event loop it needs: ``engine._stores.pg_pool``; the versioned
schema: ``MIGRATIONS`` below, applied by ``engine._stores.pg_schema`` at first use.

An entry is stored as the same compact JSON text the SQLite store writes, in a ``text`` column,
not ``jsonb``: jsonb refuses ``\\u0000`` and lone surrogates, both of which transcripts carry.
"""

from __future__ import annotations

import json
from typing import Any

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
from engine._stores.pg_pool import PgDatabase
from engine._stores.pg_schema import Migration
from engine._stores.sqlite import LOAD_CHUNK

__all__ = ["MIGRATIONS", "PostgresSessionStore"]

# The tables carry a ``session_`` prefix: the database is shared with a host's own tables.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "session transcripts, their keys and summaries, and the write clock", """
        CREATE TABLE session_clock (
            id integer PRIMARY KEY CHECK (id = 1),
            mtime bigint NOT NULL
        );
        INSERT INTO session_clock (id, mtime) VALUES (1, 0);
        CREATE TABLE session_meta (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            project_key text NOT NULL,
            session_id text NOT NULL,
            subpath text NOT NULL DEFAULT '',
            mtime bigint NOT NULL,
            UNIQUE (project_key, session_id, subpath)
        );
        CREATE INDEX session_meta_by_session ON session_meta (session_id, subpath);
        CREATE TABLE session_entries (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            key_id bigint NOT NULL REFERENCES session_meta (id) ON DELETE CASCADE,
            uuid text,
            data text NOT NULL
        );
        CREATE INDEX session_entries_by_key ON session_entries (key_id, seq);
        CREATE UNIQUE INDEX session_entries_uuid ON session_entries (key_id, uuid) WHERE uuid IS NOT NULL;
        CREATE TABLE session_summaries (
            project_key text NOT NULL,
            session_id text NOT NULL,
            mtime bigint NOT NULL,
            data text NOT NULL,
            PRIMARY KEY (project_key, session_id)
        );
    """),
)

# The one clock of every write, on the database's time (the replicas' clocks may differ): the
# row lock orders concurrent writers, so mtimes strictly increase across all of them, and a
# summary shares its transcript's mtime (the SDK's staleness check compares the two).
_TICK = """
    UPDATE session_clock
    SET mtime = greatest(mtime + 1, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
    WHERE id = 1 RETURNING mtime
"""
_KEY = "project_key = $1 AND session_id = $2 AND subpath = $3"


async def _append_txn(conn: Any, key: SessionKey, entries: list, rows: list) -> None:
    pk, sid, sub = split_key(key)
    async with conn.transaction():
        mtime = await conn.fetchval(_TICK)
        key_id = await conn.fetchval(
            "INSERT INTO session_meta (project_key, session_id, subpath, mtime) VALUES ($1, $2, $3, $4) "
            "ON CONFLICT (project_key, session_id, subpath) DO UPDATE SET mtime = excluded.mtime RETURNING id",
            pk, sid, sub, mtime)
        # One statement per row, in order: the identity column then numbers them in append order.
        await conn.executemany(
            "INSERT INTO session_entries (key_id, uuid, data) VALUES ($1, $2, $3) "
            "ON CONFLICT (key_id, uuid) WHERE uuid IS NOT NULL DO NOTHING",
            [(key_id, uuid, data) for uuid, data in rows])
        if sub:
            return  # a subagent's transcript must not change the main session's summary
        row = await conn.fetchrow(
            "SELECT mtime, data FROM session_summaries WHERE project_key = $1 AND session_id = $2", pk, sid)
        prev: SessionSummaryEntry | None = (
            None if row is None else {"session_id": sid, "mtime": row[0], "data": json.loads(row[1])})
        folded = fold_session_summary(prev, key, entries)
        await conn.execute(
            "INSERT INTO session_summaries (project_key, session_id, mtime, data) VALUES ($1, $2, $3, $4) "
            "ON CONFLICT (project_key, session_id) DO UPDATE SET mtime = excluded.mtime, data = excluded.data",
            pk, sid, mtime, json.dumps(folded["data"], **JSON_DUMPS))


async def _load_rows(conn: Any, split: tuple[str, str, str]) -> list[Any] | None:
    """The key's entries in order; None for a key never written (one statement: one snapshot)."""
    out: list[Any] = []
    seen_key = False
    async with conn.transaction(readonly=True):  # a cursor lives in a transaction
        cursor = await conn.cursor(
            "SELECT e.data FROM session_meta m LEFT JOIN session_entries e ON e.key_id = m.id "
            "WHERE m.project_key = $1 AND m.session_id = $2 AND m.subpath = $3 ORDER BY e.seq", *split)
        while rows := await cursor.fetch(LOAD_CHUNK):  # the raw chunk is dropped once parsed
            seen_key = True
            out.extend(parse_rows([data for (data,) in rows if data is not None]))
    return out if seen_key else None


async def _delete_txn(conn: Any, key: SessionKey) -> None:
    pk, sid, sub = split_key(key)
    async with conn.transaction():  # the entries go with their key (ON DELETE CASCADE)
        if sub:
            await conn.execute(f"DELETE FROM session_meta WHERE {_KEY}", pk, sid, sub)
            return
        await conn.execute("DELETE FROM session_meta WHERE project_key = $1 AND session_id = $2", pk, sid)
        await conn.execute("DELETE FROM session_summaries WHERE project_key = $1 AND session_id = $2", pk, sid)


async def _fetch(conn: Any, sql: str, *args: Any) -> list[Any]:
    return list(await conn.fetch(sql, *args))


class PostgresSessionStore(PgDatabase, SessionStore):
    """The SDK ``SessionStore`` protocol, every optional method included, on a PostgreSQL database.

    ``url`` is a ``postgresql://`` URL (a unix socket folder goes in a ``host=`` query parameter).
    Nothing connects at construction: the pool (``max_connections``, ``connect_timeout``
    seconds per connection attempt) opens and the schema is migrated on first use, so the store
    can be built outside an event loop. An entry's ``uuid`` is its idempotency key within a
    store key; ``load`` returns fresh objects a shaping pass may edit. Safe across tasks, threads,
    event loops, processes and machines. Needs the ``postgres`` extra (asyncpg). Failures raise
    ``StoreError`` naming the database (password left out) and the fix.
    """

    component = "sessions"
    migrations = MIGRATIONS

    # -- the protocol -----------------------------------------------------------------------

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Persist a batch in one transaction: all of it or, on any error, none of it."""
        if entries:
            rows = serialize_batch(key, entries)  # raises before anything is sent
            await self._run(_append_txn, key, entries, rows)

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """Every entry of ``key`` in append order (fresh objects), or None if it was never written."""
        return await self._run(_load_rows, split_key(key))

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """Main transcripts of ``project_key`` with their mtimes (epoch ms), in no set order."""
        rows = await self._run(
            _fetch, "SELECT session_id, mtime FROM session_meta WHERE project_key = $1 AND subpath = ''",
            project_key)
        return [{"session_id": sid, "mtime": mtime} for sid, mtime in rows]

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """The summary sidecars of ``project_key``'s main transcripts, as the SDK folded them."""
        rows = await self._run(
            _fetch, "SELECT session_id, mtime, data FROM session_summaries WHERE project_key = $1", project_key)
        return [{"session_id": sid, "mtime": mtime, "data": json.loads(data)} for sid, mtime, data in rows]

    async def delete(self, key: SessionKey) -> None:
        """Delete one key; deleting a main transcript also deletes its subkeys and its summary."""
        await self._run(_delete_txn, key)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths stored under a session (subagent transcripts), sorted; never the main one."""
        rows = await self._run(
            _fetch,
            # COLLATE "C": byte order, as SQLite sorts, whatever the database's locale
            "SELECT subpath FROM session_meta WHERE project_key = $1 AND session_id = $2 AND subpath <> '' "
            'ORDER BY subpath COLLATE "C"',
            key["project_key"], key["session_id"])
        return [sub for (sub,) in rows]

    # -- for the engine ---------------------------------------------------------------------

    async def has_session(self, session_id: str) -> bool:
        """True if a main transcript of ``session_id`` is stored, under any project key."""
        rows = await self._run(
            _fetch, "SELECT 1 FROM session_meta WHERE session_id = $1 AND subpath = '' LIMIT 1", session_id)
        return bool(rows)

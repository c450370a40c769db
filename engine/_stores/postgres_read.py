"""Synchronous, read-only looks into the PostgreSQL session tables: does a session exist, how big was its context.

The PostgreSQL twin of ``engine._stores.sqlite_read``, for the lineage guard and the wake banner,
which run outside the event loop. Unlike the SQLite file, one database holds every workspace's
sessions, so each look is asked for one project key (the SDK's ``project_key_for_directory`` of
the workspace: the key the CLI stores a run's transcript under and resumes it from); another
workspace's sessions are never seen. Nothing is created or migrated: a database the session
store never wrote to holds no sessions. The reads go through this process's shared pool on the
URL (``engine._stores.pg_pool``) and block the calling thread until answered.
"""

from __future__ import annotations

import json
from typing import Any

from engine._stores.pg_pool import PgDatabase
from engine._stores.sqlite_read import CONVERSATION_TYPES, entry_context_tokens

__all__ = ["last_context_tokens", "session_exists"]

_MAIN = "SELECT id FROM session_meta WHERE project_key = $1 AND session_id = $2 AND subpath = ''"


# A main transcript with a message in it (``sqlite_read.CONVERSATION_TYPES``): what the CLI can resume.
_RESUMABLE = (f"SELECT 1 FROM session_entries WHERE key_id = ({_MAIN}) "
              "AND (data::json ->> 'type') = ANY($3::text[]) LIMIT 1")


async def _exists(conn: Any, project_key: str, session_id: str) -> bool:
    import asyncpg

    try:
        return await conn.fetchval(_RESUMABLE, project_key, session_id, list(CONVERSATION_TYPES)) is not None
    except asyncpg.UndefinedTableError:
        return False  # never migrated: no sessions yet


async def _last_context(conn: Any, project_key: str, session_id: str) -> int | None:
    import asyncpg

    try:
        async with conn.transaction(readonly=True):  # a cursor lives in a transaction
            # Backwards, newest first: the answer is near the end and the rest is never parsed.
            cursor = conn.cursor(
                f"SELECT data FROM session_entries WHERE key_id = ({_MAIN}) ORDER BY seq DESC",
                project_key, session_id)
            async for (data,) in cursor:
                if '"assistant"' not in data:
                    continue  # cheap skip: tool results can be large and are never the answer
                entry = json.loads(data)
                if isinstance(entry, dict) and (tokens := entry_context_tokens(entry)) is not None:
                    return tokens
    except asyncpg.UndefinedTableError:
        return None
    return None


class _Reader(PgDatabase):
    """A ``PgDatabase`` that migrates nothing: it only reads the session store's tables."""


def session_exists(url: str, project_key: str, session_id: str) -> bool:
    """True if the database at ``url`` holds a main transcript of ``session_id`` under ``project_key``
    that can be resumed: one with a message in it, not bookkeeping lines only (``sqlite_read``).

    False when the session store's tables do not exist yet (nothing is created). Raises
    ``StoreError`` when the database cannot be reached, naming it (password left out) and the fix.
    """
    return _look(url, _exists, project_key, session_id)


def last_context_tokens(url: str, project_key: str, session_id: str) -> int | None:
    """The context size of the last real main-thread assistant turn of ``session_id`` under
    ``project_key`` (``entry_context_tokens``), or None when the tables, the session or such a
    turn do not exist. Raises ``StoreError`` like ``session_exists``."""
    return _look(url, _last_context, project_key, session_id)


def _look(url: str, fn: Any, *args: Any) -> Any:
    reader = _Reader(url)
    try:
        return reader._run_sync(fn, *args)
    finally:
        reader.close()  # the shared pool stays open while a run's store holds it

"""Synchronous, read-only looks into a session database: does a session exist, how big was its context.

For the engine's lineage guard and wake banner, which run outside the event loop and must never
create or change ``sessions.db``: the file is opened with ``sqlite3`` in read-only URI mode
(``mode=ro``; ``mode=rw`` when a crashed writer left a WAL only a writer can recover), and a
missing file reads as "no such session" without being created. Reading a WAL-mode file may
leave its ``-wal``/``-shm`` companions behind; no row is ever written.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from engine._stores.sqlite_db import store_error

__all__ = ["entry_context_tokens", "last_context_tokens", "session_exists"]

T = TypeVar("T")

_USAGE_FIELDS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def _read(db_path: str | Path, fn: Callable[[sqlite3.Connection], T], missing: T) -> T:
    """Run ``fn`` on a read-only connection; ``missing`` if the file or the store's tables are absent."""
    path = Path(db_path)
    if not path.is_file():
        return missing
    try:
        try:
            return _query(path, "ro", fn)
        except sqlite3.OperationalError as exc:
            if "readonly" not in str(exc):
                raise
            # A writer killed mid-transaction left a WAL to recover, which a read-only connection
            # cannot do (seen once in a full run: "attempt to write a readonly database" when a restarted
            # bot woke a thread whose bot was SIGKILLed; not reproduced on demand). A
            # read-write one recovers it; ``fn`` still only reads, and mode=rw never creates.
            return _query(path, "rw", fn)
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return missing  # a SQLite file this store never wrote to holds no sessions
        raise store_error(path, None, exc) from exc
    except sqlite3.Error as exc:
        raise store_error(path, None, exc) from exc


def _query(path: Path, mode: str, fn: Callable[[sqlite3.Connection], T]) -> T:
    conn = sqlite3.connect(path.resolve().as_uri() + f"?mode={mode}", uri=True, timeout=5.0)
    try:
        return fn(conn)
    finally:
        conn.close()


# A transcript the CLI can resume holds a message; its bookkeeping lines alone are no conversation.
# Claude Code 2.1.337 writes (and mirrors) an ``api-request-route`` line when a session starts, before
# the prompt: a session killed before the prompt's batch was stored holds only that line, and
# ``--resume`` of it fails on every try with "No conversation found with session ID" (the CLI's
# loader returns nothing for a transcript without messages). 2.1.332 stored nothing by then.
CONVERSATION_TYPES = ("user", "assistant")

_RESUMABLE = (
    "SELECT 1 FROM meta m WHERE m.session_id = ? AND m.subpath = '' AND EXISTS (SELECT 1 FROM entries e "
    f"WHERE e.key_id = m.id AND json_extract(e.data, '$.type') IN ({', '.join('?' * len(CONVERSATION_TYPES))}))"
    " LIMIT 1"
)


def session_exists(db_path: str | Path, session_id: str) -> bool:
    """True if ``db_path`` holds a main transcript of ``session_id`` (under any project key) that
    can be resumed: one with a message in it (``CONVERSATION_TYPES``), not bookkeeping lines only.

    False when the file does not exist (it is not created). Raises ``StoreError`` if the file is
    not a SQLite database.
    """
    row = _read(
        db_path,
        lambda conn: conn.execute(_RESUMABLE, (session_id, *CONVERSATION_TYPES)).fetchone(),
        None,
    )
    return row is not None


def entry_context_tokens(entry: Mapping[str, Any]) -> int | None:
    """The context size of one main-thread assistant transcript entry, or None if it is not one.

    Context = ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens`` of
    ``message.usage`` (a missing field counts 0). None for other entry types, sidechain entries,
    entries without a usage, and the CLI's synthetic API-error messages (``isApiErrorMessage``,
    model ``<synthetic>``), whose zero usage says nothing about the context.
    """
    if entry.get("type") != "assistant" or entry.get("isSidechain") or entry.get("isApiErrorMessage"):
        return None
    message = entry.get("message")
    if not isinstance(message, Mapping) or message.get("model") == "<synthetic>":
        return None
    usage = message.get("usage")
    if not isinstance(usage, Mapping):
        return None
    return sum(v for f in _USAGE_FIELDS if isinstance(v := usage.get(f), int) and not isinstance(v, bool))


def last_context_tokens(db_path: str | Path, session_id: str) -> int | None:
    """The context size of the last real main-thread assistant turn of ``session_id``, or None.

    Reads the session's main transcript backwards (the most recently written one if the id is
    stored under several project keys) and stops at the first entry ``entry_context_tokens``
    measures. None when the file, the session, or such a turn does not exist.
    """

    def scan(conn: sqlite3.Connection) -> int | None:
        rows = conn.execute(
            "SELECT data FROM entries WHERE key_id = (SELECT id FROM meta WHERE session_id = ? "
            "AND subpath = '' ORDER BY mtime DESC LIMIT 1) ORDER BY seq DESC",
            (session_id,),
        )
        for (data,) in rows:
            if '"assistant"' not in data:
                continue  # cheap skip: tool results can be large and are never the answer
            entry = json.loads(data)
            if isinstance(entry, dict) and (tokens := entry_context_tokens(entry)) is not None:
                return tokens
        return None

    return _read(db_path, scan, None)

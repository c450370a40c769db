"""The session database file itself: its schema, how it is opened, write transactions, and errors.

``StoreError`` (``engine``), ``open_sqlite`` and ``immediate`` (``engine.host``) are public for
hosts that keep their own SQLite file the same way, as the bot does with ``bot.db``.

Three tables, as the spec names them: ``meta`` has one row per store key
``project_key/session_id[/subpath]`` (a subagent's transcript is told apart by its subpath; ``''``
is the main transcript) with its mtime; ``entries`` has the transcript lines in append order;
``summaries`` has the SDK's folded summary sidecar of each main transcript.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from engine._errors import FlowerError

__all__ = ["SCHEMA", "Synchronous", "StoreError", "connect", "immediate", "open_sqlite", "store_error", "use_wal"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    id INTEGER PRIMARY KEY,
    project_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    subpath TEXT NOT NULL DEFAULT '',
    mtime INTEGER NOT NULL,
    UNIQUE (project_key, session_id, subpath)
);
CREATE INDEX IF NOT EXISTS meta_by_session ON meta (session_id, subpath);
CREATE INDEX IF NOT EXISTS meta_by_mtime ON meta (mtime);
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY,
    key_id INTEGER NOT NULL,
    uuid TEXT,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_by_key ON entries (key_id);
CREATE UNIQUE INDEX IF NOT EXISTS entries_uuid ON entries (key_id, uuid) WHERE uuid IS NOT NULL;
CREATE TABLE IF NOT EXISTS summaries (
    project_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    mtime INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (project_key, session_id)
);
"""


# SQLite's ``PRAGMA synchronous`` levels: how much of a commit must be on disk before it returns.
Synchronous = Literal["OFF", "NORMAL", "FULL", "EXTRA"]


class StoreError(FlowerError):
    """A SQLite file (the session store's, or a host's own) or a PostgreSQL database could not be
    read or written.

    Raised for a file that is not SQLite or is damaged, one locked past the busy timeout, an
    unwritable folder, a database that cannot be reached or refuses the login, or a value that
    cannot be stored; the message names the path or the database (no password) and the fix.
    """


def store_error(path: Path, busy_timeout: float | None, exc: sqlite3.Error) -> StoreError:
    """Turn a ``sqlite3`` error on ``path`` into a ``StoreError`` that says what to do about it."""
    text = str(exc)
    low = text.lower()
    where = repr(str(path))
    if "not a database" in low or "malformed" in low or "encrypted" in low:
        return StoreError(
            f"{where} is not a SQLite database, or is damaged ({text}). Move the file aside (or "
            "delete it) so a new one is created, or point the store at another path."
        )
    if "locked" in low or "busy" in low:
        waited = f"its {busy_timeout:g}s busy_timeout" if busy_timeout is not None else "the timeout"
        return StoreError(
            f"{where} stayed locked by another connection past {waited} ({text}). Stop the other "
            "process writing to it, or give the store a longer busy_timeout, and retry."
        )
    if "unable to open" in low or "readonly" in low or "read-only" in low:
        return StoreError(
            f"cannot open {where} ({text}). Check that the path is a file (not a folder) and that "
            "its folder is writable (SQLite's WAL mode needs that even to read)."
        )
    return StoreError(
        f"SQLite failed on {where}: {text}. Check that the file and its folder are readable and "
        "writable, and that it was written by this store."
    )


def use_wal(conn: sqlite3.Connection, busy_timeout: float) -> None:
    """Switch ``conn`` to WAL, retrying while another connection holds the file.

    Two connections opening a brand-new file at once can get "database is locked" here at once:
    SQLite does not always run the busy handler for this lock upgrade (seen under load).
    """
    deadline = time.monotonic() + busy_timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


def open_sqlite(
    path: Path, busy_timeout: float, *, synchronous: Synchronous, folder_fix: str
) -> sqlite3.Connection:
    """Open the SQLite file ``path`` the way the session store does, creating its folder.

    The connection is in autocommit mode (write with ``immediate``), in WAL mode, with
    ``busy_timeout`` seconds of waiting on another connection's lock and the given
    ``synchronous`` level; it may be used from any thread, the caller serializes access. A
    folder that cannot be made raises ``StoreError`` whose message ends with ``folder_fix`` (say
    what the host's user should change); a file SQLite cannot open raises ``sqlite3.Error``.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the folder {str(path.parent)!r} for {path.name} ({exc}). "
                         + folder_fix) from exc
    conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    try:
        use_wal(conn, busy_timeout)
        conn.execute(f"PRAGMA synchronous={synchronous}")
    except BaseException:
        conn.close()
        raise
    return conn


def connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """Open (creating the folder and the tables if needed) ``path`` for the session store.

    Transactions are explicit (see ``immediate``). Raises ``StoreError`` for the folder,
    ``sqlite3.Error`` for the file.
    """
    # NORMAL survives a crash of this process; the CLI wrote the transcript to local disk before
    # the SDK mirrored it here, so a power cut loses nothing unrecoverable.
    conn = open_sqlite(path, busy_timeout, synchronous="NORMAL",
                       folder_fix="Give the store a path in a writable folder.")
    try:
        conn.executescript(f"BEGIN IMMEDIATE;{SCHEMA}COMMIT;")  # two processes may create it at once
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """A write transaction (``BEGIN IMMEDIATE``) on ``conn``, an autocommit connection.

    The write lock is taken up front, so a read-then-write never deadlocks against another
    process doing the same; any exception rolls back and is raised again.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")

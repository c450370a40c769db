"""The bot's database file (``bot.db`` under FLOWER_HOME): its tables, and how it is opened.

The tables: ``threads`` (a Slack thread -> its workspace and run state), ``events`` and
``messages`` (ids already handled: Slack redelivers for hours, and one mention arrives twice),
``questions`` (asks that must survive a restart), ``outbox`` (each notice posted once),
``inbox`` (words said to a running thread, not yet taken by the run), ``plans`` (the message
showing a goal's checklist, edited after each verdict), ``feedback`` (the 👍 / 👎 people gave
a run's result), ``pull_requests`` (a bound thread branch's pull request) and ``pr_watch`` (what
the bot read back from it, and when it reads next), ``usage``, ``limits`` and ``audit`` (what a team governs by:
``bot.store.ledger_rows``); with several replicas on one database, ``leases``, ``forwards`` and
``outbox_claims`` (``bot.store.leases``). A table added later is created by the same idempotent script when an older
file is opened; the version moves only when a change is one an older bot cannot read.

The same tables on PostgreSQL are ``bot.store.pg_tables``: a table or column added here is added
there too, as a new migration (a test compares the two).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine import StoreError
from engine.host import open_sqlite

__all__ = ["SCHEMA", "VERSION", "connect"]

VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    team TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread_ts TEXT NOT NULL,
    workspace TEXT NOT NULL,
    state TEXT NOT NULL,
    last_seen_ts TEXT,
    status_ts TEXT,
    created_by TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (team, channel, thread_ts)
);
CREATE INDEX IF NOT EXISTS threads_by_state ON threads (state, created_at);
CREATE TABLE IF NOT EXISTS events (
    event_id TEXT PRIMARY KEY,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_at ON events (at);
CREATE TABLE IF NOT EXISTS messages (
    channel TEXT NOT NULL,
    ts TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (channel, ts)
);
CREATE INDEX IF NOT EXISTS messages_by_at ON messages (at);
CREATE TABLE IF NOT EXISTS questions (
    id INTEGER PRIMARY KEY,
    team TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread_ts TEXT NOT NULL,
    question_key TEXT NOT NULL,
    text TEXT NOT NULL,
    options TEXT NOT NULL,
    message_ts TEXT,
    asked_by TEXT NOT NULL DEFAULT '',
    default_answer TEXT,
    deadline REAL,
    asked_at REAL NOT NULL,
    answer TEXT,
    answered_by TEXT,
    answered_at REAL,
    consumed_at REAL
);
CREATE INDEX IF NOT EXISTS questions_by_thread ON questions (team, channel, thread_ts, question_key);
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY,
    team TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread_ts TEXT NOT NULL,
    kind TEXT NOT NULL,
    dedupe_key TEXT NOT NULL UNIQUE,
    payload TEXT NOT NULL,
    created_at REAL NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    retry_at REAL,
    sent_ts TEXT,
    sent_at REAL
);
CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (state, id);
CREATE INDEX IF NOT EXISTS outbox_by_thread ON outbox (team, channel, thread_ts, state);
CREATE TABLE IF NOT EXISTS inbox (
    id INTEGER PRIMARY KEY,
    team TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread_ts TEXT NOT NULL,
    text TEXT NOT NULL,
    by_user TEXT NOT NULL,
    ts TEXT NOT NULL,
    at REAL NOT NULL,
    drained_at REAL,
    UNIQUE (channel, ts)
);
CREATE INDEX IF NOT EXISTS inbox_by_thread ON inbox (team, channel, thread_ts, drained_at);
CREATE TABLE IF NOT EXISTS plans (
    team TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread_ts TEXT NOT NULL,
    goal_digest TEXT NOT NULL,
    message_ts TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (team, channel, thread_ts, goal_digest)
);
CREATE TABLE IF NOT EXISTS feedback (
    team TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread_ts TEXT NOT NULL,
    message_ts TEXT NOT NULL,
    user_id TEXT NOT NULL,
    sentiment TEXT NOT NULL CHECK (sentiment IN ('positive', 'negative')),
    at REAL NOT NULL,
    PRIMARY KEY (team, channel, thread_ts, message_ts, user_id)
);
CREATE TABLE IF NOT EXISTS pull_requests (
    team TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread_ts TEXT NOT NULL,
    branch TEXT NOT NULL,
    report TEXT NOT NULL,
    number INTEGER,
    url TEXT,
    state TEXT NOT NULL CHECK (state IN ('proposed', 'open', 'closed', 'merged')),
    pushed TEXT,
    updated_at REAL NOT NULL,
    PRIMARY KEY (team, channel, thread_ts, branch)
);
CREATE TABLE IF NOT EXISTS pr_watch (
    team TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread_ts TEXT NOT NULL,
    branch TEXT NOT NULL,
    poll_at REAL NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (team, channel, thread_ts, branch)
);
CREATE TABLE IF NOT EXISTS leases (
    team TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread_ts TEXT NOT NULL,
    owner TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (team, channel, thread_ts)
);
CREATE INDEX IF NOT EXISTS leases_by_owner ON leases (owner);
CREATE TABLE IF NOT EXISTS forwards (
    id INTEGER PRIMARY KEY,
    team TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread_ts TEXT NOT NULL,
    op TEXT NOT NULL,
    args TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS forwards_by_thread ON forwards (team, channel, thread_ts, id);
CREATE TABLE IF NOT EXISTS outbox_claims (
    item_id INTEGER PRIMARY KEY,
    owner TEXT NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS usage (
    id INTEGER PRIMARY KEY,
    team TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread_ts TEXT NOT NULL,
    user_id TEXT NOT NULL,
    model TEXT NOT NULL,
    request REAL NOT NULL,
    step TEXT NOT NULL,
    cost_usd REAL NOT NULL,
    tokens INTEGER NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS usage_by_at ON usage (at);
CREATE INDEX IF NOT EXISTS usage_by_channel ON usage (team, channel, at);
CREATE TABLE IF NOT EXISTS limits (
    team TEXT NOT NULL,
    channel TEXT NOT NULL,
    scope TEXT NOT NULL,
    usd REAL NOT NULL,
    set_by TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (team, channel, scope)
);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    user_id TEXT NOT NULL,
    action TEXT NOT NULL,
    team TEXT NOT NULL,
    channel TEXT NOT NULL,
    thread_ts TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_by_at ON audit (at);
"""


def connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """Open ``path`` (creating its folder and the tables): WAL, busy timeout, autocommit mode.

    Transactions are explicit (``engine.immediate``); the connection may be used
    from any thread, the caller serializes access. Raises ``StoreError`` for the folder or a file
    written by a newer bot, ``sqlite3.Error`` for the file itself.
    """
    # FULL, not NORMAL: an answer a person gave must survive even a power cut; writes are few.
    conn = open_sqlite(path, busy_timeout, synchronous="FULL",
                       folder_fix="Set FLOWER_HOME to a writable folder.")
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version > VERSION:
            raise StoreError(
                f"{str(path)!r} was written by a newer flower-bot (schema {version}, this one knows "
                f"{VERSION}). Upgrade flower-bot, or move the file aside to start with no state."
            )
        # One script in one write transaction: two processes may create the file at once.
        conn.executescript(f"BEGIN IMMEDIATE;{SCHEMA}PRAGMA user_version={VERSION};COMMIT;")
    except BaseException:
        conn.close()
        raise
    return conn

"""The bot's tables on PostgreSQL: component ``"bot"``'s migrations (``engine.Migration``), run at
first use by ``engine.PgDatabase``, and the advisory lock every write takes (``BOT_LOCK``).

The twin of ``bot.store.schema`` (SQLite), table for table and column for column
(``tests/bot/store/test_pg_store.py`` compares them): a table or column added there is added here as
a new migration at the end of ``MIGRATIONS``, never by editing a released one. Epochs are
``double precision`` (``real`` has 4 bytes: an epoch in it is off by minutes), ids ``bigint``
identities, the unique keys and indexes the same as SQLite's. The tables share the database
with the session store's (``session_*``) and with ``schema_version``.
"""

from __future__ import annotations

from engine.host import Migration

__all__ = ["BOT_LOCK", "COMPONENT", "MIGRATIONS"]

COMPONENT = "bot"
BOT_LOCK = 0x626F742E6462  # "bot.db" in ASCII: the transaction-scoped advisory lock of every write

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "threads, claims, questions, outbox, inbox, plans, feedback and pull requests", """
        CREATE TABLE threads (
            team text NOT NULL,
            channel text NOT NULL,
            thread_ts text NOT NULL,
            workspace text NOT NULL,
            state text NOT NULL,
            last_seen_ts text,
            status_ts text,
            created_by text NOT NULL DEFAULT '',
            created_at double precision NOT NULL,
            updated_at double precision NOT NULL,
            PRIMARY KEY (team, channel, thread_ts)
        );
        CREATE INDEX threads_by_state ON threads (state, created_at);
        CREATE TABLE events (
            event_id text PRIMARY KEY,
            at double precision NOT NULL
        );
        CREATE INDEX events_by_at ON events (at);
        CREATE TABLE messages (
            channel text NOT NULL,
            ts text NOT NULL,
            at double precision NOT NULL,
            PRIMARY KEY (channel, ts)
        );
        CREATE INDEX messages_by_at ON messages (at);
        CREATE TABLE questions (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            team text NOT NULL,
            channel text NOT NULL,
            thread_ts text NOT NULL,
            question_key text NOT NULL,
            text text NOT NULL,
            options text NOT NULL,
            message_ts text,
            asked_by text NOT NULL DEFAULT '',
            default_answer text,
            deadline double precision,
            asked_at double precision NOT NULL,
            answer text,
            answered_by text,
            answered_at double precision,
            consumed_at double precision
        );
        CREATE INDEX questions_by_thread ON questions (team, channel, thread_ts, question_key);
        CREATE TABLE outbox (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            team text NOT NULL,
            channel text NOT NULL,
            thread_ts text NOT NULL,
            kind text NOT NULL,
            dedupe_key text NOT NULL UNIQUE,
            payload text NOT NULL,
            created_at double precision NOT NULL,
            state text NOT NULL DEFAULT 'pending',
            attempts integer NOT NULL DEFAULT 0,
            error text,
            retry_at double precision,
            sent_ts text,
            sent_at double precision
        );
        CREATE INDEX outbox_pending ON outbox (state, id);
        CREATE INDEX outbox_by_thread ON outbox (team, channel, thread_ts, state);
        CREATE TABLE inbox (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            team text NOT NULL,
            channel text NOT NULL,
            thread_ts text NOT NULL,
            text text NOT NULL,
            by_user text NOT NULL,
            ts text NOT NULL,
            at double precision NOT NULL,
            drained_at double precision,
            UNIQUE (channel, ts)
        );
        CREATE INDEX inbox_by_thread ON inbox (team, channel, thread_ts, drained_at);
        CREATE TABLE plans (
            team text NOT NULL,
            channel text NOT NULL,
            thread_ts text NOT NULL,
            goal_digest text NOT NULL,
            message_ts text NOT NULL,
            created_at double precision NOT NULL,
            PRIMARY KEY (team, channel, thread_ts, goal_digest)
        );
        CREATE TABLE feedback (
            team text NOT NULL,
            channel text NOT NULL,
            thread_ts text NOT NULL,
            message_ts text NOT NULL,
            user_id text NOT NULL,
            sentiment text NOT NULL CHECK (sentiment IN ('positive', 'negative')),
            at double precision NOT NULL,
            PRIMARY KEY (team, channel, thread_ts, message_ts, user_id)
        );
        CREATE TABLE pull_requests (
            team text NOT NULL,
            channel text NOT NULL,
            thread_ts text NOT NULL,
            branch text NOT NULL,
            report text NOT NULL,
            number integer,
            url text,
            state text NOT NULL CHECK (state IN ('proposed', 'open', 'closed', 'merged')),
            pushed text,
            updated_at double precision NOT NULL,
            PRIMARY KEY (team, channel, thread_ts, branch)
        );
    """),
    Migration(2, "leases, forwarded events and outbox claims: several replicas (bot.store.leases)", """
        CREATE TABLE leases (
            team text NOT NULL,
            channel text NOT NULL,
            thread_ts text NOT NULL,
            owner text NOT NULL,
            expires_at double precision NOT NULL,
            PRIMARY KEY (team, channel, thread_ts)
        );
        CREATE INDEX leases_by_owner ON leases (owner);
        CREATE TABLE forwards (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            team text NOT NULL,
            channel text NOT NULL,
            thread_ts text NOT NULL,
            op text NOT NULL,
            args text NOT NULL,
            at double precision NOT NULL
        );
        CREATE INDEX forwards_by_thread ON forwards (team, channel, thread_ts, id);
        CREATE TABLE outbox_claims (
            item_id bigint PRIMARY KEY,
            owner text NOT NULL,
            expires_at double precision NOT NULL
        );
    """),
    Migration(3, "the usage ledger, limits set from Slack and the audit trail (bot.store.ledger_rows)", """
        CREATE TABLE usage (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            team text NOT NULL,
            channel text NOT NULL,
            thread_ts text NOT NULL,
            user_id text NOT NULL,
            model text NOT NULL,
            request double precision NOT NULL,
            step text NOT NULL,
            cost_usd double precision NOT NULL,
            tokens bigint NOT NULL,
            at double precision NOT NULL
        );
        CREATE INDEX usage_by_at ON usage (at);
        CREATE INDEX usage_by_channel ON usage (team, channel, at);
        CREATE TABLE limits (
            team text NOT NULL,
            channel text NOT NULL,
            scope text NOT NULL,
            usd double precision NOT NULL,
            set_by text NOT NULL,
            at double precision NOT NULL,
            PRIMARY KEY (team, channel, scope)
        );
        CREATE TABLE audit (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            at double precision NOT NULL,
            user_id text NOT NULL,
            action text NOT NULL,
            team text NOT NULL,
            channel text NOT NULL,
            thread_ts text NOT NULL,
            detail text NOT NULL
        );
        CREATE INDEX audit_by_at ON audit (at);
    """),
    Migration(4, "what the bot read back from an open pull request, and when it reads next (bot.store.pr_rows)", """
        CREATE TABLE pr_watch (
            team text NOT NULL,
            channel text NOT NULL,
            thread_ts text NOT NULL,
            branch text NOT NULL,
            poll_at double precision NOT NULL,
            state text NOT NULL,
            PRIMARY KEY (team, channel, thread_ts, branch)
        );
    """),
)

"""Versioned PostgreSQL schemas: one explicit, ordered list of migrations per component, run at start.

``schema_version`` has one row per applied migration, keyed by component (``"sessions"`` for the
session store; a host's own tables take another name) and version, so several components share
one database without sharing version numbers. Each pending migration runs once, in its own
transaction, under a transaction-scoped advisory lock: two processes starting at once take
turns, and the second finds the work done.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine._stores.sqlite_db import StoreError

__all__ = ["MIGRATION_LOCK", "Migration", "migrate"]

MIGRATION_LOCK = 0x666C6F776572  # "flower" in ASCII: the advisory lock key every migration takes

_VERSIONS = """
CREATE TABLE IF NOT EXISTS schema_version (
    component text NOT NULL,
    version integer NOT NULL,
    what text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (component, version)
)
"""


@dataclass(frozen=True)
class Migration:
    """One step of a component's schema: ``version`` (1, 2, ... in order), what it does, its SQL.

    ``sql`` may hold several statements; it runs whole in one transaction or not at all. A
    migration, once released, never changes: a change to the schema is a new migration.
    """

    version: int
    what: str
    sql: str


def check_order(component: str, migrations: Sequence[Migration]) -> None:
    """Raise ``ValueError`` unless the versions are exactly 1, 2, ..., n (a programming error)."""
    versions = [m.version for m in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"the {component!r} migrations must be numbered 1, 2, 3... in order; got {versions}")


async def current_version(conn: Any, component: str) -> int | None:
    """The newest applied version of ``component``; 0 if none; None if ``schema_version`` is absent."""
    import asyncpg

    try:
        return await conn.fetchval(
            "SELECT coalesce(max(version), 0) FROM schema_version WHERE component = $1", component)
    except asyncpg.UndefinedTableError:
        return None


async def migrate(conn: Any, component: str, migrations: Sequence[Migration], *, where: str) -> int:
    """Bring ``component``'s tables on ``conn`` (an asyncpg connection) up to the last migration.

    Returns the version now in force. A database already migrated costs one read, without the
    lock. A database newer than ``migrations`` (written by a later flower) raises ``StoreError``
    naming ``where`` (the database, password left out): this code must not guess at its tables.
    """
    check_order(component, migrations)
    latest = len(migrations)
    done = await current_version(conn, component)
    for migration in migrations:
        if done is not None and migration.version <= done:
            continue
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
            await conn.execute(_VERSIONS)
            done = await current_version(conn, component)
            if done is not None and migration.version <= done:
                continue  # another process applied it while this one waited for the lock
            await conn.execute(migration.sql)
            await conn.execute("INSERT INTO schema_version (component, version, what) VALUES ($1, $2, $3)",
                               component, migration.version, migration.what)
            done = migration.version
    done = done or 0
    if done > latest:
        raise StoreError(
            f"the {component!r} tables in {where} are at schema version {done}, and this flower knows "
            f"versions up to {latest} only. Upgrade flower on this machine to the version the other "
            "machines run, or point it at another database."
        )
    return done

"""Where one workspace's transcripts are kept: ``<run_dir>/sessions.db``, or a PostgreSQL database.

The one place that chooses the backend. A runtime asks it for the run's session store; the sync
readers outside the event loop (the lineage's "is this session still there", the wake banner's
context size) ask it the same questions whichever backend answers, so no caller branches on it.
Nothing here opens anything: the SQLite file is read only if it exists (and never created by a
look), the PostgreSQL pool opens on the first question. The store it makes is the backend wrapped
in the resume shaping (``engine._resume.stores``): the one place a backend meets its pass list.
It lives here, above the backends of ``engine._stores`` it picks from, so those never import up.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from claude_agent_sdk import SessionStore, project_key_for_directory

from engine._resume.policies import EphemeralPolicy, PrunePolicy, TrimPolicy
from engine._resume.stores import PruningPostgresSessionStore, PruningSessionStore
from engine._stores import postgres_read, sqlite_read
from engine._stores.sqlite import SESSIONS_FILE

__all__ = ["PostgresArchive", "SessionArchive", "SqliteArchive", "session_archive"]


class SessionArchive(Protocol):
    """A workspace's session archive: the store a run writes through, and two read-only looks."""

    def store(self, trim: TrimPolicy, ephemeral: EphemeralPolicy, prune: PrunePolicy) -> SessionStore:
        """A new ``PruningSessionStore`` (or its PostgreSQL twin) with these policies, for one runtime."""
        ...

    def has_session(self, session_id: str) -> bool:
        """True if ``session_id``'s main transcript is kept here (so it can be resumed)."""
        ...

    def last_context_tokens(self, session_id: str) -> int | None:
        """The context size of ``session_id``'s last real turn, or None when unknown."""
        ...


@dataclass(frozen=True)
class SqliteArchive:
    """``<run_dir>/sessions.db``: one file per run_dir, so it holds this workspace's sessions only."""

    path: Path
    workspace: Path

    def store(self, trim: TrimPolicy, ephemeral: EphemeralPolicy, prune: PrunePolicy) -> SessionStore:
        return PruningSessionStore(self.path, workspace=self.workspace, policy=trim, ephemeral=ephemeral,
                                   prune=prune)

    def has_session(self, session_id: str) -> bool:
        return sqlite_read.session_exists(self.path, session_id)

    def last_context_tokens(self, session_id: str) -> int | None:
        return sqlite_read.last_context_tokens(self.path, session_id)


@dataclass(frozen=True)
class PostgresArchive:
    """A PostgreSQL database shared by many workspaces (and machines): each sees its own project key."""

    url: str
    workspace: Path

    @property
    def project_key(self) -> str:
        # The SDK's key for the CLI's cwd, which is the workspace: the transcript is mirrored
        # under it and a resume loads it from it, so a look under any other key would lie.
        return project_key_for_directory(self.workspace)

    def store(self, trim: TrimPolicy, ephemeral: EphemeralPolicy, prune: PrunePolicy) -> SessionStore:
        return PruningPostgresSessionStore(self.url, self.workspace, trim, ephemeral, prune)

    def has_session(self, session_id: str) -> bool:
        return postgres_read.session_exists(self.url, self.project_key, session_id)

    def last_context_tokens(self, session_id: str) -> int | None:
        return postgres_read.last_context_tokens(self.url, self.project_key, session_id)


def session_archive(run_dir: str | Path, workspace: str | Path,
                    database_url: str | None = None) -> SqliteArchive | PostgresArchive:
    """The archive of ``workspace``'s runs: ``database_url`` when given, else ``<run_dir>/sessions.db``.

    Paths are resolved against the current directory. A malformed ``database_url`` raises
    ``StoreError`` (naming it, password left out) when the store is made or the first look is taken.
    """
    ws = Path(workspace).resolve()
    if database_url:
        return PostgresArchive(database_url, ws)
    return SqliteArchive(Path(run_dir).resolve() / SESSIONS_FILE, ws)

"""The trim and prune layers on PostgreSQL: the same ``load()`` as on SQLite, over the shared tables.

``TrimLayer`` and ``PruneLayer`` are the very code the SQLite stores use, so what the model is
shown on resume does not depend on the backend; the spill folder is in the workspace either way.
"""

from __future__ import annotations

from pathlib import Path

from engine._stores.ephemeral import EphemeralPolicy
from engine._stores.postgres import PostgresSessionStore
from engine._stores.prune import PruneLayer, PrunePolicy
from engine._stores.trim import TrimLayer, TrimPolicy

__all__ = ["PruningPostgresSessionStore", "TrimmingPostgresSessionStore"]


class TrimmingPostgresSessionStore(TrimLayer, PostgresSessionStore):
    """``PostgresSessionStore`` whose ``load()`` expires stale glances, then spills bulky results.

    The arguments of ``TrimmingSessionStore`` with a ``postgresql://`` URL for the path; the
    pool options of ``PostgresSessionStore`` are keyword-only.
    """

    def __init__(
        self,
        url: str,
        workspace: str | Path,
        policy: TrimPolicy | None = None,
        ephemeral: EphemeralPolicy | None = None,
        *,
        max_connections: int = 4,
        connect_timeout: float = 30.0,
    ) -> None:
        super().__init__(url, max_connections=max_connections, connect_timeout=connect_timeout)
        self._setup_trim(workspace, policy, ephemeral)


class PruningPostgresSessionStore(PruneLayer, TrimmingPostgresSessionStore):
    """``TrimmingPostgresSessionStore`` that also leaves API errors, old denials and interruption
    debris out: ``PruningSessionStore`` on PostgreSQL, for several machines sharing the sessions."""

    def __init__(
        self,
        url: str,
        workspace: str | Path,
        policy: TrimPolicy | None = None,
        ephemeral: EphemeralPolicy | None = None,
        prune: PrunePolicy | None = None,
        *,
        max_connections: int = 4,
        connect_timeout: float = 30.0,
    ) -> None:
        super().__init__(url, workspace, policy, ephemeral,
                         max_connections=max_connections, connect_timeout=connect_timeout)
        self._setup_prune(prune)

"""The session stores the engine exports: each one a backend and a pass list, built on ``ShapedStore``.

The spec names them and their constructors, so they stay: ``TrimmingSessionStore`` and
``PruningSessionStore`` on SQLite, ``TrimmingPostgresSessionStore`` and
``PruningPostgresSessionStore`` on PostgreSQL. None adds behaviour of its own: the constructor
picks the backend and the list (``TRIMMING`` or ``PRUNING``), ``ShapedStore`` does the rest, so
what the model is shown on resume does not depend on the backend (the spill folder is in the
workspace either way). A pruning store is a trimming store (``isinstance``) and each counts as
its backend class too (a virtual subclass: every attribute it does not have is the backend's),
as the spec's ``SqliteSessionStore`` <- ``TrimmingSessionStore`` <- ``PruningSessionStore`` reads.
"""

from __future__ import annotations

from pathlib import Path

from engine._resume.passes import PRUNING, TRIMMING
from engine._resume.policies import EphemeralPolicy, PrunePolicy, TrimPolicy
from engine._resume.shaped import ShapedStore
from engine._stores.postgres import PostgresSessionStore
from engine._stores.sqlite import SqliteSessionStore

__all__ = [
    "PruningPostgresSessionStore",
    "PruningSessionStore",
    "TrimmingPostgresSessionStore",
    "TrimmingSessionStore",
]


class TrimmingSessionStore(ShapedStore):
    """``SqliteSessionStore`` whose ``load()`` expires stale glances, then trims (``TRIMMING``)."""

    def __init__(
        self,
        path: str | Path,
        workspace: str | Path,
        policy: TrimPolicy | None = None,
        ephemeral: EphemeralPolicy | None = None,
    ) -> None:
        super().__init__(SqliteSessionStore(path), TRIMMING, workspace, policy, ephemeral)


class PruningSessionStore(TrimmingSessionStore):
    """``TrimmingSessionStore`` that also leaves API errors, old denials and interruption debris out
    (``PRUNING``). The Runtime always uses this store (or its PostgreSQL twin)."""

    def __init__(
        self,
        path: str | Path,
        workspace: str | Path,
        policy: TrimPolicy | None = None,
        ephemeral: EphemeralPolicy | None = None,
        prune: PrunePolicy | None = None,
    ) -> None:
        # The wrapper's own constructor: the trimming one would fix the shorter list.
        ShapedStore.__init__(self, SqliteSessionStore(path), PRUNING, workspace, policy, ephemeral, prune)


class TrimmingPostgresSessionStore(ShapedStore):
    """``PostgresSessionStore`` whose ``load()`` expires stale glances, then trims (``TRIMMING``).

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
        backend = PostgresSessionStore(url, max_connections=max_connections, connect_timeout=connect_timeout)
        super().__init__(backend, TRIMMING, workspace, policy, ephemeral)


class PruningPostgresSessionStore(TrimmingPostgresSessionStore):
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
        backend = PostgresSessionStore(url, max_connections=max_connections, connect_timeout=connect_timeout)
        ShapedStore.__init__(self, backend, PRUNING, workspace, policy, ephemeral, prune)


# A shaped store answers every question its backend does (``ShapedStore.__getattr__``), so code
# that checks for the backend class (``isinstance(store, PostgresSessionStore)``) accepts it.
SqliteSessionStore.register(TrimmingSessionStore)
PostgresSessionStore.register(TrimmingPostgresSessionStore)

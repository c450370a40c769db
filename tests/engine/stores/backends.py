"""The two session-store backends, for tests that must hold on both (not a test module).

``backend`` (the fixture in conftest.py) is one of these per parameter: SQLite on a file in
``tmp_path``, or PostgreSQL on a fresh database of the session's throwaway cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from engine import (
    PostgresSessionStore,
    PruningPostgresSessionStore,
    PruningSessionStore,
    SqliteSessionStore,
    TrimmingPostgresSessionStore,
    TrimmingSessionStore,
)

Kind = Literal["sqlite", "postgres"]


@dataclass
class Backend:
    """Where one test's sessions live: ``target`` is the SQLite file or the PostgreSQL URL."""

    kind: Kind
    target: Any

    def raw(self) -> SqliteSessionStore | PostgresSessionStore:
        """The plain store on the same archive (no layers): what is really stored."""
        return SqliteSessionStore(self.target) if self.kind == "sqlite" else PostgresSessionStore(self.target)

    def trimming(self, workspace: Path, *args: Any) -> TrimmingSessionStore | TrimmingPostgresSessionStore:
        cls = TrimmingSessionStore if self.kind == "sqlite" else TrimmingPostgresSessionStore
        return cls(self.target, workspace, *args)

    def pruning(self, workspace: Path, *args: Any) -> PruningSessionStore | PruningPostgresSessionStore:
        cls = PruningSessionStore if self.kind == "sqlite" else PruningPostgresSessionStore
        return cls(self.target, workspace, *args)

"""The two session-store backends, for tests that must hold on both (not a test module).

``backend`` (the fixture in conftest.py) is one of these per parameter: SQLite on a file in
``tmp_path``, or PostgreSQL on a fresh database of the session's throwaway cluster.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import engine

from engine.authoring import (
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


def two_writers(target: str) -> None:
    """Two processes (``sqlite_append_worker.py``) append 500 entries each to ``target`` (a SQLite
    file or a PostgreSQL URL that may not exist yet, so they race to create it), at once; both
    must exit by themselves, having never closed their store."""
    root = Path(engine.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    worker = Path(__file__).with_name("sqlite_append_worker.py")
    procs = [
        subprocess.Popen([sys.executable, str(worker), target, name, "500", "25"], cwd=root, env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in ("p1", "p2")
    ]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:  # the workers never close their store: they must exit anyway
        out, err = p.communicate(timeout=240)
        assert (p.returncode, out.strip()) == (0, "done"), err


async def assert_both_writers_whole(s: Any) -> None:
    """What ``two_writers`` must leave: every entry of each, in its order, and three sessions."""
    shared = await s.load({"project_key": "proj", "session_id": "shared"}) or []
    assert len(shared) == 1000
    for name in ("p1", "p2"):
        assert [e["n"] for e in shared if e["uuid"].startswith(name + "-")] == list(range(500))
        own = await s.load({"project_key": "proj", "session_id": f"own-{name}"}) or []
        assert [(e["by"], e["n"]) for e in own] == [(name, n) for n in range(500)]
    listed = await s.list_sessions("proj")
    assert len(listed) == 3 and len({e["mtime"] for e in listed}) == 3

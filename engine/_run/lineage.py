"""Lineage: which step used which session, on disk, so the next process continues the conversation.

Everything else survives a process on its own (transcripts in ``sessions.db``, the frozen brief
and goal, the code); the one line "step X used session Y" lived only in memory and died with the
process. ``runs/lineage.json`` keeps it:

    {"workspace": "/abs/path", "woke": 3, "steps": {"干活": "<session id>"}}

Two invariants. One: an id is written the moment it arrives, not at a step boundary (a SIGHUP
kills a process without running a single ``finally``). Two: what does not match is treated as
absent, silently (another workspace path, a session gone from ``sessions.db``, a corrupt file):
continuity is a bonus and its failure must never stop a person from working.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from engine._beneath import move, open_dir
from engine._files import write_json_atomic
from engine._lang import step_names

log = logging.getLogger(__name__)

LINEAGE_FILE = "lineage.json"


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("steps", {}), dict):
        return None
    return data


class Lineage:
    """The step -> session mapping of one workspace, persisted in ``<run_dir>/lineage.json``.

    ``has_session`` decides whether a remembered session still exists (the engine passes a check
    against ``sessions.db``); sessions that fail it are dropped on load. ``woke`` counts how many
    times a workflow has started here. Writes are atomic; an ``OSError`` while writing is logged
    and swallowed so a full disk never kills a run.
    """

    def __init__(
        self,
        path: str | Path,
        workspace: str | Path,
        *,
        has_session: Callable[[str], bool] | None = None,
    ) -> None:
        self.path = Path(path)
        self.workspace = str(Path(workspace).resolve())
        self.woke = 0
        self.steps: dict[str, str] = {}
        data = _read(self.path)
        # The SDK's project key derives from the workspace path: a copied folder's old session
        # ids cannot be found from the new place, so a path mismatch means "nothing to resume".
        if data is None or data.get("workspace") != self.workspace:
            return
        woke = data.get("woke", 0)
        self.woke = woke if isinstance(woke, int) and woke >= 0 else 0
        for step, sid in data.get("steps", {}).items():
            if isinstance(step, str) and isinstance(sid, str) and sid:
                if has_session is None or has_session(sid):
                    self.steps[step] = sid

    def to_dict(self) -> dict[str, Any]:
        return {"workspace": self.workspace, "woke": self.woke, "steps": dict(self.steps)}

    def save(self) -> None:
        """Write the file atomically; an OSError is logged and swallowed (continuity is a bonus)."""
        try:
            write_json_atomic(self.path, self.to_dict())
        except OSError as exc:
            log.warning("could not write %s (%s); the run goes on without it", self.path, exc)

    def session_of(self, step: str) -> str | None:
        """The session ``step`` used last, also under its name in another language (``step_names``)."""
        return next((self.steps[n] for n in step_names(step) if n in self.steps), None)

    def remember(self, step: str, session_id: str) -> None:
        """Record ``step`` -> ``session_id`` and write at once. Use the step's own name only."""
        if not session_id or self.steps.get(step) == session_id:
            return
        self.steps[step] = session_id
        self.save()

    def wake(self) -> int:
        """Count one more start of a workflow here; returns the new count (1 on the first run)."""
        self.woke += 1
        self.save()
        return self.woke

    def archive(self, into: str | Path, extra: Iterable[str | Path] = (), *,
                anchor: str | Path | None = None) -> Path:
        """Move lineage.json and ``extra`` files (brief, goal) together into ``into``; reset.

        The three are faces of one history: archiving only part of them would leave a half state
        such as "the goal is still here but the conversation is gone". ``sessions.db`` is never
        touched: it is the archive, every transcript in it stays readable. Missing files are
        skipped. Returns ``into``. ``into`` and ``extra`` lie in the agent's workbench: they are
        reached beneath ``anchor`` (default: ``into``'s parent) through no symlink.
        """
        into = Path(into)
        anchor = Path(anchor) if anchor is not None else Path(os.path.abspath(into)).parent
        os.close(open_dir(anchor, into, create=True))
        move(anchor, self.path, into / self.path.name, src_anchor=self.path.parent)
        for item in map(Path, extra):
            move(anchor, item, into / item.name)
        self.steps.clear()
        self.woke = 0
        return into

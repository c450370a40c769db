"""A Slack thread's identity (``ThreadKey``, its states), its folders under ``FLOWER_HOME`` (the
workspace and the engine's run folder in it) and the outbox's keys for its notices.

One thread (team, channel, thread ts) is one workspace: ``<home>/workspaces/<team>-<channel>-<ts>``
with the ts's dot replaced, and ``runs/`` inside it is the engine's run_dir. Ids come from Slack
payloads, so every part is checked against a strict alphabet and the resolved folder must stay
under ``home``: a crafted id must never name a folder elsewhere (context leaking between threads).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal, NamedTuple, get_args

from bot.errors import ThreadError

WORKSPACES = "workspaces"
RUN_DIR = "runs"
_SAFE = re.compile(r"[A-Za-z0-9_-]+")


ThreadState = Literal["idle", "queued", "running", "waiting", "done", "failed", "stopped", "parked", "limited"]
THREAD_STATES: frozenset[str] = frozenset(get_args(ThreadState))
# A run in one of these was going when the bot stopped: restart recovery picks it up again.
ACTIVE_STATES: tuple[ThreadState, ...] = ("queued", "running", "waiting")


class ThreadKey(NamedTuple):
    """Where a thread lives: workspace (team) id, channel id, and the ts of its first message."""

    team: str
    channel: str
    thread_ts: str


def folder_name(key: ThreadKey) -> str:
    """The thread's folder name: ``<team>-<channel>-<ts with . as _>``.

    Raises ``ThreadError`` when any part holds anything but ``[A-Za-z0-9_-]`` (after the dot of
    the ts is replaced) or is empty.
    """
    parts = (key.team, key.channel, key.thread_ts.replace(".", "_"))
    for name, part in zip(("team", "channel", "thread_ts"), parts):
        if not isinstance(part, str) or not _SAFE.fullmatch(part):
            raise ThreadError(
                f"Slack {name} {part!r} cannot name a workspace folder: only letters, digits, '_' "
                "and '-' are allowed (a ts may have one '.'). The event was not from Slack; ignore it.")
    return "-".join(parts)


def workspace_dir(home: str | Path, key: ThreadKey) -> Path:
    """The workspace folder of ``key`` under ``home`` (not created).

    Raises ``ThreadError`` for an unsafe id or a path that resolves outside ``home/workspaces``
    (a symlinked folder pointing elsewhere, for instance).
    """
    root = (Path(home) / WORKSPACES).resolve()
    path = (root / folder_name(key)).resolve()
    if path.parent != root:
        raise ThreadError(
            f"workspace for {folder_name(key)!r} resolves to {path}, outside {root}; remove the link or "
            "folder that points elsewhere.")
    return path


def ensure_workspace(home: str | Path, key: ThreadKey) -> Path:
    """``workspace_dir`` created with its ``runs/`` folder; returns the workspace."""
    path = workspace_dir(home, key)
    (path / RUN_DIR).mkdir(parents=True, exist_ok=True)
    return path


def run_dir(workspace: Path) -> Path:
    """The engine's run_dir inside a thread workspace."""
    return workspace / RUN_DIR


def notice_key(kind: str, *parts: object) -> str:
    """The key of notice ``kind`` for ``parts`` (a ``ThreadKey`` is written as its folder name)."""
    return ":".join([kind, *(folder_name(p) if isinstance(p, ThreadKey) else str(p) for p in parts)])

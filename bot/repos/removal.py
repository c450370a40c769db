"""Deleting a thread's worktree folder, whatever its run left in it.

``git worktree remove`` first (it also forgets the worktree). What git cannot delete (a run's
2,000-deep chain of folders fails it with "File name too long"), and a worktree whose ``.git`` the
run changed (the bot runs no git there), is deleted without git: in a loop, never following a link
(``engine.host.remove_tree``); then the repository prunes what is gone.
"""

from __future__ import annotations

import logging
from pathlib import Path

from bot.errors import RepoError
from bot.repos import git as g
from engine.host import remove_tree

__all__ = ["FORCE", "drop", "remove", "remove_quietly"]

log = logging.getLogger(__name__)

FORCE = ("--force", "--force")  # twice: a worktree the agent locked (``git worktree lock``) goes too


def remove(path: Path, repo: Path) -> None:
    """Remove the worktree at ``path`` of ``repo``, changes and all; ``RepoError`` when it stays."""
    if g.run("worktree", "remove", *FORCE, str(path), cwd=repo).returncode != 0:
        drop(path, repo)


def drop(path: Path, repo: Path) -> None:
    """Delete the folder at ``path`` without git (a link there is removed itself), then prune
    ``repo``'s worktree list; ``RepoError`` saying what to do when it cannot be deleted."""
    try:
        remove_tree(path.parent, path)
    except OSError as e:
        raise RepoError(f"could not delete the thread folder {path} ({e}). Delete it by hand; the "
                        f"thread's branch stays in {repo}.") from e
    g.git("worktree", "prune", cwd=repo)


def remove_quietly(path: Path) -> None:
    """Delete a folder the bot made a moment ago for a step that failed (that error is the one said)."""
    try:
        remove_tree(path.parent, path)
    except OSError as e:
        log.warning("could not delete %s after a failed step (%s); delete it by hand", path, e)

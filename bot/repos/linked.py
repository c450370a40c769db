"""A thread worktree's ``.git`` file, checked in Python before the bot runs git for that worktree.

The thread's agent can rewrite ``<worktree>/.git`` to name a git folder it made (whose config or
hooks are its own code), so the bot never lets git find the repository from the worktree: it reads
the file itself, accepts it only when it names the expected repository's
``<common dir>/worktrees/<name>`` and that folder names this worktree back, then hands git that
folder explicitly (``--git-dir``). Whatever the file says afterwards, git never reads it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from bot.errors import WorktreeChangedError
from bot.repos import git as g

MAX_POINTER = 4096  # a .git file, gitdir or commondir holds one path

__all__ = ["checked_git_dir", "common_dir", "plain_path"]


def plain_path(path: str | Path) -> Path:
    """``path`` made absolute with its parent folders resolved but its last part kept as it is,
    so a folder replaced by a symbolic link is seen as that link, not as where it points."""
    path = Path(os.path.abspath(path))
    return path.parent.resolve() / path.name


def common_dir(repo: Path) -> Path:
    """The git common dir of ``repo`` (``<checkout>/.git`` for a plain checkout), resolved."""
    out = g.git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repo,
                fix=f"Check that {repo} is still a git repository.")
    return Path(out).resolve()


def checked_git_dir(worktree: Path, repo: Path) -> Path:
    """The private git folder of ``worktree``, a linked worktree of ``repo``; git runs only in ``repo``.

    Raises ``WorktreeChangedError`` when ``worktree`` is a symbolic link, or ``worktree/.git`` is
    missing, not a regular file, names another folder than ``<common dir of repo>/worktrees/<name>``,
    or that folder's ``gitdir`` names another worktree or its ``commondir`` another repository.
    """
    worktree = plain_path(worktree)
    dotgit = worktree / ".git"
    if worktree.is_symlink():
        raise WorktreeChangedError(worktree, repo, f"{worktree} was replaced by a symbolic link to "
                                                   f"{os.readlink(worktree)}")
    worktrees = common_dir(repo) / "worktrees"
    try:
        text = _read_pointer(dotgit)
    except FileNotFoundError:
        raise WorktreeChangedError(worktree, repo, f"{dotgit} is missing") from None
    except _NotAFile as e:
        raise WorktreeChangedError(worktree, repo, f"{dotgit} is {e}, not the file git writes") from None
    except OSError as e:
        raise WorktreeChangedError(worktree, repo, f"{dotgit} cannot be read ({e.strerror})") from None
    first = text.splitlines()[0] if text else ""
    if not first.startswith("gitdir: "):
        raise WorktreeChangedError(worktree, repo, f"{dotgit} holds no 'gitdir:' line")
    named = Path(first.removeprefix("gitdir: ").strip())
    git_dir = (worktree / named).resolve()  # a relative gitdir is relative to the worktree
    if git_dir.parent != worktrees or not git_dir.is_dir():
        raise WorktreeChangedError(worktree, repo, f"{dotgit} points at {named}")
    try:
        back = Path(_read_pointer(git_dir / "gitdir").strip())
        common = Path(_read_pointer(git_dir / "commondir").strip())
    except (OSError, _NotAFile):
        raise WorktreeChangedError(worktree, repo, f"{dotgit} points at {git_dir}, which is no "
                                                   "complete worktree folder") from None
    if (git_dir / back).resolve() != dotgit.resolve():
        raise WorktreeChangedError(worktree, repo, f"{dotgit} points at {git_dir}, the git folder of {back}")
    if (git_dir / common).resolve() != worktrees.parent:
        raise WorktreeChangedError(worktree, repo, f"{git_dir}/commondir points at {common}")
    return git_dir


class _NotAFile(Exception):
    """What a path is instead of a regular file (its ``str`` is shown: "a folder", ...)."""


def _read_pointer(path: Path) -> str:
    # lstat then open without following a link and without blocking on a FIFO: the agent may have
    # put anything at that name, and the bot must neither follow it nor hang on it
    mode = os.lstat(path).st_mode
    if not stat.S_ISREG(mode):
        raise _NotAFile("a symbolic link to " + os.readlink(path) if stat.S_ISLNK(mode) else
                        "a folder" if stat.S_ISDIR(mode) else "a special file")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _NotAFile("a special file")
        return os.read(fd, MAX_POINTER).decode("utf-8", "replace")
    finally:
        os.close(fd)

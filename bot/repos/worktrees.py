"""One thread, one repository and worktree of its own, on its own ``flower/<slug>`` branch.

A thread's repository (``<worktree>.git``, bare) borrows the bound repository's objects read-only
and holds only the thread's branch and new objects: a run commits there but cannot move another
thread's branch, delete objects others use, or lock their worktrees. The bot copies the branch
into the bound repository (its own ``git fetch``) when it opens, summarizes, pushes or removes
the worktree; the bound checkout's files are never touched. ``flower-base`` in the worktree's git
folder keeps where the branch started. Branches are never deleted here. Worktrees of the bound
repository itself, made before, keep working.

A worktree's files (its ``.git`` included) are the thread agent's: the bot's own git work on a
thread runs in the repository (log, diff, push, ``worktree remove <path>``), and where git must
see the worktree (status) it gets the worktree's git folder checked by ``bot.repos.linked``, never
the one ``.git`` names. Which repositories a worktree may belong to comes from the caller
(``known_repos``), not from the worktree.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from bot.core.thread import WORKSPACES
from bot.errors import RepoError, WorktreeChangedError
from bot.repos import git as g
from bot.repos.bindings import CLONES, Binding, Bindings
from bot.repos.linked import checked_git_dir, common_dir, plain_path
from bot.repos.removal import FORCE, drop, remove, remove_quietly

BRANCH_PREFIX = "flower/"
BASE_FILE = "flower-base"  # in the worktree's private git folder: outside the diff, removed with it
MAX_SUFFIX = 100
_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
log = logging.getLogger(__name__)

__all__ = ["BRANCH_PREFIX", "DIFF_MAX_BYTES", "Result", "Worktree", "branch_diff", "cleanup", "known_repos",
           "open_worktree", "own_branch", "push", "remove_worktree", "slugify", "summary", "worktree_at"]

# A run's commits decide a diff's length (zlib packs 50 MB of short lines into 260 KB): it is read up to
# this, and a file past BIG_FILE is shown as binary (git holds its lines to diff it: 1 GB for 50 MB).
DIFF_MAX_BYTES = 8 * 1024 * 1024
BIG_FILE = ("core.bigFileThreshold=4m",)


@dataclass(frozen=True)
class Worktree:
    """``path`` on ``branch`` from ``base_commit`` of the bound ``repo``, held by the thread's ``own``
    repository (None: a worktree of ``repo`` itself, made before)."""

    path: Path
    branch: str
    base_commit: str
    repo: Path
    own: Path | None = None

    @property
    def holder(self) -> Path:
        """The repository whose worktree this is: the thread's own, else the bound one."""
        return self.own or self.repo


@dataclass(frozen=True)
class Result:
    """What a thread did, relative to where it started: for the "achieved" message."""

    branch: str
    commits: list[str] = field(default_factory=list)  # "<short sha> <subject>", oldest first
    diffstat: str = ""
    uncommitted: list[str] = field(default_factory=list)  # porcelain lines: not in the branch yet


def slugify(text: str, *, fallback: str = "thread", max_len: int = 32) -> str:
    """A short branch-safe slug of a request (``"Add dark mode!"`` -> ``"add-dark-mode"``).

    Slack markup (``<@U123>``, ``<http://...>``) is dropped and accents folded; text with no ASCII
    letters or digits (a Chinese request, say) gives ``fallback``. Whole words are kept while
    they fit in ``max_len``.
    """
    text = re.sub(r"<[^>]*>", " ", text or "")
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", folded.lower())
    out = ""
    for word in words:
        longer = f"{out}-{word}" if out else word
        if len(longer) > max_len:
            break
        out = longer
    return out or (words[0][:max_len] if words else fallback)


def open_worktree(binding: Binding, thread_slug: str, into: str | Path, *,
                  fresh: bool = False) -> Worktree:
    """Add a worktree at ``into`` on a new branch ``flower/<thread_slug>`` from the binding's base.

    When that branch already exists: ``fresh=False`` raises ``RepoError`` (two threads must not
    share a branch); ``fresh=True`` (``/new``) takes the first free ``flower/<slug>-2``, ``-3``...
    ``into`` must not exist or be an empty folder. Call ``repos.fetch`` first for a clone binding.
    On any failure nothing is left: no folder, no branch.
    """
    if not _SLUG.fullmatch(thread_slug or ""):
        raise RepoError(f"thread slug {thread_slug!r} cannot name a branch: use letters, digits, '_' "
                        "and '-' (at most 64, starting with a letter or digit); see slugify().")
    into = Path(into).resolve()
    if into.exists() and (not into.is_dir() or any(into.iterdir())):
        raise RepoError(f"{into} already exists and is not empty. Remove it (remove_worktree) or "
                        "choose another folder.")
    repo = binding.path
    if not g.is_work_tree(repo):
        raise RepoError(f"the repository bound to channel {binding.channel} ({repo}) is gone or not a "
                        "git checkout any more. Bind the channel again.")
    done = g.run("rev-parse", "--verify", "--quiet", f"{binding.base_ref}^{{commit}}", cwd=repo)
    if done.returncode != 0:
        raise RepoError(f"base branch {binding.base!r} no longer exists in {repo}. Bind the channel "
                        "again with an existing base branch.")
    base_commit = done.stdout.strip()
    branch = _free_branch(repo, BRANCH_PREFIX + thread_slug, fresh=fresh)
    made_dir = not into.exists()
    try:
        own = _own_repository(into, repo)
    except RepoError as exc:
        raise RepoError(f"could not add a worktree at {into} on {branch}: {exc}") from exc
    done = g.run("update-ref", f"refs/heads/{branch}", base_commit, "", cwd=own)  # "": must be new
    if done.returncode == 0:
        done = g.run("worktree", "add", "--quiet", str(into), branch, cwd=own)
    if done.returncode != 0:
        _undo(own, branch, into, made_dir)
        raise RepoError(f"could not add a worktree at {into} on {branch}: {g.said(done)}. "
                        "Fix the cause above and start the thread again.")
    wt = Worktree(into, branch, base_commit, repo, own)
    try:
        (checked_git_dir(into, own) / BASE_FILE).write_text(base_commit + "\n", encoding="utf-8")
        _copy_branch(wt)
    except (OSError, RepoError):
        g.run("worktree", "remove", *FORCE, str(into), cwd=own)
        _undo(own, branch, into, made_dir)
        raise
    return wt


def known_repos(home: str | Path) -> list[Path]:
    """Every repository thread worktrees under ``home`` may belong to: the bound ones and every
    clone under ``home/repos`` (a clone stays after its channels are unbound), in sorted order."""
    home = Path(home).resolve()
    repos = {b.path for b in Bindings(home).all().values()}
    clones = home / CLONES
    if clones.is_dir():
        repos |= {d for d in clones.iterdir() if d.is_dir() and not d.name.startswith(".")}
    return sorted(repos)


def worktree_at(path: str | Path, repos: Iterable[Path], *, owned: tuple[str, str] | None = None) -> Worktree:
    """The ``Worktree`` made by ``open_worktree`` at ``path`` in one of ``repos`` (after a restart).

    ``repos``: the repositories it may belong to (the bot passes ``known_repos(home)``); the one
    whose worktree list holds ``path`` is its repository. ``owned``: the (branch, base commit) the
    bot recorded when it opened the worktree; the worktree's git folder is the agent's to write
    (its ``HEAD`` can name ``main``), so only without a record are they read from there, and then
    only a ``flower/`` branch is taken. Raises ``RepoError`` when ``path`` is not such a worktree,
    ``WorktreeChangedError`` (a ``RepoError``) when its ``.git`` no longer leads to that
    repository; git never runs in ``path`` before that check.
    """
    path = plain_path(path)
    own = _own_of(path)
    if own is not None:
        repo = _bound_of(own)
        if repo not in {Path(r).resolve() for r in repos} or path not in _linked_worktrees(own):
            raise _not_ours(path)
    else:  # a worktree of the bound repository itself, made before threads had their own
        repo = _holder(path, repos)
        if repo is None:
            raise _not_ours(path)
    git_dir = checked_git_dir(path, own or repo)
    if owned is None:  # a thread opened before the bot kept its own record
        base = git_dir / BASE_FILE
        if not base.is_file():
            raise _not_ours(path)
        branch = g.git("symbolic-ref", "--quiet", "--short", "HEAD", cwd=path, git_dir=git_dir,
                       fix="The worktree is on a detached HEAD; check its branch out again.")
        owned = (branch, base.read_text(encoding="utf-8").strip())
    return Worktree(path, own_branch(owned[0]), owned[1], repo, own)


def own_branch(branch: str) -> str:
    """``branch`` when it is a thread's own ``flower/…`` branch; else ``RepoError``: the bot pushes,
    diffs and opens pull requests for nothing else (never the base branch an agent pointed at)."""
    if not branch.startswith(BRANCH_PREFIX) or not g.valid_branch_name(branch):
        raise RepoError(f"branch {branch!r} is not a thread's {BRANCH_PREFIX}… branch, so the bot will not push "
                        "or show it. Start the thread over with /new for a fresh branch.")
    return branch


def remove_worktree(path: str | Path, repos: Iterable[Path], *, force: bool = False) -> None:
    """Remove the worktree folder at ``path`` (a worktree of one of ``repos``, see ``worktree_at``);
    its branch (and every commit on it) stays.

    Without ``force``, a worktree with uncommitted or untracked files raises ``RepoError``, and so
    does one whose ``.git`` was changed. With ``force``, such a folder is deleted without git and
    the repository's worktree list pruned.
    """
    try:
        wt = worktree_at(path, repos)
    except WorktreeChangedError as e:
        if not force:
            raise
        drop(e.path, e.repo)
        return
    try:
        _copy_branch(wt)  # the work stays where people look for it
    except RepoError as exc:
        if not force:
            raise
        log.warning("removing %s without copying its branch into %s first: %s", wt.path, wt.repo, exc)
    if force:
        remove(wt.path, wt.holder)
        return
    g.git("worktree", "remove", str(wt.path), cwd=wt.holder,
          fix=f"Commit the work in {wt.path} first, or remove it with force=True (those changes are lost).")


def summary(worktree: Worktree) -> Result:
    """The branch's commits and diff stat since ``base_commit`` (the diff is ``branch_diff``'s), plus uncommitted files.

    The branch is first copied into ``worktree.repo``, where its refs are read; only the status
    needs the worktree, through its checked git folder. Raises ``WorktreeChangedError`` (before
    any git call) when its ``.git`` was changed.
    """
    git_dir = checked_git_dir(worktree.path, worktree.holder)
    _copy_branch(worktree)
    repo, base, branch = worktree.repo, worktree.base_commit, worktree.branch
    log = g.git("log", "--reverse", "--format=%h %s", f"{base}..{branch}", cwd=repo)
    return Result(
        branch=branch,
        commits=[line for line in log.splitlines() if line],
        diffstat=g.git("diff", "--stat", base, branch, cwd=repo, config=BIG_FILE),
        uncommitted=g.status_lines(worktree.path, git_dir=git_dir),
    )


def branch_diff(worktree: Worktree) -> tuple[str, bool]:
    """The branch's diff since ``base_commit``, at most ``DIFF_MAX_BYTES`` of it, and whether it
    was cut there (files past 4 MB shown as binary). Read in the repository, like ``summary``."""
    checked_git_dir(worktree.path, worktree.holder)
    _copy_branch(worktree)
    return g.head("diff", worktree.base_commit, worktree.branch, cwd=worktree.repo, limit=DIFF_MAX_BYTES,
                  config=BIG_FILE)


def push(binding: Binding, worktree: Worktree, branch: str) -> tuple[str, str]:
    """``git push <remote> <commit>:refs/heads/<branch>`` (only on a person's click), the commit the
    branch points at now; returns the remote's name and that commit.

    ``branch`` is the one the person was shown, never whatever the worktree has checked out; git
    runs in the repository, never in the worktree. The remote is ``origin`` when there is one, else
    the repository's only remote. Raises ``RepoError`` when the branch is gone, the repository has
    no remote (or several and no ``origin``) or the push fails.
    """
    own_branch(branch)  # a base branch is named as such, before "not this thread's"
    if branch != worktree.branch:
        raise RepoError(f"{branch} is not this thread's branch ({worktree.branch}), so it is not pushed.")
    _copy_branch(worktree)
    names = g.remotes(binding.path)
    if "origin" in names or len(names) == 1:
        remote = "origin" if "origin" in names else names[0]
    else:
        has = f"remotes {', '.join(names)} but no origin" if names else "no remote"
        raise RepoError(f"{binding.path} has {has}, so {branch} cannot be pushed. "
                        "Add one with `git remote add origin <url>`.")
    ref = f"refs/heads/{branch}"
    commit = g.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=binding.path,
                   fix=f"The branch {branch} is gone from {binding.path}; it cannot be pushed.")
    g.git("push", "--quiet", remote, f"{commit}:{ref}", cwd=binding.path,
          fix=f"Check that this machine may push to {remote!r} without a password prompt.")
    return remote, commit


def cleanup(home: str | Path, keep: set[str]) -> list[Path]:
    """Remove every thread worktree under ``home`` whose path is not in ``keep``; return the removed.

    Looks in every bound repository, clone and thread repository; only linked worktrees inside
    ``home`` are candidates. They go with ``--force`` (their threads are over), one whose ``.git``
    was changed without git; branches stay; stale entries are pruned.
    """
    home = Path(home).resolve()
    kept = {plain_path(p) for p in keep}
    removed: list[Path] = []
    owns = sorted(p for p in home.glob(f"{WORKSPACES}/*/*{OWN_SUFFIX}") if _is_own(p))
    for repo in [*(r for r in known_repos(home) if g.is_work_tree(r)), *owns]:
        g.git("worktree", "prune", cwd=repo)
        for path in _linked_worktrees(repo):
            if path.is_relative_to(home) and path not in kept:
                try:
                    checked_git_dir(path, repo)
                except WorktreeChangedError:
                    drop(path, repo)
                else:
                    remove(path, repo)
                removed.append(path)
    return removed


OWN_SUFFIX = ".git"  # a thread's own repository: its worktree's folder name plus this, beside it
BOUND_KEY = "flower.bound"  # in its config (the bot's to write, never the run's): the bound repository


def _own_repository(into: Path, repo: Path) -> Path:
    """The thread's own repository beside ``into``, made bare on first use, borrowing ``repo``'s
    objects; after ``/new`` the same one takes the thread's next branch."""
    own = _own_path(into)
    if _is_own(own):
        if _bound_of(own) != repo:
            raise RepoError(f"{own} belongs to another repository than {repo}. Remove it, then start the "
                            "thread again.")
        return own
    g.git("init", "--quiet", "--bare", str(own), fix=f"Check that {into.parent} is writable.")
    try:
        (own / "objects" / "info" / "alternates").write_text(f"{common_dir(repo) / 'objects'}\n", encoding="utf-8")
        (own / "logs").mkdir()  # the worktree's commits log there: it must exist to be opened to the run
        g.git("config", BOUND_KEY, str(repo), cwd=own)
    except (OSError, RepoError):
        remove_quietly(own)
        raise
    return own


def _own_path(worktree: Path) -> Path:
    return worktree.with_name(worktree.name + OWN_SUFFIX)


def _is_own(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _own_of(path: Path) -> Path | None:
    """The thread's own repository of the worktree at ``path``, or None (one made before)."""
    own = _own_path(path)
    return own if _is_own(own) else None


def _bound_of(own: Path) -> Path:
    return Path(g.git("config", "--file", str(own / "config"), BOUND_KEY,
                      fix=f"{own} is no thread repository the bot made.")).resolve()


def _copy_branch(worktree: Worktree) -> None:
    """The thread's branch, from its own repository into the bound one (where it is shown, pushed
    and diffed): the bot's own ``git fetch``, in the bound repository."""
    if worktree.own is None:
        return  # a worktree of the bound repository itself: the branch is already there
    ref = f"refs/heads/{worktree.branch}"
    g.git("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", str(worktree.own), f"+{ref}:{ref}",
          cwd=worktree.repo, config=("fetch.fsckObjects=true",),  # the run wrote those objects
          fix=f"The thread's branch could not be copied into {worktree.repo}.")


def _not_ours(path: Path) -> RepoError:
    return RepoError(f"{path} is not a thread worktree made by flower. Open one with open_worktree().")


def _holder(path: Path, repos: Iterable[Path]) -> Path | None:
    for repo in repos:
        try:
            if path in _linked_worktrees(repo):
                return Path(repo).resolve()
        except RepoError:
            continue  # gone, or no repository any more: it holds no worktree
    return None


def _linked_worktrees(repo: Path) -> list[Path]:
    out = g.git("worktree", "list", "--porcelain", cwd=repo)
    paths = [plain_path(line.removeprefix("worktree "))
             for line in out.splitlines() if line.startswith("worktree ")]
    return paths[1:]  # the first entry is the main checkout: never a candidate


def _free_branch(repo: Path, name: str, *, fresh: bool) -> str:
    if not g.valid_branch_name(name):
        raise RepoError(f"{name!r} is not a valid branch name. Pick another thread slug.")
    if not g.has_ref(repo, f"refs/heads/{name}"):
        return name
    if not fresh:
        raise RepoError(f"branch {name!r} already exists in {repo}. Start the thread over with /new "
                        "for a fresh branch, or delete the old branch if its work is no longer needed.")
    for n in range(2, MAX_SUFFIX + 1):
        if not g.has_ref(repo, f"refs/heads/{name}-{n}"):
            return f"{name}-{n}"
    raise RepoError(f"branches {name}-2 to {name}-{MAX_SUFFIX} all exist in {repo}. Delete old "
                    f"{BRANCH_PREFIX} branches you no longer need.")


def _undo(repo: Path, branch: str, into: Path, made_dir: bool) -> None:
    if g.has_ref(repo, f"refs/heads/{branch}"):
        g.run("update-ref", "-d", f"refs/heads/{branch}", cwd=repo)  # ours, made a moment ago, empty
    if made_dir:
        remove_quietly(into)
    g.run("worktree", "prune", cwd=repo)

"""A thread in a bound channel works in its own ``git worktree`` at ``<workspace>/repo``.

The engine then runs with ``isolate=True`` in that worktree (``bot.runs.run.thread_run`` builds
that run), so its workbench (brief, goal, Q&A log) lives beside it at ``<workspace>/.flower-repo``:
outside the branch, kept across ``/new``.
Everything here is blocking git work: call it through ``asyncio.to_thread``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from bot.core.thread import ThreadKey, run_dir
from bot.errors import RepoError
from bot.repos.bindings import Binding, Bindings, fetch
from bot.repos.linked import checked_git_dir, common_dir
from bot.repos.worktrees import Worktree, known_repos, open_worktree, remove_worktree, slugify, worktree_at
from engine.authoring import starter_paths
from engine.host import beneath, write_json_atomic

REPO_DIR = "repo"
FRESH_MARK = ".repo-fresh"  # in run_dir: the next run opens a new branch (``/new`` without words)
OWNED_FILE = "worktree.json"  # in run_dir (the bot's, unreadable to the run): the branch and base it opened

__all__ = ["REPO_DIR", "excluding_placeholders", "is_bound_thread", "mark_fresh", "open_for_thread",
           "seen_from_the_run", "thread_slug", "thread_workbench", "thread_worktree", "worktree_git"]


def thread_slug(ask: str, thread_ts: str) -> str:
    """The request's slug plus the thread ts's digits, so two threads with the same words differ."""
    suffix = thread_ts.replace(".", "")[-8:] or "0"
    return f"{slugify(ask, fallback='thread', max_len=40)}-{suffix}"


def is_bound_thread(ws: Path) -> bool:
    """True when the thread has a repository worktree (or had one: its workbench is still there).

    A worktree's ``.git`` is a file; a plain thread's worker may well make a ``repo`` folder.
    """
    return (ws / REPO_DIR / ".git").is_file() or starter_paths(ws / REPO_DIR, isolate=True).workbench.root.exists()


def thread_workbench(ws: Path, *, channel_bound: bool) -> Path:
    """The workbench of thread folder ``ws``: where the files people share (``inbox/``) and the
    files its run hands back (``outbox/``) live, outside any branch. A thread with no run yet in a
    bound channel gets the worktree's workbench, which its first run opens beside the worktree."""
    fresh = not (ws / ".flower").exists()
    bound = is_bound_thread(ws) or (fresh and channel_bound)
    return starter_paths(ws / REPO_DIR if bound else ws, isolate=bound).workbench.root


def seen_from_the_run(ws: Path, path: Path) -> str:
    """``path`` as the thread's run names it: relative to the folder its agents work in."""
    bound = is_bound_thread(ws)
    return os.path.relpath(path, ws / REPO_DIR if bound else ws)


# What Claude Code's sandbox mounts over protected names missing from the working folder (measured with
# CLI 2.1.332; upstream claude-code #78419): `git add -A` aborts on them ("can only add regular files")
# and `git status` lists them, so a bound thread's commands get them as excludes (root only).
PLACEHOLDERS = (".bash_profile", ".bashrc", ".claude/agents", ".claude/commands", ".claude/hooks",
                ".claude/launch.json", ".claude/loop.md", ".claude/output-styles", ".claude/routines",
                ".claude/scheduled_tasks.json", ".claude/settings.json", ".claude/settings.local.json",
                ".claude/skills", ".claude/workflows", ".gitconfig", ".gitmodules", ".idea", ".mcp.json",
                ".profile", ".ripgreprc", ".vscode", ".zprofile", ".zshrc")
EXCLUDE_FILE = ".git-exclude"  # in the workbench beside the worktree: readable by commands, outside the branch


def excluding_placeholders(ws: Path, env: Mapping[str, str]) -> dict[str, str]:
    """``env`` plus git's ``core.excludesFile`` naming the placeholders, through ``GIT_CONFIG_*``
    (after any the environment already has; the sandbox appends its own after these)."""
    wb = starter_paths(ws / REPO_DIR, isolate=True).workbench
    path = wb.root / EXCLUDE_FILE
    beneath.write_text(wb.anchor, path, "".join(f"/{name}\n" for name in PLACEHOLDERS))
    env = dict(env)
    n = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    env.update({f"GIT_CONFIG_KEY_{n}": "core.excludesFile", f"GIT_CONFIG_VALUE_{n}": str(path),
                "GIT_CONFIG_COUNT": str(n + 1)})
    return env


def worktree_git(binding: Binding, worktree: Worktree) -> tuple[Path, Path, tuple[Path, ...]]:
    """The thread worktree's (common git folder, own git folder, object folders it borrows), checked
    against the repository the bot made it in (``linked.checked_git_dir``: the agent may have
    rewritten its ``.git``); the borrowed objects are the bound repository's, read-only to the run."""
    own_dir, bound = checked_git_dir(worktree.path, worktree.holder), common_dir(binding.path)
    if worktree.own is None:  # a worktree of the bound repository itself, made before
        return bound, own_dir, ()
    return worktree.own, own_dir, (bound / "objects",)


def thread_worktree(ws: Path) -> Worktree | None:
    """The thread's worktree, or None when it has none (unbound, or removed by cleanup).

    Raises ``RepoError`` when its ``.git`` was changed (the fix: ``/new``).
    """
    if not _has_folder(ws):
        return None
    return worktree_at(ws / REPO_DIR, _repos(ws), owned=_owned(run_dir(ws)))


def mark_fresh(ws: Path, run_dir: Path) -> None:
    """``/new`` without words: drop the worktree now (its branch stays), open a new one next run."""
    if _has_folder(ws):
        remove_worktree(ws / REPO_DIR, _repos(ws), force=True)  # a changed .git too: deleted without git
        (run_dir / FRESH_MARK).write_text("", encoding="utf-8")


def open_for_thread(home: Path, key: ThreadKey, ws: Path, run_dir: Path, ask: str, *,
                    new: bool) -> tuple[Binding, Worktree] | None:
    """The thread's binding and worktree, opened when needed; None for an unbound channel.

    An existing worktree is reused, unless ``new`` (``/new``): then it is removed (its branch
    stays) and a fresh branch opened. Raises ``RepoError`` (nothing half-made) for a failed
    fetch, a missing base branch or a branch that already exists.
    """
    binding = Bindings(home).get(key.channel)
    if binding is None:
        return None
    if not is_bound_thread(ws) and starter_paths(ws).workbench.root.exists():
        return None  # a thread that began before the channel was bound keeps its plain folder
    mark = run_dir / FRESH_MARK
    fresh = new or mark.exists()
    if not fresh:
        current = thread_worktree(ws)
        if current is not None:
            return binding, current
    elif _has_folder(ws):
        remove_worktree(ws / REPO_DIR, known_repos(home), force=True)  # a changed .git too: deleted without git
    fetch(binding)
    wt = open_worktree(binding, thread_slug(ask, key.thread_ts), ws / REPO_DIR,
                       fresh=fresh or starter_paths(ws / REPO_DIR, isolate=True).workbench.root.exists())
    write_json_atomic(run_dir / OWNED_FILE, {"branch": wt.branch, "base_commit": wt.base_commit})
    mark.unlink(missing_ok=True)
    return binding, wt


def _owned(run_dir: Path) -> tuple[str, str] | None:
    """The (branch, base commit) the bot recorded when it opened the thread's worktree."""
    try:
        data = json.loads((run_dir / OWNED_FILE).read_text(encoding="utf-8"))
        return str(data["branch"]), str(data["base_commit"])
    except FileNotFoundError:
        return None  # a thread opened before the record existed: worktree_at checks its branch
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RepoError(f"the bot's record of this thread's branch ({run_dir / OWNED_FILE}) cannot be read "
                        f"({exc}). Start the thread over with /new.") from exc


def _has_folder(ws: Path) -> bool:
    path = ws / REPO_DIR
    return path.is_dir() and any(path.iterdir())


def _repos(ws: Path) -> list[Path]:
    # ws is <home>/workspaces/<thread> (workspace_dir): a worktree is trusted to belong only to a
    # repository that home knows, never to the one its own .git names
    return known_repos(ws.parent.parent)

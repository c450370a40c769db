"""Run ``git`` as a subprocess: no shell, never a prompt, output captured, one error type.

Every call goes through ``run``: ``git -C <folder> ...`` with stdin closed, ``GIT_TERMINAL_PROMPT=0``
(a URL that needs a password fails at once instead of hanging the bot on an invisible prompt),
ssh in batch mode unless the operator chose their own ssh command, and ``LC_ALL=C`` so git's
messages read the same on every machine.
"""

from __future__ import annotations

import os
import subprocess
from engine import FlowerError
from pathlib import Path


GIT_TIMEOUT_S = 600.0


class RepoError(FlowerError):
    """A repository, URL, branch or worktree that cannot be used; the message names the fix."""


def git_env() -> dict[str, str]:
    """The environment every git call runs with: the caller's, made non-interactive."""
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    env["LC_ALL"] = "C"
    return env


def run(*args: str, cwd: str | Path | None = None,
        timeout: float = GIT_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """``git [-C cwd] *args``; returns the finished process whatever its exit code.

    Raises ``RepoError`` only when git is missing or the call outlives ``timeout`` seconds.
    """
    argv = ["git"] + (["-C", str(cwd)] if cwd is not None else []) + list(args)
    try:
        return subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              env=git_env(), timeout=timeout)
    except FileNotFoundError as e:
        raise RepoError("the `git` command was not found on PATH. Install git on the machine "
                        "that runs the bot.") from e
    except subprocess.TimeoutExpired as e:
        raise RepoError(f"`git {' '.join(args)}` took longer than {timeout:.0f}s in {cwd}. "
                        "Check the network and the URL, then try again.") from e


def git(*args: str, cwd: str | Path | None = None, fix: str = "",
        timeout: float = GIT_TIMEOUT_S) -> str:
    """``run`` that must succeed: returns stdout stripped of trailing newlines.

    Raises ``RepoError`` naming the command, the folder, git's own message and ``fix``.
    """
    done = run(*args, cwd=cwd, timeout=timeout)
    if done.returncode != 0:
        where = f" in {cwd}" if cwd is not None else ""
        raise RepoError(f"`git {' '.join(args)}` failed{where}: {said(done)}." + (f" {fix}" if fix else ""))
    return done.stdout.rstrip("\n")


def said(done: subprocess.CompletedProcess[str]) -> str:
    """git's complaint in one line: its ``fatal:``/``error:`` lines (else all output), joined."""
    lines = [line.strip() for line in (done.stderr or done.stdout or "").splitlines() if line.strip()]
    errors = [line.split(":", 1)[1].strip() for line in lines if line.startswith(("fatal:", "error:"))]
    return "; ".join(errors or lines).rstrip(".") or f"exit code {done.returncode}"


def ok(*args: str, cwd: str | Path | None = None) -> bool:
    """True when ``git *args`` exits 0 (for questions such as "does this ref exist?")."""
    return run(*args, cwd=cwd).returncode == 0


def is_work_tree(path: Path) -> bool:
    """True when ``path`` is inside a git working tree (a checkout or a linked worktree)."""
    done = run("rev-parse", "--is-inside-work-tree", cwd=path)
    return done.returncode == 0 and done.stdout.strip() == "true"


def is_bare(path: Path) -> bool:
    """True when ``path`` is a bare repository (no working tree)."""
    done = run("rev-parse", "--is-bare-repository", cwd=path)
    return done.returncode == 0 and done.stdout.strip() == "true"


def has_ref(repo: Path, ref: str) -> bool:
    """True when ``ref`` (a full ref such as ``refs/heads/main``) names a commit in ``repo``."""
    return ok("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=repo)


def valid_branch_name(name: str) -> bool:
    """True when git accepts ``name`` as a branch name (``git check-ref-format --branch``)."""
    return bool(name) and not name.startswith("-") and ok("check-ref-format", "--branch", name)


def status_lines(path: Path) -> list[str]:
    """``git status --porcelain`` of ``path``, one changed or untracked file per line."""
    out = git("status", "--porcelain", cwd=path)
    return [line for line in out.splitlines() if line.strip()]


def remotes(repo: Path) -> list[str]:
    """The names of ``repo``'s remotes, in git's order."""
    return git("remote", cwd=repo).split()

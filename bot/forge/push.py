"""A thread's branch to its forge: pushed by the bot with the bot's token, never by the agent.

git runs in the bound repository (``bot.repos.git``: no hook, no repository-chosen program) and
pushes to the binding's URL, the one the admin gave, not to whatever ``origin`` says now. An https
push gets the token through a credential helper that reads a file only the bot can read (under
``FLOWER_HOME``, which the sandbox hides from runs), scoped to the forge's host and removed after
the call: the token is never on a command line, in git's environment or in a URL. An ssh remote
pushes with the operator's own keys. Not covered, as for every push: a ``url.*.insteadOf`` in the
repository's config can still send the branch elsewhere, but the token goes only to the forge's
host.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from bot.core.split_text import clip
from bot.errors import ForgeError
from bot.forge.remote import ForgeRepo
from bot.repos import git as g
from bot.repos.bindings import Binding
from bot.repos.worktrees import own_branch

CREDENTIALS_DIR = ".push-credentials"  # under FLOWER_HOME: hidden from every run like the rest of it
_USERNAMES = {"github": "x-access-token", "gitlab": "oauth2"}  # what each forge takes with a token as password

__all__ = ["Pushed", "branch_commit", "commits_between", "delete_branch", "push_branch"]


@dataclass(frozen=True)
class Pushed:
    """A push that landed: the ``commit`` the forge's branch now points at, and whether the branch
    was ``created`` by it (it was not on the forge before: undone if the pull request fails)."""

    commit: str
    created: bool


def branch_commit(binding: Binding, branch: str) -> str:
    """The commit ``branch`` points at in the bound repository; ``RepoError`` when it is gone."""
    return g.git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}", cwd=binding.path,
                 fix=f"The branch {branch} is gone from {binding.path}; it cannot be pushed.")


def commits_between(binding: Binding, since: str, branch: str) -> list[str]:
    """``<short sha> <subject>`` of each commit on ``branch`` after ``since``, oldest first. Blocking."""
    out = g.git("log", "--reverse", "--format=%h %s", f"{since}..refs/heads/{branch}", cwd=binding.path,
                fix=f"The branch {branch} or the commit {since[:12]} is gone from {binding.path}.")
    return [line for line in out.splitlines() if line]


def push_branch(binding: Binding, branch: str, forge: ForgeRepo, token: str, home: Path) -> Pushed:
    """Push ``branch``'s commit to ``refs/heads/<branch>`` at the binding's URL. Blocking.

    Raises ``ForgeError("refused")`` naming git's reason (a protected branch, commits on the forge
    this thread lacks, no access) and ``RepoError`` when the branch is gone here.
    """
    commit = branch_commit(binding, own_branch(branch))
    ref = f"refs/heads/{branch}"
    with _credentials(binding.remote_url, forge, token, home) as config:
        # one call: --porcelain says per ref whether it was new ("*"), so no ls-remote before it
        done = g.run("push", "--porcelain", binding.remote_url, f"{commit}:{ref}", cwd=binding.path, config=config)
    flags = [line[0] for line in (done.stdout or "").splitlines() if line[1:2] == "\t"]  # "<flag>\t<from>:<to>\t…"
    if done.returncode != 0 and not flags:  # no ref line at all: git never reached the forge
        raise ForgeError("unreachable", f"could not reach {forge.web_url} with git ({g.said(done)}). "
                         "Check that this machine reaches it, then press the button again.")
    if done.returncode != 0:
        raise ForgeError("refused", f"{forge.name} refused the push of `{branch}` to {forge.path} ({_refusal(done)}). "
                         f"If the branch is protected there, let {forge.token_env}'s owner push flower/ branches; "
                         "if it has commits this thread lacks, bring them in or start over with /new.")
    return Pushed(commit, created="*" in flags)


def delete_branch(binding: Binding, branch: str, forge: ForgeRepo, token: str, home: Path) -> None:
    """Delete ``branch`` on the forge (a push this bot made a moment ago, whose pull request could not
    be opened: nothing is left half-made). Blocking; a failure is raised as ``ForgeError``."""
    with _credentials(binding.remote_url, forge, token, home) as config:
        done = g.run("push", "--quiet", binding.remote_url, f":refs/heads/{branch}", cwd=binding.path, config=config)
    if done.returncode != 0:
        raise ForgeError("refused", f"could not delete `{branch}` on {forge.path} again ({g.said(done)}). "
                         "Delete it there by hand.")


def _refusal(done: subprocess.CompletedProcess[str]) -> str:
    """Why the forge refused a push: what it said (``remote:`` lines, a protected branch's rule) and
    git's rejected lines, else git's own error."""
    lines = [line.strip() for line in (done.stderr or "").splitlines()]
    said = [line.removeprefix("remote:").strip() for line in lines if line.startswith("remote:")]
    # --porcelain writes a refused ref to stdout: "!\t<from>:<to>\t[rejected] (fetch first)"
    rejected = [line.split("\t")[-1].strip() for line in (done.stdout or "").splitlines() if line.startswith("!\t")]
    return clip("; ".join([s for s in said if s] + rejected), 500) or g.said(done)


@contextlib.contextmanager
def _credentials(url: str, forge: ForgeRepo, token: str, home: Path) -> Iterator[tuple[str, ...]]:
    """git settings that answer the forge host's password prompt with ``token``, and nothing else's
    (none for an ssh ``url``: the operator's keys push there)."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not token:
        yield ()
        return
    # git matches a credential URL's port too: a self-hosted forge on :8443 needs it in the key
    where = f"{forge.host}:{parts.port}" if parts.port and parts.port != 443 else forge.host
    folder = home / CREDENTIALS_DIR
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / secrets.token_hex(8)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(f"username={_USERNAMES[forge.kind]}\npassword={token}\n")
        helper = f"!f() {{ test \"$1\" = get && cat {shlex.quote(str(path))}; }}; f"  # FLOWER_HOME may hold any character
        # the empty helper first drops every other one (the operator's, the repository's) for this call
        yield ("credential.helper=", f"credential.https://{where}.helper={helper}")
    finally:
        path.unlink(missing_ok=True)

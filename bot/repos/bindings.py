"""Channel -> git repository bindings, kept in ``FLOWER_HOME/repos.json``.

A channel is bound to either a local checkout (``kind="checkout"``: threads branch from its local
base branch; the checkout's own files and current branch are never touched) or a URL
(``kind="clone"``: cloned once into ``FLOWER_HOME/repos/<name>-<hash>``, shared by every channel
bound to the same URL, fetched before each new thread; threads branch from ``origin/<base>``).
A local bare repository is treated like a URL: it has no working tree to branch beside.

Every check runs before anything is written: a failed bind leaves no folder, no clone and no
``repos.json`` entry behind (a failed clone is made in a temporary folder and removed). A
credential in a URL (``https://user:token@host/…``) is masked in every error raised here: the
message goes to a Slack thread and the log.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator, Literal

from bot.core.outside_text import mask_credentials
from bot.errors import RepoError
from bot.repos import git as g
from engine.host import write_json_atomic

REPOS_FILE = "repos.json"
CLONES = "repos"
REMOTE = "origin"  # the name `git clone` gives the source of a clone
_CHANNEL = re.compile(r"[A-Za-z0-9_-]+")
# scheme://... (https, ssh, git, file) or scp-like user@host:path
_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[^/@\s]+@[^/:\s]+:)")

Kind = Literal["checkout", "clone"]

__all__ = ["Binding", "Bindings", "Kind", "fetch", "is_url"]


@dataclass(frozen=True)
class Binding:
    """One channel's repository: ``source`` as the admin gave it, ``path`` the checkout git runs in."""

    channel: str
    source: str
    base: str
    path: Path
    kind: Kind
    origin: str = ""  # a checkout's origin URL as it was when bound: where its pull requests go

    @property
    def remote_url(self) -> str:
        """The URL a pull request's forge is read from: a clone's source, a checkout's origin when
        bound (never read again from the repository's config, which a thread's agent can change)."""
        return self.source if self.kind == "clone" else self.origin

    @property
    def base_ref(self) -> str:
        """The full ref new thread branches start from (the local branch, or the fetched remote one)."""
        return f"refs/heads/{self.base}" if self.kind == "checkout" else f"refs/remotes/{REMOTE}/{self.base}"

    def to_json(self) -> dict[str, str]:
        return {**asdict(self), "path": str(self.path)}

    @classmethod
    def from_json(cls, data: dict[str, str]) -> "Binding":
        kind: Kind = "clone" if data["kind"] == "clone" else "checkout"
        return cls(data["channel"], data["source"], data["base"], Path(data["path"]), kind, data.get("origin", ""))


def is_url(source: str) -> bool:
    """True when ``source`` reads as a git URL (``https://``, ``ssh://``, ``file://``, ``user@host:path``)."""
    return bool(_URL.match(source.strip()))


@contextlib.contextmanager
def _credentials_masked() -> Iterator[None]:
    """Re-raise a ``RepoError`` with every credential in its text masked (git's command line and
    our own messages can hold the URL as the admin gave it)."""
    try:
        yield
    except RepoError as exc:
        masked = mask_credentials(str(exc))
        if masked == str(exc):
            raise
        raise RepoError(masked) from None  # not chained: a traceback would print the original text


def fetch(binding: Binding) -> None:
    """Bring a clone's ``origin/<base>`` up to date (call before each new thread); a checkout binding
    is left alone (its local base branch is the base). Raises ``RepoError`` when the fetch fails."""
    if binding.kind == "clone":
        with _credentials_masked():
            g.git("fetch", "--prune", REMOTE, cwd=binding.path,
                  fix=f"Check that {binding.source!r} is still reachable, or bind the channel again.")


class Bindings:
    """The bindings of one ``FLOWER_HOME``; safe to use from several threads and processes."""

    def __init__(self, home: str | Path) -> None:
        self.home = Path(home).resolve()
        self.file = self.home / REPOS_FILE
        self.clones = self.home / CLONES

    def all(self) -> dict[str, Binding]:
        """Every binding by channel id (empty when ``repos.json`` does not exist yet)."""
        return {ch: Binding.from_json(b) for ch, b in self._load().items()}

    def get(self, channel: str) -> Binding | None:
        """The channel's binding, or None when the channel works in plain thread folders."""
        return self.all().get(channel)

    def unbind(self, channel: str) -> Binding | None:
        """Forget the channel's binding and return it (None if there was none).

        The clone (shared with other channels) and existing thread worktrees stay; ``cleanup``
        removes worktrees later, branches are never deleted.
        """
        with self._locked():
            data = self._load()
            old = data.pop(channel, None)
            if old is not None:
                write_json_atomic(self.file, data)
        return Binding.from_json(old) if old is not None else None

    def bind(self, channel: str, source: str, base: str | None = None) -> Binding:
        """Bind ``channel`` to ``source`` (a local checkout, a local bare repository or a URL).

        ``base`` defaults to the checkout's current branch, or the remote's default branch for a
        clone. Rebinding a bound channel replaces its binding. Raises ``RepoError`` (and writes
        nothing) for an unsafe channel id, a path that is not a git repository, a checkout with
        uncommitted changes, a URL that cannot be cloned, or an unknown base branch.
        """
        with _credentials_masked():
            return self._bind(channel, source, base)

    def _bind(self, channel: str, source: str, base: str | None) -> Binding:
        if not _CHANNEL.fullmatch(channel or ""):
            raise RepoError(f"channel id {channel!r} is not a Slack channel id (letters, digits, "
                            "'_' and '-' only). Bind from inside the channel.")
        source = (source or "").strip()
        if not source:
            raise RepoError("no repository given. Give a folder that holds a .git, or a URL git can clone.")
        if base is not None:
            base = base.strip()
            if not g.valid_branch_name(base):
                raise RepoError(f"{base!r} is not a valid branch name. Give an existing branch, such as main.")
        local = Path(source).expanduser()
        if not is_url(source) and local.is_dir() and g.is_bare(local):
            binding = self._clone(channel, str(local.resolve()), source, base)
        elif is_url(source):
            binding = self._clone(channel, source, source, base)
        else:
            binding = _checkout(channel, source, local, base)
        with self._locked():
            data = self._load()
            data[channel] = binding.to_json()
            write_json_atomic(self.file, data)
        return binding

    def _clone(self, channel: str, url: str, source: str, base: str | None) -> Binding:
        dest = self.clones / clone_name(url)
        if dest.exists():
            if not g.is_work_tree(dest):
                raise RepoError(f"{dest} exists but is not a git checkout. Remove that folder and bind again.")
            fetch(Binding(channel, source, "", dest, "clone"))
            return Binding(channel, source, _clone_base(dest, url, base), dest, "clone")
        self.clones.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=self.clones, prefix=f".{dest.name}.", suffix=".tmp"))
        try:
            done = g.run("clone", "--quiet", "--", url, str(tmp))
            if done.returncode != 0:
                raise RepoError(f"could not clone {source!r}: {g.said(done)}. Check the URL, and that this "
                                "machine can read it without a password prompt (an ssh key or a "
                                "credential helper).")
            chosen = _clone_base(tmp, url, base)
            try:
                os.rename(tmp, dest)
            except OSError:
                if not g.is_work_tree(dest):  # another bind of the same URL won the race: use its clone
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # a failed or lost clone leaves nothing behind
            with contextlib.suppress(OSError):  # not empty: another clone lives there, keep it
                self.clones.rmdir()
        return Binding(channel, source, chosen, dest, "clone")

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            return json.loads(self.file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            raise RepoError(f"{self.file} cannot be read ({e}). Fix or delete it; "
                            "channels will then need binding again.") from e

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        # read-modify-write of repos.json under a lock: two admins binding at once must both land
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.home / f".{REPOS_FILE}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


def clone_name(url: str) -> str:
    """The clone's folder name: the URL's last part (without ``.git``) plus a short hash of the URL."""
    url = url.strip().rstrip("/")
    last = re.split(r"[/:]", url)[-1].removesuffix(".git")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", last).strip(".-") or "repo"
    return f"{name[:40]}-{hashlib.sha256(url.encode()).hexdigest()[:10]}"


def _checkout(channel: str, source: str, local: Path, base: str | None) -> Binding:
    if not local.is_dir() or not g.is_work_tree(local):
        raise RepoError(f"{source!r} is not a git repository. Bind a folder that holds a .git, "
                        "or a URL git can clone.")
    top = Path(g.git("rev-parse", "--show-toplevel", cwd=local)).resolve()
    dirty = g.status_lines(top)
    if dirty:
        shown = ", ".join(line[3:] for line in dirty[:5]) + (", ..." if len(dirty) > 5 else "")
        raise RepoError(f"{top} has uncommitted changes ({shown}); threads branch from commits, so "
                        "that work would be missing. Commit or stash them, then bind again.")
    if base is None:
        done = g.run("symbolic-ref", "--quiet", "--short", "HEAD", cwd=top)
        if done.returncode != 0:
            raise RepoError(f"{top} is on a detached HEAD, so there is no default base branch. "
                            "Give the base branch to branch from, such as main.")
        base = done.stdout.strip()
    if not g.has_ref(top, f"refs/heads/{base}"):
        raise RepoError(f"branch {base!r} does not exist in {top}. "
                        f"Give one of: {_branches(top, 'refs/heads')}.")
    origin = g.run("remote", "get-url", REMOTE, cwd=top)
    return Binding(channel, source, base, top, "checkout", origin.stdout.strip() if origin.returncode == 0 else "")


def _clone_base(clone: Path, url: str, base: str | None) -> str:
    if base is None:
        done = g.run("symbolic-ref", "--quiet", "--short", f"refs/remotes/{REMOTE}/HEAD", cwd=clone)
        if done.returncode != 0:
            raise RepoError(f"{url!r} has no default branch (is it empty?). Push a first commit "
                            "there, or give the base branch.")
        base = done.stdout.strip().removeprefix(f"{REMOTE}/")
    if not g.has_ref(clone, f"refs/remotes/{REMOTE}/{base}"):
        raise RepoError(f"branch {base!r} does not exist in {url!r}. Give one of: "
                        f"{_branches(clone, f'refs/remotes/{REMOTE}')}.")
    return base


def _branches(repo: Path, prefix: str) -> str:
    out = g.git("for-each-ref", "--format=%(refname)", prefix, cwd=repo)
    names = [r.removeprefix(prefix + "/") for r in out.splitlines() if not r.endswith("/HEAD")]
    return ", ".join(names[:10]) or "(none: the repository has no branches yet)"

"""What the fake forge holds: projects, pull requests, what people said on them, the checks of commits
and the forge's users. ``forge_github.py`` and ``forge_gitlab.py`` answer about it in each forge's shapes.

Branches are read from bare repositories with real git, so "the branch was pushed" is a fact, not a flag.
"""

from __future__ import annotations

import asyncio
import itertools
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Literal, Mapping

BOT = "flower-bot"  # the token's own user on both forges (GitLab user id 1)
EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)
PASSED = ("success", "neutral", "skipped")  # the check conclusions that do not fail a commit
Answer = tuple[int, Any]
NoteKind = Literal["line", "review", "comment"]


class Text(str):
    """An answer that is text/plain, not JSON (a GitLab job's log)."""


@dataclass(frozen=True)
class Paged:
    """One page of a list answer: its items, its number, how many pages the list has at ``per_page``
    and how many items; each forge's API writes the headers that say so (GitHub's Link, GitLab's
    x-next-page and x-total-pages)."""

    items: list[Any]
    page: int
    pages: int
    per_page: int
    total: int


def paged(items: list[Any], query: Mapping[str, str], *, default: int) -> Paged:
    """Page ``page`` of ``items`` at ``per_page`` (``default`` when not asked, at most 100), as both forges
    cut a list: a page past the end is empty."""
    per_page = max(1, min(100, int(query.get("per_page") or default)))
    page = max(1, int(query.get("page") or 1))
    pages = max(1, -(-len(items) // per_page))
    return Paged(items[(page - 1) * per_page: page * per_page], page, pages, per_page, len(items))


def shape(method: str, rest: list[str], fixed: int = 0) -> tuple[str, ...]:
    """A request's route: ``("GET", "pulls", "*", "comments")`` for GET pulls/12/comments. After the
    first ``fixed`` segments, names and ids alternate, and every id is a "*"."""
    return (method, *rest[:fixed], *("*" if i % 2 else s for i, s in enumerate(rest[fixed:])))


def bearer(headers: Mapping[str, str]) -> str:
    scheme, _, value = headers.get("Authorization", "").partition(" ")
    return value.strip() if scheme.lower() in ("bearer", "token") else ""


@dataclass
class Project:
    """One served repository and the permissions its token has there."""

    path: str
    push: bool
    access_level: int
    protected: tuple[str, ...]


@dataclass
class Note:
    """One thing said on a pull request: a comment on a line (``path``, ``line``; ``reply_to`` is the
    first note of its thread), a review (GitHub's ``state``; on GitLab a system note) or a comment."""

    id: int
    kind: NoteKind
    author: str
    body: str
    created: datetime
    path: str = ""
    line: int | None = None
    reply_to: int | None = None
    state: str = ""

    @property
    def thread(self) -> int:
        """The id of the note that opened this one's thread (its own when it opened one)."""
        return self.reply_to or self.id


@dataclass
class Pull:
    """One pull / merge request as the fake keeps it; ``replies`` are (thread as sent, body) of the
    replies made through the API's reply endpoints."""

    number: int
    repo: str
    head: str
    base: str
    title: str
    body: str
    draft: bool
    state: str = "open"
    notes: list[Note] = field(default_factory=list)
    replies: list[tuple[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"number": self.number, "repo": self.repo, "head": self.head, "base": self.base,
                "title": self.title, "body": self.body, "draft": self.draft, "state": self.state}

    def note(self, number: int) -> Note | None:
        return next((n for n in self.notes if n.id == number), None)


@dataclass
class Run:
    """One check of a commit: a GitHub check run, a GitLab job; ``conclusion`` None while it runs."""

    id: int
    name: str
    conclusion: str | None
    summary: str
    text: str

    @property
    def failed(self) -> bool:
        return self.conclusion is not None and self.conclusion not in PASSED


@dataclass(frozen=True)
class Status:
    """One GitHub commit status: ``state`` is pending, success, failure or error."""

    context: str
    state: str
    description: str
    target_url: str


@dataclass(frozen=True)
class Pipeline:
    """The GitLab pipeline a commit's checks make, in merge request ``number``."""

    id: int
    number: int


class Hosted:
    """The projects, pull requests, checks and users of one fake forge; branches read from ``bare_dir``.

    Ids come from one counter and times from one clock a second apart, so whatever is made later has
    a larger id and a later time.
    """

    def __init__(self, bare_dir: Path) -> None:
        self.bare_dir = bare_dir
        self.projects: dict[str, Project] = {}
        self.pulls: list[Pull] = []
        self.users: dict[str, int] = {BOT: 1}
        self.access: dict[str, str] = {}  # login -> "write" | "read" | "none"
        self.runs: dict[str, dict[str, Run]] = {}  # sha -> name -> its latest run
        self.statuses: dict[str, dict[str, Status]] = {}  # sha -> context -> its latest status
        self.pipelines: dict[str, Pipeline] = {}  # sha -> its pipeline (GitLab)
        self._numbers = itertools.count(1)
        self._ids = itertools.count(1001)
        self._seconds = itertools.count(1)

    def add(self, path: str, *, push: bool, access_level: int, protected: tuple[str, ...]) -> None:
        self.projects[path] = Project(path, push, access_level, tuple(protected))

    def open_pull(self, repo: str, head: str, base: str, title: str, body: str, draft: bool) -> Pull:
        pull = Pull(next(self._numbers), repo, head, base, title, body, draft)
        self.pulls.append(pull)
        return pull

    def pull(self, repo: str, number: str) -> Pull | None:
        return next((p for p in self.pulls if p.repo == repo and str(p.number) == number), None)

    def newest_first(self, repo: str, head: str) -> list[Pull]:
        return [p for p in reversed(self.pulls) if p.repo == repo and p.head == head]

    def next_id(self) -> int:
        return next(self._ids)

    def add_note(self, pull: Pull, kind: NoteKind, author: str, body: str, **where: Any) -> Note:
        """A note on ``pull`` said now; ``where`` is path, line, reply_to or state."""
        note = Note(self.next_id(), kind, author, body, EPOCH + timedelta(seconds=next(self._seconds)), **where)
        pull.notes.append(note)
        return note

    def user_id(self, login: str) -> int:
        """``login``'s numeric id, the same every time (100 + n for the n-th user met)."""
        return self.users.setdefault(login, 100 + len(self.users))

    def login_of(self, user_id: int) -> str | None:
        return next((login for login, number in self.users.items() if number == user_id), None)

    def run(self, run_id: int) -> Run | None:
        return next((r for runs in self.runs.values() for r in runs.values() if r.id == run_id), None)

    def sha_of(self, path: str, branch: str) -> str | None:
        """The commit ``refs/heads/<branch>`` points at in ``<bare_dir>/<path>.git``, or None."""
        bare = self.bare_dir / f"{path}.git"
        if not bare.is_dir() or not branch:
            return None
        done = subprocess.run(
            ["git", "--git-dir", str(bare), "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        return (done.stdout.strip() or None) if done.returncode == 0 else None

    async def branch_sha(self, path: str, branch: str) -> str | None:
        """``sha_of`` off the event loop, for the fake's answers (the test's setup calls ``sha_of``)."""
        return await asyncio.to_thread(self.sha_of, path, branch)

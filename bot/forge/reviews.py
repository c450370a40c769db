"""What people say on a pull request, and what its checks say, as the bot reads them back.

``Remark`` is one review comment (on a file and line), one review (approved / changes requested,
with its body) or one conversation comment; ``Check`` one check of the head commit (a GitHub
check run or commit status, a GitLab pipeline or one of its failed jobs). ``Conditional`` keeps
each URL's ETag and last answer, so a poll that finds nothing new is a 304 (free of GitHub's rate
limit) and costs nothing but the request.

The helpers at the end are how both forges' clients cut a summary and a log, and sort remarks.

A remark is words from the internet: who may steer with it is decided by the caller
(``Forge.may_steer``), never by the remark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, Mapping

from bot.forge.pages import Where

__all__ = ["Check", "CheckState", "Conditional", "Dated", "Remark", "RemarkKind", "Verdict", "log_tail",
           "oldest_first", "one_line", "when"]

RemarkKind = Literal["line", "review", "comment"]
Verdict = Literal["", "approved", "changes_requested", "commented"]
CheckState = Literal["pending", "passed", "failed"]


@dataclass(frozen=True)
class Remark:
    """One thing a person said on a pull request.

    ``id`` is unique on the forge across kinds (``line:123``, ``review:45``, ``comment:67``;
    GitLab's notes are ``note:89``). ``author`` is the login shown on the forge, ``author_id`` what
    its member API takes (GitHub: the login; GitLab: the numeric user id). ``thread`` is where a
    reply goes (GitHub: the id of the review comment that opened the thread; GitLab: the
    discussion id); "" when the remark cannot be replied to in place.
    """

    id: str
    kind: RemarkKind
    author: str
    author_id: str
    body: str
    url: str
    path: str = ""
    line: int | None = None
    verdict: Verdict = ""
    thread: str = ""

    def where(self) -> str:
        """``app.py:12`` for a line remark, else ""."""
        if not self.path:
            return ""
        return f"{self.path}:{self.line}" if self.line is not None else self.path


@dataclass(frozen=True)
class Check:
    """One check of a commit: ``name``, ``state``, a one-line ``summary``, its ``url``, and the
    tail of its log where the forge's API gives it ("" otherwise)."""

    name: str
    state: CheckState
    summary: str = ""
    url: str = ""
    log_tail: str = ""


@dataclass
class Conditional:
    """Per URL, the ETag, the JSON and the headers of the last 200: the ETag is sent back as
    ``If-None-Match``; a 304 reuses the JSON and the headers. ``changed`` says whether any answer
    since ``reset()`` was new. ``resume``: per paged list, where its next read goes on
    (``bot.forge.pages.Where``; the watch keeps it across restarts)."""

    answers: dict[str, tuple[str, Any, Mapping[str, str]]] = field(default_factory=dict)
    changed: bool = False
    resume: dict[str, Where] = field(default_factory=dict)

    def reset(self) -> None:
        self.changed = False


# --- what both forges' clients read the same way ------------------------------------------------

Dated = tuple[datetime, int, Remark]  # (created, the forge's numeric id, the remark): what remarks sort by
SUMMARY_CHARS = 300
TAIL_LINES = 20
TAIL_CHARS = 2000


def one_line(text: Any) -> str:
    """The first non-empty line of ``text``, at most 300 characters: a check's summary."""
    line = next((s.strip() for s in str(text or "").splitlines() if s.strip()), "")
    return line[:SUMMARY_CHARS]


def log_tail(text: Any) -> str:
    """The last 20 lines of a log, at most its last 2000 characters: where a failure says why."""
    lines = str(text or "").rstrip().splitlines()[-TAIL_LINES:]
    return "\n".join(lines)[-TAIL_CHARS:]


def when(stamp: Any) -> datetime:
    """An ISO 8601 time from a forge (``...Z`` or an offset; a bare one is UTC), to sort by."""
    moment = datetime.fromisoformat(str(stamp))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def oldest_first(found: list[Dated]) -> list[Remark]:
    """The remarks by created time, then by id (a forge's ids grow, so a tie keeps its order), each
    once (one that moved from page to page while the pages were read comes twice)."""
    unique = {dated[2].id: dated for dated in found}
    return [remark for _, _, remark in sorted(unique.values(), key=lambda dated: dated[:2])]

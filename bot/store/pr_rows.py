"""Rows behind a bound thread's pull request: what it would say, and the one it has.

One row per thread and branch (``/new`` starts a new branch, so a new row and a new pull request).
``report`` is the JSON of the last finished run's ``bot.render.pull_request.Report`` (the brief,
the checks with their states, the judge's reason, cost and rounds), written when the run ends,
so the Open pull request button and the comment after a follow-up read it without the run. Once
opened, ``number``/``url`` name the pull request and ``pushed`` the commit the forge has.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.store.core import StoreCore
from bot.records import ThreadKey

__all__ = ["PullRequestRow", "PullRequestState", "PullRequestsMixin"]

PullRequestState = Literal["proposed", "open", "closed", "merged"]  # proposed: not opened yet
_THREAD = "team = ? AND channel = ? AND thread_ts = ?"
_COLUMNS = "team, channel, thread_ts, branch, report, number, url, state, pushed, updated_at"


@dataclass(frozen=True)
class PullRequestRow:
    """A thread branch's pull request: ``report`` (JSON), and once opened its ``number``, ``url``,
    ``state`` and the ``pushed`` commit."""

    thread: ThreadKey
    branch: str
    report: str
    number: int | None
    url: str
    state: PullRequestState
    pushed: str
    updated_at: float

    @property
    def is_open(self) -> bool:
        """Opened on the forge and, as far as the bot saw, not merged or closed there."""
        return self.state == "open" and self.number is not None


class PullRequestsMixin(StoreCore):
    """The pull request half of ``BotStore``."""

    async def save_pr_report(self, thread: ThreadKey, branch: str, report: str) -> None:
        """Keep ``report`` for ``branch``'s pull request (a new row, or the existing one's report replaced)."""
        await self._changed(
            "INSERT INTO pull_requests (team, channel, thread_ts, branch, report, state, updated_at) "
            "VALUES (?, ?, ?, ?, ?, 'proposed', ?) ON CONFLICT (team, channel, thread_ts, branch) "
            "DO UPDATE SET report = excluded.report, updated_at = excluded.updated_at",
            *ThreadKey(*thread), branch, report, self._now())

    async def pull_request(self, thread: ThreadKey, branch: str) -> PullRequestRow | None:
        """``branch``'s row in ``thread``, or None."""
        rows = await self._rows(f"SELECT {_COLUMNS} FROM pull_requests WHERE {_THREAD} AND branch = ?",
                                *ThreadKey(*thread), branch)
        return _row(rows[0]) if rows else None

    async def set_pull_request(self, thread: ThreadKey, branch: str, *, number: int, url: str,
                               state: PullRequestState, pushed: str) -> None:
        """Record the pull request ``branch`` has on the forge, and the commit pushed to it."""
        await self._changed(
            "INSERT INTO pull_requests (team, channel, thread_ts, branch, report, number, url, state, pushed, "
            "updated_at) VALUES (?, ?, ?, ?, '{}', ?, ?, ?, ?, ?) ON CONFLICT (team, channel, thread_ts, branch) "
            "DO UPDATE SET number = excluded.number, url = excluded.url, state = excluded.state, "
            "pushed = excluded.pushed, updated_at = excluded.updated_at",
            *ThreadKey(*thread), branch, number, url, state, pushed, self._now())

    async def set_pr_state(self, thread: ThreadKey, branch: str, state: PullRequestState) -> None:
        """The forge says ``branch``'s pull request is now ``state`` (merged or closed, seen on a wake)."""
        await self._changed(f"UPDATE pull_requests SET state = ?, updated_at = ? WHERE {_THREAD} AND branch = ?",
                            state, self._now(), *ThreadKey(*thread), branch)


def _row(r: tuple) -> PullRequestRow:
    return PullRequestRow(ThreadKey(*r[:3]), r[3], r[4], r[5], r[6] or "", r[7], r[8] or "", r[9])

"""Rows behind a bound thread's pull request: what it would say, and the one it has.

One row per thread and branch (``/new`` starts a new branch, so a new row and a new pull request).
``report`` is the JSON of the last finished run's ``bot.render.pull_request.Report`` (the brief,
the checks with their states, the judge's reason, cost and rounds), written when the run ends,
so the Open pull request button and the comment after a follow-up read it without the run. Once
opened, ``number``/``url`` name the pull request and ``pushed`` the commit the forge has.

``pr_watch`` holds, per open pull request, what the bot read back from it (``state``: the JSON of
``bot.runs.pr_state.Watch``) and when it reads it next (``poll_at``; a webhook sets it to 0).
Only the replica holding the thread's lease writes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.core.thread import ThreadKey
from bot.store.core import StoreCore

__all__ = ["PullRequestRow", "PullRequestState", "PullRequestsMixin", "WatchedPullRequest"]

PullRequestState = Literal["proposed", "open", "closed", "merged"]  # proposed: not opened yet
_THREAD = "team = ? AND channel = ? AND thread_ts = ?"
RETIRED = 1e300  # a pull_watch poll_at that never comes: /new moved the thread to a new branch
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


@dataclass(frozen=True)
class WatchedPullRequest:
    """An open pull request, when it is read next, and what was read from it (JSON, "{}" at first)."""

    pr: PullRequestRow
    poll_at: float
    state: str


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

    async def watched_pull_requests(self, *, due_by: float = RETIRED) -> list[WatchedPullRequest]:
        """Every open pull request with its watch (due at once and "{}" before its first read);
        ``due_by``: only those whose next read is due by then (the watcher's every tick)."""
        cols = ", ".join(f"p.{c.strip()}" for c in _COLUMNS.split(","))
        rows = await self._rows(
            f"SELECT {cols}, w.poll_at, w.state FROM pull_requests p LEFT JOIN pr_watch w ON w.team = p.team "
            "AND w.channel = p.channel AND w.thread_ts = p.thread_ts AND w.branch = p.branch "
            "WHERE p.state = 'open' AND p.number IS NOT NULL AND (w.poll_at IS NULL OR w.poll_at < ?) "
            "AND (w.poll_at IS NULL OR w.poll_at <= ?) ORDER BY p.updated_at", RETIRED, due_by)
        return [WatchedPullRequest(_row(r[:10]), r[10] or 0.0, r[11] or "{}") for r in rows]

    async def save_pr_watch(self, thread: ThreadKey, branch: str, *, poll_at: float, state: str) -> None:
        """Keep what was read from ``branch``'s pull request and when to read it next."""
        await self._changed(
            "INSERT INTO pr_watch (team, channel, thread_ts, branch, poll_at, state) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (team, channel, thread_ts, branch) DO UPDATE SET poll_at = excluded.poll_at, "
            "state = excluded.state", *ThreadKey(*thread), branch, poll_at, state)

    async def poke_pull_requests(self, *, number: int | None = None, branch: str = "", sha: str = "") -> None:
        """Read at once the open pull requests a webhook names: by ``number``, head ``branch`` or pushed
        commit ``sha`` (two repositories may share a number: a false match costs one read)."""
        await self._changed(
            "UPDATE pr_watch AS w SET poll_at = 0 WHERE EXISTS (SELECT 1 FROM pull_requests p WHERE "
            "p.team = w.team AND p.channel = w.channel AND p.thread_ts = w.thread_ts AND p.branch = w.branch "
            "AND p.state = 'open' AND (p.number = ? OR p.branch = ? OR p.pushed = ?)) AND w.poll_at < ?",
            number, branch or None, sha or None, RETIRED)  # None matches nothing: "= NULL" is never true

    async def retire_pr_watches(self, thread: ThreadKey) -> None:
        """``/new``: the thread's open pull requests are no longer read back (its work moved to a new
        branch; their reviews would steer the wrong one)."""
        for row in await self._rows(f"SELECT branch FROM pull_requests WHERE {_THREAD} AND state = 'open'",
                                    *ThreadKey(*thread)):
            await self.save_pr_watch(thread, row[0], poll_at=RETIRED, state="{}")


def _row(r: tuple) -> PullRequestRow:
    return PullRequestRow(ThreadKey(*r[:3]), r[3], r[4], r[5], r[6] or "", r[7], r[8] or "", r[9])

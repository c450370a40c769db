"""Rows behind Slack's agent surfaces: the message showing each goal's checklist, and the
feedback people gave a run's result.

A plan is keyed by its thread and a digest of the goal it shows: a restart (same goal) edits the
message it had, a follow-up that re-derives the goal gets a message of its own. Feedback is one
row per person and final message: a click of the other button replaces it, and a second click
of the same one withdraws it (Slack's feedback buttons toggle, and send the same value again).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from bot.core.thread import ThreadKey
from bot.store.core import Conn, StoreCore
from engine import StoreError

__all__ = ["Feedback", "Sentiment", "SurfacesMixin"]

Sentiment = Literal["positive", "negative"]
_THREAD = "team = ? AND channel = ? AND thread_ts = ?"


@dataclass(frozen=True)
class Feedback:
    """One person's feedback on one final message of a thread, and when it was (last) given."""

    thread: ThreadKey
    message_ts: str
    user: str
    sentiment: Sentiment
    at: float


class SurfacesMixin(StoreCore):
    """The plans and feedback half of ``BotStore``."""

    async def plan_ts(self, thread: ThreadKey, goal_digest: str) -> str | None:
        """The ts of the message showing the goal with ``goal_digest`` in ``thread``, or None."""
        rows = await self._rows(f"SELECT message_ts FROM plans WHERE {_THREAD} AND goal_digest = ?",
                                *ThreadKey(*thread), goal_digest)
        return rows[0][0] if rows else None

    async def set_plan_ts(self, thread: ThreadKey, goal_digest: str, message_ts: str) -> None:
        """Remember that ``message_ts`` shows the goal with ``goal_digest`` in ``thread`` (kept for
        good: a parked thread may be taken up again days later)."""
        await self._changed(
            "INSERT INTO plans (team, channel, thread_ts, goal_digest, message_ts, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (team, channel, thread_ts, goal_digest) "
            "DO UPDATE SET message_ts = excluded.message_ts, created_at = excluded.created_at",
            *ThreadKey(*thread), goal_digest, message_ts, self._now())

    async def latest_plan_ts(self, thread: ThreadKey) -> str | None:
        """The ts of ``thread``'s newest checklist message (of any goal), or None."""
        rows = await self._rows(f"SELECT message_ts FROM plans WHERE {_THREAD} ORDER BY created_at DESC LIMIT 1",
                                *ThreadKey(*thread))
        return rows[0][0] if rows else None

    async def forget_plans(self, thread: ThreadKey) -> None:
        """``/new``: the thread's checklist messages stay as they are, and the next goal posts its own."""
        await self._changed(f"DELETE FROM plans WHERE {_THREAD}", *ThreadKey(*thread))

    async def record_feedback(self, thread: ThreadKey, message_ts: str, user: str,
                              sentiment: Sentiment) -> Sentiment | None:
        """Record ``user``'s click of ``sentiment`` on the final message ``message_ts``; the one it
        replaced (None for a first click). When that was ``sentiment`` itself, the click deselected
        the button: the feedback is withdrawn (its row deleted)."""
        if sentiment not in get_args(Sentiment):
            raise StoreError(f"feedback must be 'positive' or 'negative'; got {sentiment!r}. "
                             "Pass the sentiment of the button clicked.")
        return await self._run(self._record, ThreadKey(*thread), message_ts, user, sentiment)

    def _record(self, conn: Conn, key: ThreadKey, message_ts: str, user: str,
                sentiment: str) -> Sentiment | None:
        where = f"{_THREAD} AND message_ts = ? AND user_id = ?"
        with self._immediate(conn):
            row = conn.execute(f"SELECT sentiment FROM feedback WHERE {where}", (*key, message_ts, user)).fetchone()
            if row and row[0] == sentiment:
                conn.execute(f"DELETE FROM feedback WHERE {where}", (*key, message_ts, user))
                return row[0]
            conn.execute("INSERT INTO feedback (team, channel, thread_ts, message_ts, user_id, sentiment, at) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (team, channel, thread_ts, message_ts, user_id) "
                         "DO UPDATE SET sentiment = excluded.sentiment, at = excluded.at",
                         (*key, message_ts, user, sentiment, self._now()))
        return row[0] if row else None

    async def feedback(self, thread: ThreadKey) -> list[Feedback]:
        """Every feedback given in ``thread``, oldest first."""
        rows = await self._rows(f"SELECT team, channel, thread_ts, message_ts, user_id, sentiment, at FROM feedback "
                                f"WHERE {_THREAD} ORDER BY at, message_ts, user_id", *ThreadKey(*thread))
        return [Feedback(ThreadKey(*r[:3]), r[3], r[4], r[5], r[6]) for r in rows]

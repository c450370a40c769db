"""Questions asked in a thread: kept in ``bot.db`` so no answer is ever lost or asked for twice.

A question's life: ``add_question`` (open) -> ``answer_question`` (answered, first answer wins)
-> ``consume_answer`` (the run took it: closed). A question the run stops waiting for (a timeout)
is consumed unanswered, which closes it too, so a late click learns it came too late.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Union

from bot.core.thread import ThreadKey
from bot.store.core import Conn, StoreCore
from engine import StoreError

__all__ = ["QuestionRef", "QuestionsMixin"]


@dataclass(frozen=True)
class Question:
    """A question asked in a thread, with its answer once given and whether the run took it.

    ``answer`` None: not answered yet. ``consumed_at`` set: the run has taken the outcome (the
    answer, or a timeout), and the question is closed to further answers.
    """

    id: int
    thread: ThreadKey
    question_key: str
    text: str
    options: tuple[str, ...]
    message_ts: str | None
    asked_by: str
    default: str | None
    deadline: float | None
    asked_at: float
    answer: str | None
    answered_by: str | None
    answered_at: float | None
    consumed_at: float | None

    COLUMNS = (
        "id, team, channel, thread_ts, question_key, text, options, message_ts, asked_by, "
        "default_answer, deadline, asked_at, answer, answered_by, answered_at, consumed_at"
    )

    @property
    def answered(self) -> bool:
        """True once somebody answered (by button or reply)."""
        return self.answer is not None

    @property
    def open(self) -> bool:
        """True while an answer can still be given: not answered and not closed by the run."""
        return self.answer is None and self.consumed_at is None

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Question:
        """Build from a row selected with ``COLUMNS``."""
        return cls(row[0], ThreadKey(*row[1:4]), row[4], row[5], tuple(json.loads(row[6])), *row[7:])


# A question by id, or by (thread, question_key): the newest question with that key in the thread.
QuestionRef = Union[int, tuple[ThreadKey, str]]

_SELECT = f"SELECT {Question.COLUMNS} FROM questions"
_BY_KEY = "team = ? AND channel = ? AND thread_ts = ? AND question_key = ?"


def _resolve(conn: Conn, ref: QuestionRef, *, open_only: bool = False) -> int | None:
    """The id ``ref`` names (by key: the newest one, or the newest unconsumed one), or None."""
    if isinstance(ref, int) and not isinstance(ref, bool):
        return ref
    if not (isinstance(ref, tuple) and len(ref) == 2 and isinstance(ref[1], str)):
        raise StoreError(
            f"a question is named by its id (an int) or by (thread key, question_key); got {ref!r}. "
            "Pass one of those."
        )
    thread, key = ref
    extra = " AND consumed_at IS NULL" if open_only else ""
    row = conn.execute(
        f"SELECT id FROM questions WHERE {_BY_KEY}{extra} ORDER BY id DESC LIMIT 1", (*ThreadKey(*thread), key)
    ).fetchone()
    return None if row is None else row[0]


def _get(conn: Conn, qid: int | None) -> Question | None:
    if qid is None:
        return None
    row = conn.execute(f"{_SELECT} WHERE id = ?", (qid,)).fetchone()
    return None if row is None else Question.from_row(row)


class QuestionsMixin(StoreCore):
    """The questions half of ``BotStore``."""

    async def add_question(
        self,
        thread: ThreadKey,
        question_key: str,
        text: str,
        options: Sequence[str] = (),
        message_ts: str | None = None,
        asked_by: str = "",
        default: str | None = None,
        deadline: float | None = None,
    ) -> int:
        """Record a question asked in ``thread``; return its id.

        ``question_key`` names "the same question" across a restart (e.g. a hash of who asks, the
        text and the options). If an unconsumed question with that key is already in the thread
        (a resumed run asking again), its id is returned and nothing is inserted: no second
        message, and an answer given meanwhile is kept (check ``get_question(id).answered``).
        ``deadline`` is an epoch time, ``default`` the answer used when it passes.
        """
        opts = [str(o) for o in options]
        return await self._run(self._add_question, ThreadKey(*thread), question_key, text, opts, message_ts,
                               asked_by, default, deadline)

    def _add_question(self, conn: Conn, thread: ThreadKey, key: str, text: str, options: list,
                      message_ts: str | None, asked_by: str, default: str | None, deadline: float | None) -> int:
        with self._immediate(conn):
            qid = _resolve(conn, (thread, key), open_only=True)
            if qid is not None:
                return qid
            [(new_id,)] = conn.execute(  # fetched whole: SQLite commits no statement still stepping
                "INSERT INTO questions (team, channel, thread_ts, question_key, text, options, message_ts, "
                "asked_by, default_answer, deadline, asked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (*thread, key, text, json.dumps(options, ensure_ascii=False), message_ts, asked_by, default,
                 deadline, self._now()),
            ).fetchall()
            return int(new_id)

    async def set_question_message(self, question_id: int, message_ts: str) -> bool:
        """Remember the ts of the message that shows the question (to replace its buttons later)."""
        return await self._changed("UPDATE questions SET message_ts = ? WHERE id = ?", message_ts, question_id)

    async def answer_question(self, ref: QuestionRef, text: str, by: str) -> bool:
        """Answer an open question; True only for the first answer (a compare-and-set).

        Two clicks (or a click and a reply, or two processes) race: exactly one gets True. An
        answered, consumed (timed out) or unknown question gives False. By key, the newest
        unconsumed question with that key is answered.
        """
        return await self._run(self._answer, ref, text, by)

    def _answer(self, conn: Conn, ref: QuestionRef, text: str, by: str) -> bool:
        with self._immediate(conn):
            qid = _resolve(conn, ref, open_only=True)
            cur = conn.execute(
                "UPDATE questions SET answer = ?, answered_by = ?, answered_at = ? "
                "WHERE id = ? AND answer IS NULL AND consumed_at IS NULL",
                (text, by, self._now(), qid),
            )
            return cur.rowcount == 1

    async def get_question(self, ref: QuestionRef) -> Question | None:
        """The question ``ref`` names (by key: the newest with that key, consumed or not), or None."""
        return await self._run(lambda conn: _get(conn, _resolve(conn, ref)))

    async def pending_questions(self, thread: ThreadKey) -> list[Question]:
        """Open questions of ``thread`` (unanswered, not consumed), oldest first."""
        rows = await self._rows(
            f"{_SELECT} WHERE team = ? AND channel = ? AND thread_ts = ? AND answer IS NULL "
            "AND consumed_at IS NULL ORDER BY id", *ThreadKey(*thread))
        return [Question.from_row(r) for r in rows]

    async def questions_waiting(self) -> int:
        """How many open questions wait for a person, in every thread (the operator's metrics)."""
        rows = await self._rows("SELECT COUNT(*) FROM questions WHERE answer IS NULL AND consumed_at IS NULL")
        return int(rows[0][0])

    async def answered_unconsumed(self, thread: ThreadKey, question_key: str) -> Question | None:
        """The newest question with this key that has an answer the run has not taken yet, or None.

        This is an answer given while the run was down (or before a resumed run asked again): the
        resumed run takes it instead of asking twice.
        """
        rows = await self._rows(
            f"{_SELECT} WHERE {_BY_KEY} AND answer IS NOT NULL AND consumed_at IS NULL ORDER BY id DESC LIMIT 1",
            *ThreadKey(*thread), question_key)
        return Question.from_row(rows[0]) if rows else None

    async def consume_answer(self, ref: QuestionRef) -> Question | None:
        """Mark a question as taken by the run (closing it) and return it; None if already taken.

        Works unanswered too (the run stopped waiting): the question is closed and a later
        answer loses. If an answer won the race first, the returned question carries it.
        """
        return await self._run(self._consume, ref)

    def _consume(self, conn: Conn, ref: QuestionRef) -> Question | None:
        with self._immediate(conn):
            qid = _resolve(conn, ref, open_only=True)
            cur = conn.execute(
                "UPDATE questions SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL", (self._now(), qid))
            return _get(conn, qid) if cur.rowcount == 1 else None

    async def close_questions(self, thread: ThreadKey) -> list[Question]:
        """Close every question of ``thread`` not taken yet (``/new``): a late click loses, a fresh run
        asking the same question is asked anew; returns those that were still unanswered (oldest first)."""
        return await self._run(self._close_all, ThreadKey(*thread))

    def _close_all(self, conn: Conn, thread: ThreadKey) -> list[Question]:
        where = "team = ? AND channel = ? AND thread_ts = ? AND consumed_at IS NULL"
        with self._immediate(conn):
            open_ = [Question.from_row(r) for r in
                     conn.execute(f"{_SELECT} WHERE {where} AND answer IS NULL ORDER BY id", thread).fetchall()]
            conn.execute(f"UPDATE questions SET consumed_at = ? WHERE {where}", (self._now(), *thread))
        return open_


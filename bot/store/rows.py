"""The rows ``BotStore`` hands out: a thread, a question, an outbox item, an inbox item (a thread's key and
states are ``bot.core.thread``'s)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from bot.core.thread import ThreadKey, ThreadState

__all__ = [
    "InboxItem",
    "OutboxItem",
    "Question",
    "Thread",
]

@dataclass(frozen=True)
class Thread:
    """One Slack thread and its workspace. ``last_seen_ts``: newest message ts seen in it."""

    key: ThreadKey
    workspace: str
    state: ThreadState
    last_seen_ts: str | None
    status_ts: str | None
    created_by: str
    created_at: float
    updated_at: float

    COLUMNS = "team, channel, thread_ts, workspace, state, last_seen_ts, status_ts, created_by, created_at, updated_at"

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Thread:
        """Build from a row selected with ``COLUMNS``."""
        return cls(ThreadKey(*row[:3]), *row[3:])


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


OutboxState = Literal["pending", "sent", "failed"]


@dataclass(frozen=True)
class OutboxItem:
    """A notice waiting to be posted (``pending``), posted (``sent``) or given up on (``failed``)."""

    id: int
    thread: ThreadKey
    kind: str
    dedupe_key: str
    payload: dict[str, Any]
    created_at: float
    state: OutboxState
    attempts: int
    error: str | None
    retry_at: float | None
    sent_ts: str | None

    COLUMNS = (
        "id, team, channel, thread_ts, kind, dedupe_key, payload, created_at, state, attempts, error, "
        "retry_at, sent_ts"
    )

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> OutboxItem:
        """Build from a row selected with ``COLUMNS``."""
        return cls(row[0], ThreadKey(*row[1:4]), row[4], row[5], json.loads(row[6]), *row[7:])


@dataclass(frozen=True)
class InboxItem:
    """Words a person said in a thread while its run was busy: text, who, and the message ts."""

    id: int
    text: str
    by: str
    ts: str
    at: float

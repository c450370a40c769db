"""``BotStore``: the bot's own state in one SQLite file (``bot.db`` under FLOWER_HOME).

Threads and handled event ids live in ``bot.store.threads``; questions in
``bot.store.questions``, the outbox and inbox in ``bot.store.queues``, checklist messages and
feedback in ``bot.store.surface_rows``, pull requests in ``bot.store.pr_rows``, pruning of old
rows in ``bot.store.housekeeping``, the tables in ``bot.store.schema``. The same mixins on
PostgreSQL are ``bot.store.pg_store.PgBotStore``. Everything a restart must not lose is written
before the bot acts on it: a click's answer, an event id, a notice to post.
"""

from __future__ import annotations

from pathlib import Path

from bot.store.housekeeping import HousekeepingMixin
from bot.store.leases import LeasesMixin
from bot.store.ledger_rows import AuditRow, LedgerMixin, UsageRow
from bot.store.pr_rows import PullRequestRow, PullRequestsMixin
from bot.store.questions import Question, QuestionRef, QuestionsMixin
from bot.store.queues import InboxItem, OutboxItem, QueuesMixin
from bot.store.sqlite_base import StoreBase
from bot.store.surface_rows import Feedback, SurfacesMixin
from bot.store.threads import Thread, ThreadsMixin
from engine import StoreError

__all__ = [
    "AuditRow",
    "DB_NAME",
    "BotStore",
    "Feedback",
    "InboxItem",
    "OutboxItem",
    "PullRequestRow",
    "Question",
    "QuestionRef",
    "StoreError",
    "Thread",
    "UsageRow",
]

DB_NAME = "bot.db"


class BotStore(ThreadsMixin, QuestionsMixin, QueuesMixin, SurfacesMixin, PullRequestsMixin, HousekeepingMixin,
               LeasesMixin, LedgerMixin, StoreBase):
    """The bot's state, async, safe across tasks, threads and processes; see the module docstring.

    ``path`` and its folder are created on first use. ``clock`` gives epoch seconds (tests pass a
    fake one). Failures raise ``StoreError`` naming the file and the fix. Call ``close()`` (or
    ``aclose()``) when done; the store reopens on next use.
    """

    @classmethod
    def at_home(cls, home: str | Path, **kwargs) -> BotStore:
        """The store in ``home`` (FLOWER_HOME): ``home/bot.db``."""
        return cls(Path(home) / DB_NAME, **kwargs)

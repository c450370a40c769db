"""``PgBotStore``: the bot's own state in a PostgreSQL database, for several bot replicas at once.

The same tables (``bot.store.pg_tables``) and the same operations as ``BotStore`` (the mixins of
``bot.store.bot_store``), over ``bot.store.pg_base`` instead of a SQLite file. Chosen by
``FLOWER_DATABASE_URL`` (``bot.store.factory.open_bot_store``).
"""

from __future__ import annotations

from bot.store.housekeeping import HousekeepingMixin
from bot.store.leases import LeasesMixin
from bot.store.ledger_rows import LedgerMixin
from bot.store.pg_base import PgStoreBase
from bot.store.pr_rows import PullRequestsMixin
from bot.store.questions import QuestionsMixin
from bot.store.queues import QueuesMixin
from bot.store.surface_rows import SurfacesMixin
from bot.store.threads import ThreadsMixin

__all__ = ["PgBotStore"]


class PgBotStore(ThreadsMixin, QuestionsMixin, QueuesMixin, SurfacesMixin, PullRequestsMixin, HousekeepingMixin,
                 LeasesMixin, LedgerMixin, PgStoreBase):
    """The bot's state in the database at ``url``, async, safe across tasks, threads and replicas.

    Every method behaves as ``BotStore``'s; the tables are made (migrated) at first use. Failures
    raise ``StoreError`` naming the database (its password left out) and the fix. Call
    ``close()`` (or ``aclose()``) when done; the store reconnects on next use.
    """

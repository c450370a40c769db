"""Which store keeps the bot's state: ``open_bot_store(config)``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

from bot.store.bot_store import BotStore
from bot.store.pg_store import PgBotStore

if TYPE_CHECKING:
    from bot.settings.config import Config

__all__ = ["AnyBotStore", "open_bot_store"]

AnyBotStore = Union[BotStore, PgBotStore]


def open_bot_store(config: Config) -> AnyBotStore:
    """``PgBotStore`` on ``config.database_url`` (FLOWER_DATABASE_URL) when set, else ``BotStore`` on
    ``config.db_path`` (bot.db under FLOWER_HOME). Nothing is opened before the first operation."""
    if config.database_url:
        return PgBotStore(config.database_url)
    return BotStore(config.db_path)

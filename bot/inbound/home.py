"""The app's Home tab, drawn when a person opens it (``app_home_opened``) and after a Stop there.

A person sees their newest runs: state, the request linked to its thread, what it cost (the
ledger), and Stop while one is live; Stop there is the thread's own Stop (it asks first, and only
someone allowed in that thread's channel may press it). An admin (``FLOWER_ADMINS``) also sees the
month's spend by channel and by person against their limits.
"""

from __future__ import annotations

import asyncio
import logging
import time

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ACTIVE_STATES, workspace_dir
from bot.inbound.gate import Gate
from bot.inbound.intake import Intake
from bot.outbound.outbox import SLACK_FAILED, permalink
from bot.render import controls
from bot.render.home_view import HomeRun, home_view
from bot.runs.start import SavedRequest
from bot.settings.config import Config
from bot.settings.limits import month_start
from bot.store.bot_store import BotStore

log = logging.getLogger(__name__)

__all__ = ["Home"]


class Home:
    """The Home tab of one bot."""

    def __init__(self, *, config: Config, store: BotStore, client: AsyncWebClient, intake: Intake, gate: Gate) -> None:
        self.config, self.store, self.client, self.intake, self.gate = config, store, client, intake, gate

    async def opened(self, user: str) -> None:
        """Publish ``user``'s Home tab (a failure is logged: the tab is a view, the bot goes on)."""
        runs = []
        for thread in await self.store.threads_started_by(user):
            ask = await asyncio.to_thread(SavedRequest(workspace_dir(self.config.home, thread.key)).text)
            live = thread.state in ACTIVE_STATES
            runs.append(HomeRun(thread.state, ask, await permalink(self.client, thread.key.channel, thread.key.thread_ts),
                                await self.store.spent(0.0, thread=thread.key),
                                controls.thread_value(thread.key) if live else ""))
        admin = await self.gate.groups.has(self.config.admins, user)
        view = home_view(runs, **(await self._month() if admin else {}))
        try:
            await self.client.views_publish(user_id=user, view=view)
        except SLACK_FAILED as exc:
            log.warning("could not publish the Home tab of %s: %s", user, exc)

    async def stop(self, user: str, value: str) -> None:
        """Stop pressed on the Home tab: the thread's Stop, for someone allowed in its channel."""
        key = controls.parse_thread_value(value)
        if key is None:
            return
        if await self.gate.refusal(user, key.channel) is None:
            await self.intake.control_click(key, user, stop=True)
        await self.opened(user)

    async def _month(self) -> dict:
        rows = await self.store.usage_since(month_start(time.time()))
        channels: dict[str, float] = {}
        people: dict[str, float] = {}
        for row in rows:
            channels[row.thread.channel] = channels.get(row.thread.channel, 0.0) + row.cost_usd
            people[row.user] = people.get(row.user, 0.0) + row.cost_usd
        by_channel = [(f"<#{c}>", spent, self.config.for_channel(c).limits.channel)
                      for c, spent in sorted(channels.items(), key=lambda kv: -kv[1])]
        by_person = [(f"<@{u}>" if u else "—", spent, self.config.for_channel("").limits.user)
                     for u, spent in sorted(people.items(), key=lambda kv: -kv[1])]
        return {"by_channel": by_channel, "by_person": by_person}

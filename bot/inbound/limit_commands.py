"""``@flower /limit``: the spend limits of a channel, shown to anyone, changed by admins only; and
``@flower /policy``: the settings in effect in the channel, shown to an admin.

A channel's own limit (in ``bot.db``'s ``limits``) overrides the ``FLOWER_LIMIT_*_USD`` default
there; ``off`` removes it. Every change is in the audit trail. A run paused at a limit goes on
when someone replies after the limit was raised (``bot.runs.spend_book``).

The installation's admins may set any scope; a channel's own admins set ``request``, ``thread``
and ``channel``, and may only lower ``user`` and ``month`` there (``bot.settings.limits.lowers``): those
are the operator's caps, and a raise is refused in the thread, saying who may. Their lowering is
kept as a cap under the operator's (``bot.settings.limits.cap``), so a later lowering by the operator applies.
"""

from __future__ import annotations

import time

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey, notice_key
from bot.outbound.outbox import Outbox, ephemeral
from bot.outbound.user_groups import UserGroups
from bot.render import messages as render
from bot.render import texts
from bot.render.limit_notices import limits_message, policy_message
from bot.render.notices import cost
from bot.runs.spend_book import SpendBook, installation_admins
from bot.settings.config import Config
from bot.settings.limits import INSTALLATION, SCOPES, cap, lowers, month_start, parse_usd
from bot.store.bot_store import BotStore

__all__ = ["LimitCommands"]


class LimitCommands:
    """``/limit`` in one bot: the answer goes in the thread it was asked in."""

    def __init__(self, *, config: Config, store: BotStore, client: AsyncWebClient, outbox: Outbox,
                 book: SpendBook) -> None:
        self.config, self.store, self.client, self.outbox, self.book = config, store, client, outbox, book
        self.groups = UserGroups(client)

    async def command(self, key: ThreadKey, user: str, scope: str, amount: str) -> None:
        if not scope:
            await self._show(key, user)
            return
        operator = await self.groups.has(installation_admins(self.config), user)
        if not operator and not await self.groups.has(self.config.for_channel(key.channel).admins, user):
            await ephemeral(self.client, key.channel, user, texts.LIMIT_ADMINS_ONLY.format(who=render.mention(user)),
                            thread_ts=key.thread_ts)
            return
        try:
            if scope not in SCOPES:
                raise ValueError(texts.LIMIT_BAD_SCOPE.format(scope=scope))
            usd = None if amount.lower() in ("off", "none", "") else parse_usd(amount, source="the amount")
        except ValueError as exc:
            await ephemeral(self.client, key.channel, user, texts.LIMIT_BAD.format(why=str(exc).rstrip(".")),
                            thread_ts=key.thread_ts)
            return
        in_force = getattr(await self.book.limits(key), scope)
        if scope in INSTALLATION and not operator and not lowers(usd, in_force):  # the operator's cap: lower only
            await self.store.audit(user, "limit_refused", (key.team, key.channel, key.thread_ts),
                                   f"{scope}={usd or 'off'}")
            said = texts.LIMIT_OPERATORS_ONLY.format(who=render.mention(user), scope=scope, limit=cost(in_force))
            await self.outbox.send(key, "limit-refused", notice_key("limit-refused", key, time.time()), said)
            return
        if scope in INSTALLATION and not operator:  # a cap under the operator's, never in its place
            await self.store.set_limit(key.team, key.channel, cap(scope), usd, user)
        else:
            await self.store.set_limit(key.team, key.channel, scope, usd, user)
            if scope in INSTALLATION:  # the operator's word is the channel's value: no cap stays under it
                await self.store.set_limit(key.team, key.channel, cap(scope), None, user)
        await self.store.audit(user, "limit", (key.team, key.channel, key.thread_ts), f"{scope}={usd or 'off'}")
        now = getattr(await self.book.limits(key), scope)
        said = (texts.LIMIT_SET if usd is not None else texts.LIMIT_REMOVED).format(
            who=render.mention(user), what=texts.LIMIT_WHAT[scope],
            limit=cost(now) if now is not None else texts.NO_LIMIT)
        await self.outbox.send(key, "limit-set", notice_key("limit-set", key, time.time()), said)

    async def _show(self, key: ThreadKey, user: str) -> None:
        limits, since = await self.book.limits(key), month_start(time.time())
        thread = await self.store.get_thread(key)
        person = (thread.created_by if thread is not None else "") or user
        spent = {"thread": await self.store.spent(0.0, thread=key),  # a request's spend is its run's: not shown here
                 "channel": await self.store.spent(since, team=key.team, channel=key.channel),
                 "user": await self.store.spent(since, user=person), "month": await self.store.spent(since)}
        shown = limits_message([(scope, getattr(limits, scope), v) for scope, v in spent.items()])
        await ephemeral(self.client, key.channel, user, shown["text"], thread_ts=key.thread_ts, blocks=shown["blocks"])

    async def policy(self, key: ThreadKey, user: str) -> None:
        """``/policy``: the settings in effect in ``key``'s channel, only to an admin (ephemeral)."""
        policy = self.config.for_channel(key.channel)
        if not await self.groups.has(policy.admins, user):
            await ephemeral(self.client, key.channel, user, texts.POLICY_ADMINS_ONLY.format(who=render.mention(user)),
                            thread_ts=key.thread_ts)
            return
        limits = policy.limits.over(await self.store.channel_limits(key.team, key.channel))
        error = self.config.policy.error if self.config.policy is not None else ""
        shown = policy_message(policy, limits, error=error)
        await ephemeral(self.client, key.channel, user, shown["text"], thread_ts=key.thread_ts, blocks=shown["blocks"])

"""What reaches ``Intake``, as bolt middleware: people only, each event once, allowed people only.

``bot.inbound.app`` registers them in this order (bolt's own self-event filter runs first and drops
the bot's own posts):

- ``people_only`` (global): a ``message`` event counts only as a person's reply in a thread;
  edits, joins, deletions (``message_changed`` fires for our own ``chat.update`` too), other bots
  and top-level chatter are acked and dropped, and so is a mention by another app or with no user.
- ``claim_once`` (``app_mention``, ``message``): the event is claimed in ``bot.db`` (event id, then
  channel+ts), so a redelivery or the app_mention + message pair of one mention is handled once,
  across restarts too; the thread's ``last_seen_ts`` moves on (refused or not: catch-up reads back
  from there). ``context["thread"]`` is the thread.
- ``names_thread`` / ``names_question`` (buttons): what the button acts on, in ``context``; a
  malformed button, or one from another channel, is acked and dropped.
- ``allow_list`` (every listener, last): someone not allowed here gets an ephemeral refusal and
  nothing else happens.

A middleware that stops returns ``await ack()``: bolt then answers Slack 200 (without it the
answer is a 404, and over HTTP Slack would retry). Middleware runs before bolt acks, so the claim
is one SQLite transaction (``BotStore.claim``: one fsync), and the refusal is posted after the
ack by bolt's lazy listener runner. A claim that ``bot.db`` refuses (locked past its busy timeout,
full, read-only, vanished) is acked too, and the person is told so in the thread, straight through
the Web API (``bot.inbound.gate``): Slack redelivers an unacked event a few times within
minutes and then never again, and a claim that cannot be written could not keep it for later
either. Any other failure here reaches the app's error handler and Slack gets no ack, so it
delivers the event again.

Catch-up (``bot.inbound.catchup``) reads missed replies without bolt: ``admit_reply`` is the
``message`` listener's chain, the same functions in the same order.

Words the bot could not record (``Unrecorded``): bot.db or the workspaces folder refused; the person
is told once in a while, never silently dropped.
"""

from __future__ import annotations

import logging
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey
from bot.outbound.outbox import SLACK_FAILED, ephemeral
from bot.outbound.user_groups import UserGroups
from bot.render import controls, texts
from bot.render import messages as render
from bot.settings.config import Config
from bot.store.bot_store import BotStore, StoreError
from bot.store.faults import StorageFault, diagnose

__all__ = ["Gate", "Unrecorded", "cannot_take", "unrecorded_for"]

Next = Callable[[], Awaitable[None]]  # bolt's ``next``: the request goes on to the next middleware


class Gate:
    """The checks before ``Intake`` reads an event, as plain functions and as bolt middleware."""

    def __init__(self, *, config: Config, store: BotStore, client: AsyncWebClient) -> None:
        self.config, self.store, self.client = config, store, client
        self.groups = UserGroups(client)

    @property
    def unrecorded(self) -> Unrecorded:
        """Where messages the bot could not record are answered (shared with ``Intake``)."""
        return unrecorded_for(self.client)

    # -- the checks (catch-up calls them without bolt) ----------------------------------------

    @staticmethod
    def is_person_reply(event: dict[str, Any]) -> bool:
        """True for a person's message in a thread: no subtype but a file share, no bot, a user."""
        return (event.get("subtype") in (None, "file_share") and not event.get("bot_id")
                and bool(event.get("thread_ts")) and bool(event.get("user")))

    async def claim(self, body: dict[str, Any], event: dict[str, Any]) -> ThreadKey | None:
        """Claim a mention or a reply once and move its thread's ``last_seen_ts``; its thread.

        None when it was claimed before, or when a reply is not in a thread the bot runs: that
        one is not claimed, so the app_mention of a mention there still is.
        """
        key = ThreadKey(body.get("team_id") or event.get("team", ""), event["channel"],
                        event.get("thread_ts") or event["ts"])
        # event id, then channel+ts, then last_seen_ts (the start-up read back begins after it)
        claimed = await self.store.claim(key, event["ts"], event_id=body.get("event_id"),
                                         known_thread=event.get("type") != "app_mention")
        return key if claimed else None

    async def refusal(self, user: str, channel: str) -> str | None:
        """The ephemeral text for someone who may not start or steer runs here; None when they may
        (the channel's policy may name user groups: resolved by ``bot.outbound.user_groups``)."""
        allowed = self.config.for_channel(channel).allowed_users
        if allowed and not await self.groups.has(allowed, user):
            return render.refusal(user, reason="user")["text"]
        if not self.config.channel_allowed(channel):
            return render.refusal(user, reason="channel")["text"]
        return None

    async def admit_reply(self, body: dict[str, Any], event: dict[str, Any]) -> ThreadKey | None:
        """A reply's thread when ``Intake.message`` should read it: ``people_only``, ``claim_once``
        and ``allow_list`` in the order bolt runs them, the refusal posted here and then."""
        if not self.is_person_reply(event):
            return None
        key = await self.claim(body, event)
        if key is None:
            return None
        refusal = await self.refusal(event["user"], event["channel"])
        if refusal is not None:
            await ephemeral(self.client, event["channel"], event["user"], refusal, thread_ts=event["thread_ts"])
            return None
        return key

    # -- bolt middleware ----------------------------------------------------------------------

    async def people_only(self, body: dict[str, Any], ack: AsyncAck, next: Next) -> BoltResponse | None:
        """Global: drop every ``message`` event that is not a person's reply in a thread, and every
        mention by another app or with no user (an app must never start or steer a run)."""
        event = body.get("event") or {}
        if body.get("type") == "event_callback":
            kind = event.get("type")
            if (kind == "message" and not self.is_person_reply(event)) or \
                    (kind == "app_mention" and (event.get("bot_id") or event.get("subtype") or not event.get("user"))):
                return await ack()
        return await next()

    async def claim_once(self, req: AsyncBoltRequest, body: dict[str, Any], event: dict[str, Any],
                         context: AsyncBoltContext, ack: AsyncAck, next: Next) -> BoltResponse | None:
        """Events: go on only the first time, with the thread in ``context["thread"]``; a claim
        ``bot.db`` refuses is acked and answered in the thread (``unrecorded``), once."""
        if self.unrecorded.told(event["channel"], event["ts"]):
            return await ack()  # answered "try again" already: a late redelivery must not start it after all
        try:
            key = await self.claim(body, event)
        except StoreError as exc:
            fault = diagnose(exc)
            if fault is None:
                raise
            tell = await self._unrecordable(body, event, fault)
            if tell is not None:  # after the ack: a post held up by a 429 must not hold the ack up too
                context.listener_runner.lazy_listener_runner.start(function=tell, request=req)
            return await ack()
        if key is None:
            return await ack()
        context["thread"] = key
        return await next()

    async def _unrecordable(self, body: dict[str, Any], event: dict[str, Any],
                            fault: StorageFault) -> Callable[[], Awaitable[None]] | None:
        """What to post for an event whose claim failed with ``fault``: the refusal for someone not
        allowed, nothing for a reply in a thread the bot does not run (or cannot tell), else the
        answer that it could not be recorded."""
        channel, ts, user = event["channel"], event["ts"], event.get("user", "")
        thread_ts = event.get("thread_ts") or ts
        refusal = await self.refusal(user, channel)
        if refusal is not None:
            async def refuse() -> None:
                await ephemeral(self.client, channel, user, refusal, thread_ts=event.get("thread_ts"))
            return refuse
        if event.get("type") != "app_mention":  # a reply counts only in a thread the bot runs
            key = ThreadKey(body.get("team_id") or event.get("team", ""), channel, thread_ts)
            try:
                known = await self.store.get_thread(key) is not None
            except StoreError:
                known = False  # cannot tell: saying nothing beats answering chatter that is not ours
            if not known:
                return None

        async def tell() -> None:
            await self.unrecorded.tell(channel, thread_ts, ts, fault)
        return tell

    async def names_thread(self, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext,
                           ack: AsyncAck, next: Next) -> BoltResponse | None:
        """Stop, Start over, Push, Diff: the thread in the button's value, in ``context["thread"]``
        (and the branch a Push button names, in ``context["branch"]``)."""
        key = controls.parse_thread_value(action.get("value", ""))
        if key is None or key.channel != body["channel"]["id"]:
            return await ack()
        context["thread"], context["branch"] = key, controls.parse_branch(action.get("value", ""))
        return await next()

    async def names_question(self, body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext,
                             ack: AsyncAck, next: Next) -> BoltResponse | None:
        """An answer button: its stored question and option index, in ``context``."""
        parsed = render.parse_answer_value(action.get("value", ""))
        q = await self.store.get_question(parsed[0]) if parsed is not None else None
        if parsed is None or q is None or parsed[1] >= len(q.options) or q.thread.channel != body["channel"]["id"]:
            return await ack()
        context["question"], context["option"] = q, parsed[1]
        return await next()

    async def allow_list(self, req: AsyncBoltRequest, context: AsyncBoltContext, ack: AsyncAck,
                         next: Next) -> BoltResponse | None:
        """Go on for people allowed here; refuse the rest ephemerally, after the ack.

        The refusal goes where the person spoke or clicked: the thread, or the channel for a
        top-level mention (bolt's ``context.thread_ts``).
        """
        user, channel, thread_ts = context.user_id or "", context.channel_id or "", context.thread_ts
        refusal = await self.refusal(user, channel)
        if refusal is None:
            return await next()

        async def refuse() -> None:
            await ephemeral(self.client, channel, user, refusal, thread_ts=thread_ts)

        # bolt's way to start work from middleware that must not hold up the ack (a 429 can take seconds)
        context.listener_runner.lazy_listener_runner.start(function=refuse, request=req)
        return await ack()


# -- Words the bot could not record (``Unrecorded``) -----------------------------------------------
log = logging.getLogger(__name__)

REMEMBERED = 2000  # messages answered, kept to drop their second delivery (a few minutes' worth)


def cannot_take(fault: StorageFault) -> str:
    """The sentence for the thread: what refused, and to try again."""
    why = texts.CANNOT_TAKE_WHY.get((fault.where, fault.fault), texts.CANNOT_TAKE_ANY)
    return texts.CANNOT_TAKE.format(why=why)


class Unrecorded:
    """Answers messages the bot could not record; ``told`` says which it answered already."""

    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client
        self._told: OrderedDict[tuple[str, str], None] = OrderedDict()

    def told(self, channel: str, ts: str) -> bool:
        """True when the message at ``channel``/``ts`` was answered here already."""
        return (channel, ts) in self._told

    async def tell(self, channel: str, thread_ts: str, ts: str, fault: StorageFault) -> bool:
        """Say ``fault`` in the thread ``thread_ts`` about the message ``ts``; False when that
        message was answered before. The cause is logged (it names the file and the fix); a post
        Slack refuses is logged too, and not retried: there is nowhere to keep it."""
        if self.told(channel, ts):
            return False
        self._told[(channel, ts)] = None
        while len(self._told) > REMEMBERED:
            self._told.popitem(last=False)
        log.warning("could not record the message %s in %s (%s %s): %s", ts, channel, fault.where, fault.fault,
                    fault.detail)
        try:
            await self.client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=cannot_take(fault))
        except SLACK_FAILED as exc:
            log.warning("could not say so in thread %s of %s either: %s", thread_ts, channel, exc)
        return True


# One per Web API client, so one per bot: the gate (before the ack) and the intake (after it)
# share what was answered without the wiring in bot.main knowing about it.
_BY_CLIENT: weakref.WeakKeyDictionary[AsyncWebClient, Unrecorded] = weakref.WeakKeyDictionary()


def unrecorded_for(client: AsyncWebClient) -> Unrecorded:
    """The ``Unrecorded`` of the bot that posts with ``client`` (made on first use)."""
    found = _BY_CLIENT.get(client)
    if found is None:
        found = _BY_CLIENT[client] = Unrecorded(client)
    return found

"""Telling a person in their thread that what they said could not be recorded, and why.

A mention or reply that ``bot.db`` refused (locked past its busy timeout, a full disk, a read-only
or vanished file), or whose workspace folder cannot be made, is answered here, at once, instead of
being lost without a word: Slack never redelivers an event once it is acked. The answer goes
straight through the Web API, never through the outbox, which lives in ``bot.db``: the very thing
that failed. Each message is answered once (a mention in a thread arrives as ``app_mention`` and
as ``message``; Slack redelivers an event acked late): the messages answered are remembered in
memory, the one place left to remember them.
"""

from __future__ import annotations

import logging
import weakref
from collections import OrderedDict

from slack_sdk.web.async_client import AsyncWebClient

from bot.outbound.outbox import SLACK_FAILED
from bot.render import texts
from bot.store.faults import StorageFault

__all__ = ["Unrecorded", "cannot_take", "unrecorded_for"]

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

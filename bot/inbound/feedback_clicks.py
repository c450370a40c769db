"""A click on the 👍 / 👎 under a run's final message: recorded in ``bot.db``, answered ephemerally.

``names_feedback`` (middleware) reads what the button names; the app's ``allow_list`` runs next,
so only people allowed in the channel are counted (the rest get its refusal); ``FeedbackClicks``
records the click (who, which thread and message, which sentiment, when) and thanks the person.
A click of the other button replaces the vote; a second click of the same one deselects it
(Slack's buttons toggle): the vote is withdrawn, and no thanks are said.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from bot.outbound.outbox import ephemeral
from bot.render import controls as render
from bot.render import texts
from bot.store.bot_store import BotStore, StoreError

log = logging.getLogger(__name__)

__all__ = ["FeedbackClicks", "names_feedback"]

Next = Callable[[], Awaitable[None]]


async def names_feedback(body: dict[str, Any], action: dict[str, Any], context: AsyncBoltContext,
                         ack: AsyncAck, next: Next) -> BoltResponse | None:
    """The sentiment and thread a feedback click names, in ``context``; a malformed value, or
    one naming another channel's thread, is acked and dropped."""
    parsed = render.parse_value(action.get("value", ""))
    channel = (body.get("channel") or {}).get("id")
    message_ts = (body.get("container") or {}).get("message_ts") or (body.get("message") or {}).get("ts")
    if parsed is None or parsed[1].channel != channel or not message_ts:
        return await ack()
    context["sentiment"], context["thread"], context["message_ts"] = parsed[0], parsed[1], message_ts
    return await next()


class FeedbackClicks:
    """Records feedback clicks in ``store`` and answers them through ``client``."""

    def __init__(self, *, store: BotStore, client: AsyncWebClient) -> None:
        self.store, self.client = store, client

    async def click(self, context: AsyncBoltContext, ack: AsyncAck) -> None:
        """Record the click named in ``context`` (by ``names_feedback``), then ack and say thanks.

        Acked once the row is written; when ``bot.db`` refuses it, the person is told it was not
        recorded (and may click again).
        """
        user, key = context.user_id or "", context["thread"]
        try:
            before = await self.store.record_feedback(key, context["message_ts"], user, context["sentiment"])
        except StoreError as exc:
            log.error("could not record %s's feedback in thread %s: %s", user, "/".join(key), exc)
            await ack()
            await ephemeral(self.client, key.channel, user, texts.FEEDBACK_NOT_RECORDED, thread_ts=key.thread_ts)
            return
        await ack()
        withdrawn = before == context["sentiment"]
        await self.store.audit(user, "feedback", key, "withdrawn" if withdrawn else context["sentiment"])
        if withdrawn:
            return  # deselected: withdrawn, nothing to thank for
        said = render.thanks(context["sentiment"], changed=before is not None)
        await ephemeral(self.client, key.channel, user, said, thread_ts=key.thread_ts)

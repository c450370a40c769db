"""Quick Web API calls with no outbox behind them: a reaction, an ephemeral note, an edit in place,
a message's permalink.

Each is best effort: a failure is logged, never raised, so it cannot fail the run or the listener
that made it. 429s and 500/503 are retried inside slack_sdk (``bot.main.web_client``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.outbound.api_errors import SLACK_FAILED, UNREACHABLE

log = logging.getLogger(__name__)

__all__ = ["EDIT_TRIES", "edit", "ephemeral", "permalink", "react"]

EDIT_TRIES = 3


async def react(client: AsyncWebClient, channel: str, ts: str, name: str = "eyes") -> None:
    """Add a reaction; one already there is fine (a redelivered event, a second reply)."""
    try:
        await client.reactions_add(channel=channel, timestamp=ts, name=name)
    except SLACK_FAILED as exc:
        if not (isinstance(exc, SlackApiError) and exc.response.get("error") == "already_reacted"):
            log.warning("reactions.add %s on %s/%s failed: %s", name, channel, ts, exc)


async def ephemeral(client: AsyncWebClient, channel: str, user: str, text: str, thread_ts: str | None = None,
                    blocks: list[dict[str, Any]] | None = None) -> None:
    """A message only ``user`` sees (refusals, late clicks); failures are logged, not raised."""
    try:
        await client.chat_postEphemeral(channel=channel, user=user, text=text, thread_ts=thread_ts, blocks=blocks)
    except SLACK_FAILED as exc:
        log.warning("chat.postEphemeral to %s in %s failed: %s", user, channel, exc)


async def edit(client: AsyncWebClient, channel: str, ts: str, text: str,
               blocks: list[dict[str, Any]] | None = None) -> bool:
    """Edit a message in place; False (logged) when Slack refused it or stayed unreachable.

    An edit is best effort: it must not fail the run that made it. Being idempotent, it is tried
    again (``EDIT_TRIES`` times in all) when the network dropped; 429 and 5xx are the client's.
    """
    for attempt in range(1, EDIT_TRIES + 1):
        try:
            await client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks or [])
            return True
        except UNREACHABLE as exc:
            if attempt == EDIT_TRIES:
                log.warning("chat.update of %s/%s failed %d times: %s", channel, ts, attempt, exc)
                return False
            await asyncio.sleep(0.5 * attempt)
        except SlackApiError as exc:
            log.warning("chat.update of %s/%s failed: %s", channel, ts, exc)
            return False
    return False


async def permalink(client: AsyncWebClient, channel: str, ts: str) -> str:
    """The message's permalink (``chat.getPermalink``), or "" when Slack does not give one (logged):
    whoever shows the link says what it points at without it."""
    try:
        got = await client.chat_getPermalink(channel=channel, message_ts=ts)
        return str(got.get("permalink") or "")
    except SLACK_FAILED as exc:
        log.info("no permalink for %s in %s: %s", ts, channel, exc)
        return ""

"""Replies said in the bot's threads while it was stopped, read back at start.

Slack redelivers an event only for a short while, so a reply posted during a longer stop would be
lost. At start the bot reads each recent thread from its ``last_seen_ts`` on
(``conversations.replies``, scopes channels:history / groups:history) and hands every person's
message to ``Intake.message`` the way bolt hands a live reply: through the gate's checks
(``Gate.admit_reply``: people only, claimed by channel+ts, allowed people only), so a late
redelivery of the same message is not acted on twice. A Slack that cannot be reached yet (a
machine that just booted) is waited for.
"""

from __future__ import annotations

import asyncio
import logging
import time
from decimal import Decimal, InvalidOperation
from typing import Any, Protocol

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey
from bot.inbound.gate import Gate
from bot.outbound.outbox import UNREACHABLE, backoff_s
from bot.store.bot_store import BotStore, Thread

log = logging.getLogger(__name__)

__all__ = ["RECENT_S", "catch_up", "missed", "recent_threads"]

RECENT_S = 7 * 24 * 3600.0  # threads untouched for a week are not read back: one call each, rate-limited
FIRST_WAIT_S = 2.0  # Slack unreachable at start: try again, backing off to once a minute (outbox.backoff_s)


class MessageIntake(Protocol):
    """The one ``Intake`` method used here: a person's reply in a thread the bot runs."""

    async def message(self, key: ThreadKey, event: dict[str, Any]) -> None: ...


async def recent_threads(store: BotStore, *, within_s: float = RECENT_S, now: float | None = None) -> list[Thread]:
    """The threads to read back: changed in the last ``within_s`` seconds.

    Take this snapshot BEFORE connecting: a live reply handled first would move ``last_seen_ts``
    past the messages missed before it.
    """
    return await store.threads_since((time.time() if now is None else now) - within_s)


def _num(ts: Any) -> Decimal | None:
    try:
        return Decimal(str(ts))
    except (InvalidOperation, TypeError):
        return None


def missed(thread: Thread, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """People's replies in ``messages`` newer than the thread's ``last_seen_ts`` (its first message
    when unset), oldest first, as message events with ``channel`` set; never the parent, a bot's
    post or a subtype."""
    since = _num(thread.last_seen_ts) or _num(thread.key.thread_ts) or Decimal(0)
    out = []
    for m in messages:
        ts = _num(m.get("ts"))
        if ts is None or ts <= since or m.get("ts") == thread.key.thread_ts:
            continue
        event = {"type": "message", **m, "channel": thread.key.channel,
                 "thread_ts": m.get("thread_ts") or thread.key.thread_ts}
        if Gate.is_person_reply(event):  # edits, joins, the bot's own posts: never a person's words
            out.append(event)
    return sorted(out, key=lambda e: _num(e["ts"]) or Decimal(0))


async def _replies(client: AsyncWebClient, thread: Thread) -> list[dict[str, Any]]:
    oldest = thread.last_seen_ts or thread.key.thread_ts
    messages: list[dict[str, Any]] = []
    cursor = None
    while True:
        resp = await client.conversations_replies(channel=thread.key.channel, ts=thread.key.thread_ts,
                                                  oldest=oldest, limit=200, cursor=cursor)
        messages.extend(resp.get("messages") or [])
        cursor = (resp.get("response_metadata") or {}).get("next_cursor")
        if not resp.get("has_more") or not cursor:
            return messages


async def _read_back(client: AsyncWebClient, thread: Thread) -> list[dict[str, Any]] | None:
    """The thread's replies since it was last seen; None when Slack will not show it (logged).

    A Slack that cannot be reached yet (a machine just booted) is waited for, backing off.
    """
    attempt = 0
    while True:
        try:
            return await _replies(client, thread)
        except UNREACHABLE as exc:
            wait = backoff_s(FIRST_WAIT_S, attempt)
            attempt += 1
            log.warning("cannot reach Slack to read back thread %s (%r); trying again in %g s",
                        thread.key.thread_ts, exc, wait)
            await asyncio.sleep(wait)
        except SlackApiError as exc:
            log.warning("cannot read back thread %s in %s (%s); replies said there while the bot was "
                        "stopped are not seen. Check the bot is in the channel and has the "
                        "channels:history / groups:history scopes.", thread.key.thread_ts,
                        thread.key.channel, exc.response.get("error"))
            return None


async def catch_up(threads: list[Thread], *, client: AsyncWebClient, gate: Gate, intake: MessageIntake) -> int:
    """Feed each thread's missed replies through ``gate`` to ``intake`` in order; return how many were fed.

    A thread Slack will not show (deleted, the bot removed from the channel, a missing scope) is
    logged and skipped: the others still catch up. A reply claimed already (a live redelivery
    came first) or from someone not allowed is stopped by the gate, as a live one would be.
    """
    fed = 0
    for thread in threads:
        messages = await _read_back(client, thread)
        if messages is None:
            continue
        for event in missed(thread, messages):
            key = await gate.admit_reply({"team_id": thread.key.team}, event)
            if key is not None:
                await intake.message(key, event)
            fed += 1
    if fed:
        log.info("caught up on %d message(s) said while the bot was stopped", fed)
    return fed

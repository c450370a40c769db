"""Posting to Slack: notices go through the store's outbox (each posted once, in order, retried);
quick calls (reactions, ephemerals, edits) go straight to the Web API.

Rate limits (429) and 500/503 are retried inside slack_sdk by the client's retry handlers
(``bot.main.web_client``). A post Slack refused is retried a few times later, then given up
(logged); a post that could not reach Slack is retried until it can, however long the network is
down (backing off to once a minute). A thread's notices keep their order: one that failed holds
back the ones after it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.store.bot_store import BotStore, StoreError, ThreadKey

log = logging.getLogger(__name__)

RETRY_AFTER_S = 5.0
MAX_ATTEMPTS = 5  # for posts Slack refused; unreachable ones never run out
MAX_RETRY_AFTER_S = 60.0
NOTICE_EVENT = "flower_notice"  # message metadata type carrying the outbox key of each notice posted
# A Web API call that could not reach Slack (a dropped network, a timeout) raises one of these; it
# may or may not have taken effect. SLACK_FAILED adds Slack refusing the call: every way one fails.
UNREACHABLE = (aiohttp.ClientError, OSError, asyncio.TimeoutError)
SLACK_FAILED = (SlackApiError, *UNREACHABLE)
EDIT_TRIES = 3


def backoff_s(first: float, attempt: int) -> float:
    """The wait before try ``attempt + 1`` (0-based ``attempt``): doubling from ``first``, at most a minute."""
    return min(MAX_RETRY_AFTER_S, first * 2 ** min(attempt, 6))


class Outbox:
    """Notices for threads: ``send`` queues in ``bot.db`` and wakes the sender task."""

    def __init__(self, store: BotStore, client: AsyncWebClient, *, retry_after_s: float = RETRY_AFTER_S) -> None:
        self.store, self.client, self.retry_after_s = store, client, retry_after_s
        self._kick = asyncio.Event()
        self._posted = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None
        self._unsure: set[int] = set()  # items whose last post got no answer: Slack may have taken it

    def start(self) -> None:
        """Start the sender task (posts what an earlier process left queued too)."""
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="flower-outbox")
            self._kick.set()

    async def close(self) -> None:
        """Stop the sender; queued notices stay in ``bot.db`` for the next start."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def send(self, thread: ThreadKey, kind: str, dedupe_key: str, text: str,
                   blocks: list[dict[str, Any]] | None = None) -> bool:
        """Queue ``text`` (and ``blocks``) for the thread; False when ``dedupe_key`` was sent before."""
        payload: dict[str, Any] = {"text": text}
        if blocks:
            payload["blocks"] = blocks
        queued = await self.store.enqueue(thread, kind, dedupe_key, payload)
        if queued:
            self._kick.set()
        return queued

    async def post(self, thread: ThreadKey, kind: str, dedupe_key: str, text: str,
                   blocks: list[dict[str, Any]] | None = None) -> str | None:
        """``send``, then wait until it is posted (after everything queued before it) and return
        its ts; None when the post was given up. A key sent before returns that message's ts."""
        await self.send(thread, kind, dedupe_key, text, blocks)
        while True:
            async with self._posted:
                item = await self.store.outbox_item(dedupe_key)
                if item is None or item.state != "pending":
                    return item.sent_ts if item is not None else None
                try:  # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancel (close hangs)
                    async with asyncio.timeout(self.retry_after_s):
                        await self._posted.wait()
                except TimeoutError:
                    pass  # look at the item again

    async def _loop(self) -> None:
        await self._reconcile()
        while True:
            try:  # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancel (close hangs)
                async with asyncio.timeout(self.retry_after_s):
                    await self._kick.wait()
            except TimeoutError:
                pass  # look again for items whose retry time has come
            self._kick.clear()
            try:
                held: set[ThreadKey] = set()  # a thread whose post failed: its later notices wait (order)
                for item in await self.store.pending_outbox():
                    if item.thread in held:
                        continue
                    if not await self._post(item):
                        held.add(item.thread)
            except StoreError:  # a busy or broken db: the notices stay queued; look again soon
                log.exception("reading the outbox failed")

    async def _reconcile(self) -> None:
        """Mark sent the queued notices that are already in their thread (by their metadata key).

        A process killed after Slack took a post but before ``mark_sent`` left it pending; posting
        it again would show it twice. One ``conversations.replies`` per thread with pending items,
        at start only. If Slack cannot be asked, the items are posted anyway (twice beats never).
        """
        try:
            pending = await self.store.pending_outbox(limit=10_000)
        except StoreError:
            log.exception("reading the outbox failed")
            return
        threads: dict[ThreadKey, list[Any]] = {}
        for item in pending:
            threads.setdefault(item.thread, []).append(item)
        for thread, items in threads.items():
            try:
                posted = await self._posted_keys(thread)
            except SLACK_FAILED as exc:
                log.warning("could not read thread %s to find notices already posted: %s", thread, exc)
                continue
            for item in items:
                if item.dedupe_key in posted:
                    log.info("notice %r was posted before the restart (ts %s)", item.dedupe_key, posted[item.dedupe_key])
                    await self.store.mark_sent(item.id, posted[item.dedupe_key])

    async def _posted_keys(self, thread: ThreadKey) -> dict[str, str]:
        """Outbox key -> ts of every notice of ours found in the thread."""
        found: dict[str, str] = {}
        pages = await self.client.conversations_replies(channel=thread.channel, ts=thread.thread_ts, limit=200,
                                                        include_all_metadata=True)
        async for page in pages:
            for message in page.get("messages") or []:
                meta = message.get("metadata") or {}
                key = (meta.get("event_payload") or {}).get("key")
                if meta.get("event_type") == NOTICE_EVENT and isinstance(key, str):
                    found[key] = message.get("ts")
        return found

    async def _post(self, item: Any) -> bool:
        """Post one item; False when it failed (it is retried later, or given up after the last try).

        After a post that got no answer (the network dropped) the thread is read first: if Slack
        took that post, it is only marked sent, not posted a second time.
        """
        if item.id in self._unsure:
            try:
                ts = (await self._posted_keys(item.thread)).get(item.dedupe_key)
            except SLACK_FAILED as exc:
                log.warning("could not read thread %s to check notice %r: %s", item.thread, item.dedupe_key, exc)
                return False  # still unreachable: try again later, in order
            self._unsure.discard(item.id)
            if ts is not None:
                await self.store.mark_sent(item.id, ts)
                return True
        ok = False
        try:
            resp = await self.client.chat_postMessage(
                channel=item.thread.channel, thread_ts=item.thread.thread_ts,
                metadata={"event_type": NOTICE_EVENT, "event_payload": {"key": item.dedupe_key}}, **item.payload)
        except SLACK_FAILED as exc:
            if isinstance(exc, UNREACHABLE):  # the network comes back: wait for it, never give up
                self._unsure.add(item.id)
                again: float | None = time.time() + backoff_s(self.retry_after_s, item.attempts)
            else:
                again = time.time() + self.retry_after_s if item.attempts + 1 < MAX_ATTEMPTS else None
            log.warning("posting %s %r failed (attempt %d): %s", item.kind, item.dedupe_key, item.attempts + 1, exc)
            await self.store.mark_failed(item.id, str(exc), again)
        else:
            await self.store.mark_sent(item.id, resp.get("ts"))
            ok = True
        async with self._posted:
            self._posted.notify_all()
        return ok


async def react(client: AsyncWebClient, channel: str, ts: str, name: str = "eyes") -> None:
    """Add a reaction; one already there is fine (a redelivered event, a second reply)."""
    try:
        await client.reactions_add(channel=channel, timestamp=ts, name=name)
    except SLACK_FAILED as exc:
        if not (isinstance(exc, SlackApiError) and exc.response.get("error") == "already_reacted"):
            log.warning("reactions.add %s on %s/%s failed: %s", name, channel, ts, exc)


async def ephemeral(client: AsyncWebClient, channel: str, user: str, text: str, thread_ts: str | None = None) -> None:
    """A message only ``user`` sees (refusals, late clicks); failures are logged, not raised."""
    try:
        await client.chat_postEphemeral(channel=channel, user=user, text=text, thread_ts=thread_ts)
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

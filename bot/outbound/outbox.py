"""Posting to Slack: notices go through the store's outbox (each posted once, in order, retried);
quick calls (reactions, ephemerals, edits, permalinks: the end of this module) go straight to
the Web API.

429s and 500/503 are retried inside slack_sdk (``bot.main.web_client``); what else Slack answers
is sorted by ``bot.outbound.api_errors.classify``. A refused token stops posting for good (one ERROR
naming SLACK_BOT_TOKEN; the notices stay queued for a restart with a working token). A channel
the bot may not post in drops that thread's notices for a while, with one log line. A message too
long goes out in parts, refused Block Kit as its text alone: never the same post again. A post
that could not reach Slack is retried until it can (backing off to once a minute); anything else
Slack refused is retried a few times, then given up. One failed notice holds back the later ones
of its thread: their order is kept. With several replicas (``bot.store.replicas``) each item is
claimed before it is posted, so one replica posts it; one that takes over a dead replica's claim
looks in the thread first.

Quick calls (``react``, ``ephemeral``, ``edit``, ``permalink``): what needs no outbox behind it, one
call, its failure logged in one line.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.split_text import split_text, utf16_len
from bot.core.thread import ThreadKey
from bot.errors import SlackAuthError
from bot.outbound.api_errors import SLACK_FAILED, UNREACHABLE, classify, error_code
from bot.store.bot_store import BotStore, StoreError
from bot.store.replicas import Replicas, Solo

log = logging.getLogger(__name__)

__all__ = ["EDIT_TRIES", "NOTICE_EVENT", "Outbox", "SLACK_FAILED", "UNREACHABLE", "backoff_s", "edit", "ephemeral", "permalink", "react"]

RETRY_AFTER_S = 5.0
MAX_ATTEMPTS = 5  # for posts Slack refused; unreachable ones never run out
MAX_RETRY_AFTER_S = 60.0
OPTIONAL_BLOCKS = frozenset({"context_actions"})  # the feedback buttons: a message stands without them
NOTICE_EVENT = "flower_notice"  # message metadata type carrying the outbox key of each notice posted
PART_LIMIT = 4_000  # a too-long notice is sent in parts of this size (Slack: keep messages under ~4,000)
DROP_S = 600.0  # after a "cannot post in this channel", that thread's notices are dropped this long


def backoff_s(first: float, attempt: int) -> float:
    """The wait before try ``attempt + 1`` (0-based ``attempt``): doubling from ``first``, at most a minute."""
    return min(MAX_RETRY_AFTER_S, first * 2 ** min(attempt, 6))


class Outbox:
    """Notices for threads: ``send`` queues in ``bot.db`` and wakes the sender task."""

    def __init__(self, store: BotStore, client: AsyncWebClient, *, retry_after_s: float = RETRY_AFTER_S,
                 replicas: Solo | Replicas | None = None) -> None:
        self.store, self.client, self.retry_after_s = store, client, retry_after_s
        self.replicas = replicas or Solo()  # with several replicas, each item is claimed before it is posted
        self.stopped: SlackAuthError | None = None  # set when Slack refused the token: nothing is posted since
        self._kick = asyncio.Event()
        self._posted = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None
        self._unsure: set[int] = set()  # items whose last post got no answer: Slack may have taken it
        self._unmarked: dict[int, str] = {}  # items Slack took whose ``mark_sent`` bot.db refused: their ts
        self._dropping: dict[ThreadKey, float] = {}  # thread -> until when (monotonic) its notices are dropped

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
        its ts; None when the post was given up or posting has stopped (a refused token). A key
        sent before returns that message's ts."""
        await self.send(thread, kind, dedupe_key, text, blocks)
        while True:
            async with self._posted:
                item = await self.store.outbox_item(dedupe_key)
                if item is None or item.state != "pending":
                    return item.sent_ts if item is not None else None
                if self.stopped is not None:
                    return None
                try:  # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancel (close hangs)
                    async with asyncio.timeout(self.retry_after_s):
                        await self._posted.wait()
                except TimeoutError:
                    pass  # look at the item again

    async def _loop(self) -> None:
        await self._reconcile()
        while self.stopped is None:
            try:  # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancel (close hangs)
                async with asyncio.timeout(self.retry_after_s):
                    await self._kick.wait()
            except TimeoutError:
                pass  # look again for items whose retry time has come
            self._kick.clear()
            try:
                held: set[ThreadKey] = set()  # a thread whose post failed: its later notices wait (order)
                for item in await self.store.pending_outbox():
                    if self.stopped is not None:
                        break
                    if item.thread in held:
                        continue
                    if not await self._post(item):
                        held.add(item.thread)
            except StoreError:  # a busy or broken db: the notices stay queued; look again soon
                log.exception("reading the outbox failed")
        await self._notify()  # posting stopped: callers of post() stop waiting

    def _stop(self, exc: BaseException) -> bool:
        """Stop posting for good when ``exc`` is Slack refusing the token (logged once); False otherwise."""
        if classify(exc) != "auth":
            return False
        if self.stopped is None:
            self.stopped = SlackAuthError("SLACK_BOT_TOKEN", error_code(exc) or "invalid_auth")
            log.error("%s Posting has stopped: every notice stays queued in bot.db and is posted after a "
                      "restart with a working token.", self.stopped)
        return True

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
                if self._stop(exc):
                    return
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
        """Post one item; False when it failed and is retried later (its thread waits for it).

        After a post that got no answer (the network dropped) the thread is read first: if Slack
        took that post, it is only marked sent, not posted a second time.
        """
        if self._dropping.get(item.thread, 0.0) > time.monotonic():
            log.debug("dropped %s %r: its channel refuses the bot's posts", item.kind, item.dedupe_key)
            await self.store.mark_failed(item.id, "dropped: the bot cannot post in this channel", None)
            await self._notify()
            return True
        if item.id in self._unmarked:  # posted; only bot.db did not take it (locked past the busy timeout)
            await self.store.mark_sent(item.id, self._unmarked[item.id])
            del self._unmarked[item.id]
            await self._notify()
            return True
        claim = await self.replicas.claim_notice(item.id)
        if claim is None:
            return False  # another replica is posting it: the thread's later notices wait for it
        if claim == "stale":  # its claimer stopped (killed mid-post?): look in the thread first
            self._unsure.add(item.id)
        if item.id in self._unsure:
            try:
                ts = (await self._posted_keys(item.thread)).get(item.dedupe_key)
            except SLACK_FAILED as exc:
                if not self._stop(exc):
                    log.warning("could not read thread %s to check notice %r: %s", item.thread, item.dedupe_key, exc)
                return False  # still unreachable: try again later, in order
            self._unsure.discard(item.id)
            if ts is not None:
                await self.store.mark_sent(item.id, ts)
                return True
        ok = True
        try:
            ts = await self._deliver(item)
        except SLACK_FAILED as exc:
            ok = await self._failed(item, exc)
        else:
            self._unmarked[item.id] = ts  # until bot.db takes it: a refused mark must not post it twice
            await self.store.mark_sent(item.id, ts)
            del self._unmarked[item.id]
        await self._notify()
        return ok

    async def _notify(self) -> None:
        """Wake the callers of ``post`` waiting for an item to be posted or given up."""
        async with self._posted:
            self._posted.notify_all()

    async def _deliver(self, item: Any) -> str | None:
        """Post the item as it is; with Block Kit Slack refused, without the blocks it may do
        without (``OPTIONAL_BLOCKS``: the summary keeps its checks), then as its text in parts;
        too long, as its text in parts."""
        blocks = item.payload.get("blocks") or []
        kept = [b for b in blocks if b.get("type") not in OPTIONAL_BLOCKS]
        tries = [item.payload] + ([{**item.payload, "blocks": kept}] if kept and len(kept) < len(blocks) else [])
        for payload in tries:
            try:
                return await self._chat(item.thread, item.dedupe_key, payload)
            except SlackApiError as exc:
                refused = exc
                if classify(exc) != "bad_blocks":
                    break
                log.warning("Slack refused the blocks of %s %r (%s)", item.kind, item.dedupe_key,
                            exc.response.get("errors") or error_code(exc))
        why = classify(refused)
        if why != "too_long" and not (why == "bad_blocks" and blocks):
            raise refused
        return await self._in_parts(item, str(item.payload.get("text") or ""), refused)

    async def _in_parts(self, item: Any, text: str, refused: SlackApiError) -> str | None:
        """Post ``text`` as plain messages of at most ``PART_LIMIT``, in order; the first one's ts.

        Each part carries its own key (``<key>#<n>``): a part posted by an earlier try (before a
        failure or a kill) is found in the thread and not posted again.
        """
        parts = split_text(text, PART_LIMIT, measure=utf16_len)
        if not parts or (len(parts) == 1 and classify(refused) == "too_long"):
            raise refused  # nothing smaller to send: it is given up, not retried as is
        posted = await self._posted_keys(item.thread)  # rare enough to read the thread every time
        first: str | None = None
        for n, part in enumerate(parts, 1):
            key = f"{item.dedupe_key}#{n}"
            ts = posted.get(key) or await self._chat(item.thread, key, {"text": part})
            first = first or ts
        log.info("posted %s %r in %d parts", item.kind, item.dedupe_key, len(parts))
        return first

    async def _chat(self, thread: ThreadKey, key: str, payload: dict[str, Any]) -> str | None:
        resp = await self.client.chat_postMessage(
            channel=thread.channel, thread_ts=thread.thread_ts,
            metadata={"event_type": NOTICE_EVENT, "event_payload": {"key": key}}, **payload)
        return resp.get("ts")

    async def _failed(self, item: Any, exc: BaseException) -> bool:
        """Record a failed post by what Slack said; True when the thread's later notices may go on."""
        why = classify(exc)
        if self._stop(exc):
            return False  # stays pending: posted after a restart with a working token
        if why == "unpostable":
            self._dropping[item.thread] = time.monotonic() + DROP_S
            log.warning("cannot post in channel %s (%s): dropping the notices of thread %s. Invite the bot "
                        "to the channel (/invite), or unarchive it, for later ones to show.",
                        item.thread.channel, error_code(exc), item.thread.thread_ts)
            await self.store.mark_failed(item.id, str(exc), None)
            return True
        if why in ("too_long", "bad_blocks"):  # posting it again as it is would be refused again
            log.warning("gave up %s %r: Slack refused it (%s) and it cannot be cut smaller", item.kind,
                        item.dedupe_key, error_code(exc))
            await self.store.mark_failed(item.id, str(exc), None)
            return True
        if why == "unreachable":  # the network comes back: wait for it, never give up
            self._unsure.add(item.id)
            again: float | None = time.time() + backoff_s(self.retry_after_s, item.attempts)
        else:
            again = time.time() + self.retry_after_s if item.attempts + 1 < MAX_ATTEMPTS else None
        log.warning("posting %s %r failed (attempt %d): %s", item.kind, item.dedupe_key, item.attempts + 1, exc)
        await self.store.mark_failed(item.id, str(exc), again)
        return False


# -- Quick calls (``react``, ``ephemeral``, ``edit``, ``permalink``) -------------------------------


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

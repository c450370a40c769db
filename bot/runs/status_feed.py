"""A run's voice in its thread: one status message edited in place, and each event's notice once.

Notices go through the outbox (each posted once, in order); the status message is edited at most
every ``every_s`` seconds. A run resumed after a restart keeps editing the message it had, so the
thread never shows two status lines for one run. While a question waits, the line links to it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey, folder_name, notice_key
from bot.outbound.outbox import Outbox, edit, permalink
from bot.render import controls
from bot.render.messages import StatusState
from bot.runs.events_view import RunStatus
from bot.store.bot_store import BotStore
from engine import Event
from engine.events import AskEvent

log = logging.getLogger(__name__)
_REDRAW = ("step", "session", "turn", "result", "storm", "verdict", "ask", "interrupt")  # kinds the status line shows


class StatusFeed:
    """The status message and event notices of one run in thread ``key``.

    ``open()`` posts the status message (or takes over ``reuse``), ``start()`` folds the events
    ``put()`` into notices and edits until ``close()``, ``finish()`` shows the final state. ``status`` carries
    what earlier runs of the thread counted (``RunStatus``); a fresh one by default.
    """

    def __init__(self, key: ThreadKey, *, store: BotStore, client: AsyncWebClient, outbox: Outbox,
                 every_s: float, status: RunStatus | None = None) -> None:
        self.key, self.store, self.client, self.outbox, self.every_s = key, store, client, outbox, every_s
        self.status = status or RunStatus()
        self.ts: str | None = None
        self._tag = ""
        self._events: asyncio.Queue[Event | str | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def _shown(self) -> dict:
        return self.status.payload(controls.thread_value(self.key))

    async def open(self, reuse: str | None = None) -> str | None:
        """Edit ``reuse`` (the run's message before a restart) or post a new status message; its ts."""
        shown = self._shown()
        if reuse and await edit(self.client, self.key.channel, reuse, shown["text"], shown["blocks"]):
            self.ts = reuse
            await self.store.upsert_thread(self.key, status_ts=self.ts)  # the acknowledgement, maybe
        else:
            self.ts = await self.outbox.post(self.key, "status", notice_key("status", self.key, time.time()),
                                             shown["text"], shown["blocks"])
            await self.store.upsert_thread(self.key, status_ts=self.ts)
        self._tag = f"{self.ts}:{time.time()}"  # notices are keyed per process run: a resumed run counts from 1
        return self.ts

    def start(self) -> None:
        """Follow the events put from now on (after ``open``)."""
        if self._task is None:
            self._task = asyncio.create_task(self._follow(), name=f"flower-status-{folder_name(self.key)}")

    def put(self, event: Event) -> None:
        """Hand over one of the run's events (from the engine's callback: never blocks)."""
        self._events.put_nowait(event)

    async def close(self) -> None:
        """Post the notices of every event put so far; the line's final state is ``finish``'s."""
        self._events.put_nowait(None)
        if self._task is not None:
            await asyncio.shield(self._task)

    async def _follow(self) -> None:
        """Fold events into notices (posted in order) and the status line (edited, throttled) until None."""
        events = self._events
        # -inf, not 0: monotonic time counts from boot, so on a machine up for less than every_s a
        # 0 made the first edit wait a whole period (a fresh machine's make test waited 240 s for it)
        last_edit, dirty, n = -math.inf, False, 0
        while True:
            try:  # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancel
                async with asyncio.timeout(self.every_s or None):
                    event = await events.get()
            except TimeoutError:
                event = ...
            if event is None:
                return
            if isinstance(event, Event):
                note = self.status.apply(event)
                dirty = dirty or event.kind in _REDRAW
                if note:
                    n += 1
                    await self.outbox.send(self.key, event.kind, notice_key(event.kind, self._tag, n),
                                           note["text"], note["blocks"])
                if isinstance(event, AskEvent):
                    await self.store.set_state(self.key, "waiting" if event.phase == "asked" else "running")
                    if event.phase == "asked":  # a resumed run's question is posted already: link it now
                        stored = await self.store.get_question((self.key, event.key))
                        if stored is not None and stored.message_ts and stored.open:
                            self.status.question_link(event.key, await permalink(self.client, self.key.channel, stored.message_ts))
            elif event == "redraw":
                dirty = True
            now = time.monotonic()
            if dirty and self.ts and now - last_edit >= self.every_s:
                shown = self._shown()
                await edit(self.client, self.key.channel, self.ts, shown["text"], shown["blocks"])
                last_edit, dirty = now, False

    async def question_posted(self, key: str, ts: str) -> None:
        """Question ``key`` was posted as message ``ts``: the status line links to it while it waits."""
        self.status.question_link(key, await permalink(self.client, self.key.channel, ts))
        self._events.put_nowait("redraw")  # an edit, in the feed's order

    async def finish(self, state: StatusState | None = None, *, cost: float | None = None,
                     reason: str = "", at: float | None = None) -> None:
        """Show the final state on the status message (no buttons once the run is over): ``state``,
        the thread's total ``cost`` and why it failed (``reason``), as of ``at``."""
        if state is not None:
            self.status.finish(state, cost=self.status.cost if cost is None else cost,
                               at=at or time.time(), reason=reason)
        if self.ts:
            shown = self._shown()
            await edit(self.client, self.key.channel, self.ts, shown["text"], shown["blocks"])

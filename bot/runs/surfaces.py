"""Slack's agent surfaces for one run: the goal's checklist (``bot.runs.plan_feed``), the
thread's agent session (``bot.outbound.agent_surfaces``: processing while a step works, suspended
while a question waits) or, where Slack has no sessions, the "is working on …" status line
(``bot.outbound.agent_surfaces``), fed the run's events in order. How the run ended moves the session on
(``bot.runs.ending``).

They follow the events in a task of their own, beside the status feed, so a slow post of the
checklist never holds the status message up, and a failure here is logged, never the run's.
The status line names the step (or the judge) at work, is cleared while a question waits for a
person and when the run ends, and is set again every ``refresh_s``: Slack drops it when the bot
posts a reply, or after about two minutes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey, folder_name
from bot.outbound.agent_surfaces import AgentSessions, AssistantStatus
from bot.outbound.outbox import Outbox
from bot.render import texts
from bot.render.messages import doing_words
from bot.runs.plan_feed import PlanFeed
from bot.store.bot_store import BotStore
from engine import Event
from engine.events import AskEvent, SessionStarted, StepStarted, WorkflowDone

__all__ = ["REFRESH_S", "Surfaces", "doing"]

log = logging.getLogger(__name__)

REFRESH_S = 60.0  # under Slack's ~2 minutes after which a status line goes away by itself
CLOSE_S = 30.0  # how long the run's end waits for the checklist's last edit
def doing(event: Event) -> str:
    """What the session the event is does, in a person's words ("Planning", "Checking the work")."""
    return doing_words(event.name or event.step, judging=event.role == "judge")


class Surfaces:
    """The checklist and status line of one run in thread ``key``: ``start``, ``put`` each event,
    ``close`` at the run's end (it clears the status line)."""

    def __init__(self, key: ThreadKey, *, store: BotStore, client: AsyncWebClient, outbox: Outbox,
                 status: AssistantStatus, sessions: AgentSessions, goal_path: Path, title: str = "",
                 refresh_s: float = REFRESH_S) -> None:
        self.key, self.refresh_s, self.title = key, refresh_s, title
        self.sessions = sessions
        self.plan = PlanFeed(key, store=store, client=client, outbox=outbox, goal_path=goal_path)
        self.status = status
        self._events: asyncio.Queue[Event | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._step = ""  # what the run works on now
        self._waiting = False  # a question waits for a person: nobody is working
        self._shown: tuple[str, float] | None = None  # the status last set, and when

    def start(self) -> None:
        """Start following the events put from now on."""
        if self._task is None:
            self._task = asyncio.create_task(self._follow(), name=f"flower-surfaces-{folder_name(self.key)}")

    def put(self, event: Event) -> None:
        """Hand over one of the run's events (from the engine's callback: never blocks)."""
        self._events.put_nowait(event)

    async def close(self) -> None:
        """Let the events put so far be shown (waiting at most ``CLOSE_S``), then clear the status."""
        self._events.put_nowait(None)
        if self._task is not None:
            done, _ = await asyncio.wait({self._task}, timeout=CLOSE_S)
            if not done:
                log.warning("the checklist of thread %s was still being posted at the run's end; left as it is",
                            folder_name(self.key))
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task
        if self._shown is not None and self._shown[0]:
            await self.status.clear(self.key)

    async def _follow(self) -> None:
        while True:
            try:  # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancel
                async with asyncio.timeout(self.refresh_s):
                    event = await self._events.get()
            except TimeoutError:
                event = ...
            if event is None:
                return
            if isinstance(event, Event):
                try:
                    await self.plan.apply(event)
                except Exception:  # the checklist is a view: the run must go on without it
                    log.exception("showing the checklist of thread %s failed on a %s event",
                                  folder_name(self.key), event.kind)
                self._fold(event)
            await self._show_status()

    def _fold(self, event: Event) -> None:
        match event:
            case StepStarted() | SessionStarted():
                self._step = doing(event)
            case AskEvent():
                self._waiting = event.phase == "asked"
            case WorkflowDone():
                self._step = ""

    async def _show_status(self) -> None:
        if self.sessions.available(self.key):
            if self._step or self._waiting:
                await self.sessions.set(self.key, "suspended" if self._waiting else "processing", title=self.title)
            if self.sessions.available(self.key):
                return  # the session shows it: no status line beside it
        text = texts.STATUS_LINE.format(doing=self._step) if self._step and not self._waiting else ""
        now = time.monotonic()
        if self._shown is None and not text:
            return  # nothing shown yet, nothing to clear
        if self._shown is not None and self._shown[0] == text and (not text or now - self._shown[1] < self.refresh_s):
            return
        if await self.status.show(self.key, text):
            self._shown = (text, now)

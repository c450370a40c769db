"""A run's checklist in its thread: the goal's checks posted once the goal is set, and edited in
place after every verdict with each check's state.

The goal is read from its file (``StarterRun.paths.goal``), so no step name is needed: a step
that starts with a complete goal on disk means the goal is set (the goal step writes it before
the next step starts). A thread has one checklist message per request (its first, or one after
``/new``), found again by a digest of its goal's checks in ``bot.db``: a restart edits the
message it had, and a follow-up that re-derives the goal, or a person amending it, edits the
thread's checklist to show the new checks (a post only where a person should be notified: a
follow-up posts its acknowledgement and its answer, nothing more). ``/new`` forgets the
thread's checklists, so its request posts one of its own. This only shows the states.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey, folder_name, notice_key
from bot.outbound.outbox import Outbox, edit
from bot.render import plan as render_plan
from bot.store.bot_store import BotStore
from engine import Event, Goal, Verdict
from engine.authoring import CheckState, check_states
from engine.events import StepStarted, VerdictGiven
from engine.host import file_work

__all__ = ["PlanFeed", "goal_digest"]

log = logging.getLogger(__name__)


def goal_digest(goal: Goal) -> str:
    """What tells one checklist from another: a digest of the goal's checks, in order."""
    return hashlib.sha256("\n".join(goal.checks).encode("utf-8")).hexdigest()[:16]


class PlanFeed:
    """The checklist messages of thread ``key``; ``apply`` each event of its runs, in order."""

    def __init__(self, key: ThreadKey, *, store: BotStore, client: AsyncWebClient, outbox: Outbox,
                 goal_path: Path) -> None:
        self.key, self.store, self.client, self.outbox, self.goal_path = key, store, client, outbox, goal_path
        self._shown: list[CheckState] | None = None  # the states the checklist shows now, as this run set them

    async def apply(self, event: Event) -> None:
        """Post the checklist when a step starts with the goal set; edit it after a verdict."""
        if isinstance(event, StepStarted):
            goal = await self._goal()
            if goal is not None:
                await self._message(goal, check_states(goal))
        elif isinstance(event, VerdictGiven):
            goal = await self._goal()  # the goal just judged: an amended one is written after its verdict
            if goal is None:
                return
            verdict = Verdict(state="" if event.state == "unclear" else event.state, reason=event.reason,
                              failed=list(event.failed))
            states = check_states(goal, verdict)
            ts, posted = await self._message(goal, states)
            if ts is not None and not posted:
                await self._edit(ts, states)

    async def stopped(self) -> None:
        """The run was stopped: the checks still waiting for the judge say so."""
        goal = await self._goal()
        if goal is None:
            return
        ts = await self.store.plan_ts(self.key, goal_digest(goal))
        states = self._shown or check_states(goal)
        if ts is not None and any(s.state == "pending" for s in states):
            await self._edit(ts, states, stopped=True)

    async def _goal(self) -> Goal | None:
        goal = await file_work(Goal.load, self.goal_path, what="reading the run's goal")  # the run's file
        return goal if goal is not None and goal.complete() else None

    async def _message(self, goal: Goal, states: list[CheckState]) -> tuple[str | None, bool]:
        """The ts of the goal's checklist message, showing ``states`` there when the goal has
        none yet (the thread's checklist edited, else a post); and whether it was shown just now."""
        digest = goal_digest(goal)
        ts = await self.store.plan_ts(self.key, digest)
        if ts is not None:
            return ts, False
        ts = await self.store.latest_plan_ts(self.key)
        if ts is not None:  # a new goal of the same request: edited first, so a kill before the row edits again
            await self._edit(ts, states)
            await self.store.set_plan_ts(self.key, digest, ts)
            return ts, True
        self._shown = states
        shown = render_plan.plan_message(states)
        # the outbox key too finds the message again, if a kill came between the post and the row
        ts = await self.outbox.post(self.key, "plan", notice_key("plan", self.key, digest), shown["text"],
                                    shown["blocks"])
        if ts is not None:
            await self.store.set_plan_ts(self.key, digest, ts)
        return ts, True

    async def _edit(self, ts: str, states: list[CheckState], *, stopped: bool = False) -> None:
        self._shown = states
        shown = render_plan.plan_message(states, stopped=stopped)
        if await edit(self.client, self.key.channel, ts, shown["text"], shown["blocks"]):
            return
        # refused (a Slack without plan blocks, or the post went out as text alone): sections then
        shown = render_plan.fallback(states, stopped=stopped)
        if not await edit(self.client, self.key.channel, ts, shown["text"], shown["blocks"]):
            log.warning("could not show the checklist's states in thread %s", folder_name(self.key))

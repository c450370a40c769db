"""How a thread's run ends: one typed outcome per end, and the one place it is recorded and said.

Every run ends in exactly one ``Outcome``; ``Ending.conclude`` records the state it leaves in
``bot.db`` and tells the thread. A finished run's summary is queued before the thread is marked
over, so a kill in between cannot lose it; a bound thread's branch message (Push, the pull
request, Diff) comes right under it. A shutdown records nothing: the thread stays active and the
next start resumes it. What may wait until the thread knows how its run ended (the pull request
kept in step) comes after, in ``Ending.after``. The totals are the engine's (``StarterRun.totals``:
the thread's spend and its request's), read once at the end so the status line and the final
message show the same figures; the bot adds the request's time.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey, ThreadState, folder_name, notice_key
from bot.errors import RepoError
from bot.ops.metrics import Metrics
from bot.outbound.agent_surfaces import AgentSessions
from bot.outbound.outbox import Outbox, permalink
from bot.render import controls, texts
from bot.render import deadline as render_deadline
from bot.render import messages as render
from bot.render import pull_request as pr_text
from bot.render import repo as render_repo
from bot.render.controls import with_feedback
from bot.render.failures import failure_reason
from bot.render.limit_notices import limit_reached
from bot.repos.bindings import Binding
from bot.repos.git import remotes
from bot.repos.worktrees import Worktree
from bot.repos.worktrees import summary as repo_summary
from bot.runs.plan_feed import goal_digest
from bot.runs.pull_requests import PullRequests
from bot.runs.shared_files import post_outbox
from bot.runs.spend_book import Reached, limit_admins
from bot.runs.status_feed import StatusFeed
from bot.runs.surfaces import Surfaces
from bot.settings.config import Config
from bot.store.bot_store import BotStore
from engine import RunResult, StarterRun
from engine.authoring import Question, check_states
from engine.host import Spend, Totals

log = logging.getLogger(__name__)

__all__ = ["Ending", "Failed", "Finished", "Limited", "Nothing", "Outcome", "Parked", "ShutDown", "Stopped",
           "elapsed", "spent", "state_after", "summary_payload"]


# -- the ends --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Finished:
    """The flow returned: how it ended (``result.ok``: the goal achieved)."""

    result: RunResult

    @property
    def ok(self) -> bool:
        return self.result.ok


@dataclass(frozen=True)
class Failed:
    """The run broke before or while the flow ran; ``reason`` is said in the thread."""

    reason: str
    repo: bool = False  # the thread's repository could not be prepared (nothing ran)


@dataclass(frozen=True)
class Stopped:
    """Stop was pressed: the task was cancelled for good (a later word continues the session)."""


@dataclass(frozen=True)
class Parked:
    """A question with no default went unanswered past its deadline; an answer resumes the run."""

    question: Question


@dataclass(frozen=True)
class Limited:
    """A spend limit stopped the run (``reached``: which, and the spend): paused holding no
    process; once it is raised, a reply continues the same request."""

    reached: Reached


@dataclass(frozen=True)
class Nothing:
    """A resumed thread had nothing to resume (no confirmed requirement, no saved request)."""


@dataclass(frozen=True)
class ShutDown:
    """The bot is closing or was killed: the thread stays active for the next start."""


Outcome = Finished | Failed | Stopped | Parked | Limited | Nothing | ShutDown


def state_after(outcome: Outcome) -> ThreadState | None:
    """The thread's state once ``outcome`` is recorded; None: leave it as it is (a shutdown)."""
    if isinstance(outcome, Finished):
        return "done" if outcome.ok else "failed"
    if isinstance(outcome, (Failed, Nothing)):
        return "failed"
    if isinstance(outcome, Stopped):
        return "stopped"
    if isinstance(outcome, Parked):
        return "parked"
    if isinstance(outcome, Limited):
        return "limited"
    return None


# -- the totals ------------------------------------------------------------------------------------

async def spent(starter: StarterRun | None) -> Totals:
    """The engine's totals of the thread and its request now (zeros when the run never began)."""
    return await asyncio.to_thread(starter.totals) if starter is not None else Totals(Spend(), Spend())


def elapsed(totals: Totals, since: float, at: float) -> float:
    """The request's time as of ``at``: from when it began, or from ``since`` (when the thread's
    first request came) while the thread is on its first request."""
    return max(0.0, at - (totals.request_began or since))


def summary_payload(result: RunResult, totals: Totals, elapsed_s: float, *, reason: str = "", branch: str = "",
                    checklist_link: str = "", heard: Sequence[tuple[str, int | None]] = (),
                    files: Sequence[str] = ()) -> render.Payload:
    """The final message of a finished run: achieved or not, what was done, what became of the
    words ``heard`` during it, the checklist's outcome (linked), what is left, and the totals."""
    checks = check_states(result.goal, result.verdict) if result.goal is not None else []
    judged = result.verdict.reason if result.verdict is not None else ""
    return render.summary_message(result.ok, totals.request.cost_usd, totals.request.rounds or None, reason,
                                  thread_cost=totals.thread.cost_usd, elapsed_s=elapsed_s, report=result.report,
                                  judged=judged, checks=checks, branch=branch, checklist_link=checklist_link,
                                  heard=heard, files=files)


# -- saying it -------------------------------------------------------------------------------------

class Ending:
    """Records and says how each run ended; built once by ``Jobs`` with what every ending uses.
    Each call is handed what is the run's: its thread, folder, engine run, status message,
    agent surfaces and (in a bound channel) its binding and worktree."""

    def __init__(self, *, config: Config, store: BotStore, client: AsyncWebClient, outbox: Outbox,
                 sessions: AgentSessions, metrics: Metrics, pull_requests: PullRequests) -> None:
        self.config, self.store, self.client, self.outbox = config, store, client, outbox
        self.sessions, self.metrics, self.pull_requests = sessions, metrics, pull_requests

    async def conclude(self, key: ThreadKey, outcome: Outcome, *, ws: Path, starter: StarterRun | None,
                       since: float, feed: StatusFeed | None, surfaces: Surfaces | None,
                       bound: tuple[Binding, Worktree] | None) -> None:
        """Record how the run in ``key`` (folder ``ws``) ended and say it in the thread; its totals
        are read from ``starter`` (None: it never began) once, the request's time counted from
        ``since`` for a thread's first request."""
        name = folder_name(key)
        # Slack never moves a session off processing itself: waiting for a person, or for a follow-up
        await self.sessions.set(key, "suspended" if isinstance(outcome, (Parked, Limited)) else "active")
        if isinstance(outcome, ShutDown):
            return
        state = state_after(outcome)
        assert state is not None
        totals = await spent(starter)  # one cost and one elapsed for the status line and the summary
        at = time.time()
        cost = totals.request.cost_usd
        if isinstance(outcome, Finished):
            result = outcome.result
            reason = "" if result.ok or result.failure is None else failure_reason(result.failure)
            if not result.ok:
                log.warning("run in %s ended without its goal: %s", name, reason)
                if result.failure is not None and result.failure.kind == "step":
                    self.metrics.errors.labels(result.failure.cause or "step").inc()
            status_ts = feed.ts if feed is not None else None
            branch = bound[1].branch if bound is not None else ""
            heard = feed.status.heard_in if feed is not None else []
            files = await self._post_files(key, ws)
            summary = with_feedback(summary_payload(result, totals, elapsed(totals, since, at), reason=reason,
                                                    branch=branch, heard=heard, files=files,
                                                    checklist_link=await self._checklist_link(key, result)), key)
            await self.outbox.send(key, "summary", notice_key("summary", key, status_ts), summary["text"],
                                   summary["blocks"])
            if bound is not None:  # right under the summary: Push, the pull request and Diff act on it
                report = pr_text.report_from(result, cost=cost, rounds=totals.request.rounds)
                await self._post_branch(key, bound, report, status_ts)
            await self.store.set_state(key, state)
            if feed is not None:
                await feed.finish(state, cost=cost, at=at, reason=reason)
            return
        if feed is not None:  # the status line shows the end before the thread hears of it
            await feed.finish(state, cost=cost, at=at, reason=outcome.reason if isinstance(outcome, Failed) else "")
        await self.store.set_state(key, state)
        await self._say(key, outcome, surfaces)

    async def _say(self, key: ThreadKey, outcome: Outcome, surfaces: Surfaces | None) -> None:
        """What the thread hears of a run that did not finish."""
        name = folder_name(key)
        if isinstance(outcome, Failed):
            self.metrics.errors.labels("repository" if outcome.repo else "run").inc()
            log.warning("run in %s failed: %s", name, outcome.reason)
            text = (texts.RUN_REPO_FAILED if outcome.repo else texts.RUN_FAILED).format(reason=outcome.reason)
            await self.outbox.send(key, "error", notice_key("repo-error" if outcome.repo else "error", key,
                                                            time.time()), text)
        elif isinstance(outcome, Stopped):
            await self.outbox.send(key, "stopped", notice_key("stopped", key, time.time()), texts.RUN_STOPPED)
            if surfaces is not None:
                try:
                    await surfaces.plan.stopped()
                except Exception:  # the checklist is a view: the stop is said and recorded all the same
                    log.exception("marking the checklist of thread %s stopped failed", name)
        elif isinstance(outcome, Parked):
            await self.outbox.send(key, "parked", notice_key("parked", key, outcome.question.key, time.time()),
                                   render_deadline.parked(outcome.question.timeout_s))
        elif isinstance(outcome, Limited):
            r = outcome.reached
            self.metrics.limit_pauses.labels(r.scope).inc()
            log.info("run in %s paused at the %s limit ($%.2f, $%.4f spent)", name, r.scope, r.limit, r.spent)
            shown = limit_reached(r.scope, r.limit, r.spent, sorted(limit_admins(self.config, key.channel, r.scope)),
                                  controls.thread_value(key))
            await self.outbox.send(key, "limit", notice_key("limit", key, time.time()), shown["text"],
                                   shown["blocks"])

    async def after(self, key: ThreadKey, outcome: Outcome, *, bound: tuple[Binding, Worktree] | None) -> None:
        """The branch's pull request kept in step, or opened by itself (``FLOWER_AUTO_PR``): network
        calls, after the thread's state is set."""
        if isinstance(outcome, Finished) and bound is not None:
            try:
                await self.pull_requests.after_finished(key, bound[1].branch, achieved=outcome.ok)
            except Exception:  # the forge's failures are said in the thread; nothing else may end the thread's task
                log.exception("pull request follow-up in %s failed", folder_name(key))

    async def _checklist_link(self, key: ThreadKey, result: RunResult) -> str:
        """Where the final answer's one line about the checks points: the run's checklist message."""
        ts = await self.store.plan_ts(key, goal_digest(result.goal)) if result.goal is not None else None
        return await permalink(self.client, key.channel, ts) if ts else ""

    async def _post_files(self, key: ThreadKey, ws: Path) -> list[str]:
        """The files the run left in its outbox, uploaded to the thread above the answer; their names.
        What was not posted (a link, too big, too many) is said; a failure never holds the answer up."""
        try:
            names, unposted = await post_outbox(self.client, self.config, key, ws)
        except Exception:  # the answer matters more than its files: logged, and said without them
            log.exception("posting the outbox of %s failed", folder_name(key))
            return []
        if unposted:
            await self.outbox.send(key, "files", notice_key("outbox", key, time.time()), unposted)
        return names

    async def _post_branch(self, key: ThreadKey, bound: tuple[Binding, Worktree], report: pr_text.Report,
                           status_ts: str | None) -> None:
        binding, worktree = bound
        try:
            result = await asyncio.to_thread(repo_summary, worktree)
        except RepoError as exc:  # a branch the bot cannot read (a changed .git): said, and the run ends as usual
            await self.outbox.send(key, "branch", notice_key("branch", key, status_ts, "unread"),
                                   texts.REPO_ERROR.format(error=exc))
            return
        if not report.achieved and not result.commits:
            return  # nothing to push or review yet: the summary says what is left
        has_remote = bool(await asyncio.to_thread(remotes, binding.path))
        pr = await self.pull_requests.finished(key, binding, worktree, report, commits=len(result.commits))
        shown = render_repo.branch_message(key, result, has_remote=has_remote, pr=pr)
        await self.outbox.send(key, "branch", notice_key("branch", key, status_ts, result.branch),
                               shown["text"], shown["blocks"])

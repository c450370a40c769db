"""One run of a thread: the engine's ``StarterRun`` in the thread's workspace, shown in Slack.

Its events become notices (through the outbox, each once) and one status message edited in place
(``bot.runs.status_feed``); its questions go through a ``SlackTransport``. Every run ends in one
typed ``Outcome`` (``bot.runs.outcome``), and ``Runner.conclude`` is the one place that records
it and tells the thread. ``bot.runs.jobs`` decides when runs start and turns a cancel into an
outcome.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.config import Config
from bot.forge.client import Retry
from bot.runs.pull_requests import PullRequests
from bot.render import controls, deadline as render_deadline, messages as render, repo as render_repo, texts
from bot.render import pull_request as pr_text
from bot.render.feedback import with_feedback
from bot.render.failures import failure_reason
from bot.repos.git import RepoError, remotes
from bot.repos.thread_worktree import open_for_thread, thread_run, worktree_git
from bot.repos.worktrees import summary as repo_summary
from bot.runs import final, tally
from bot.runs.events_view import RunStatus
from bot.runs.final import summary_payload
from bot.runs.outcome import Failed, Finished, Outcome, Parked, ShutDown, Stopped, state_after
from bot.runs.start_gate import START_AT_ONCE
from bot.runs.status_feed import StatusFeed
from bot.runs.surfaces import Surfaces
from bot.folders import folder_name, run_dir
from bot.store.replicas import HEARTBEAT_S, LEASE_S
from bot.runs.transport import Answers, SlackTransport
from bot.sandbox import thread_sandbox
from bot.slack.assistant import AssistantStatus
from bot.slack.outbox import Outbox, edit
from bot.store.bot_store import BotStore, Question as StoredQuestion, ThreadKey
from engine import Event, Question, Resilience, StarterRun

ASK_FILE = "bot-ask.txt"  # the thread's request, kept so a restart can redo an unfinished clarify


log = logging.getLogger(__name__)

@dataclass
class BotOptions:
    """Engine knobs for the bot's runs (tests make them small): extra ``Runtime`` and
    ``starter_flow`` keyword arguments, and how often the status message may be edited."""

    runtime: dict[str, Any] = field(default_factory=dict)
    flow: dict[str, Any] = field(default_factory=dict)
    status_every_s: float = 3.0
    start_at_once: int | None = START_AT_ONCE  # CLIs starting at once (``bot.runs.start_gate``); None: no limit
    forge_retry: Retry = field(default_factory=Retry)  # how the forge's API is retried (tests: quickly)
    # Several replicas on one database (``bot.store.replicas``): None means exactly when
    # FLOWER_DATABASE_URL is set; tests also run replicas on one SQLite file, with short leases.
    replicas: bool | None = None
    lease_s: float = LEASE_S
    heartbeat_s: float = HEARTBEAT_S


@dataclass
class Run:
    """A thread's run as ``Jobs`` tracks it."""

    task: asyncio.Task[None]
    starter: StarterRun | None = None  # once it is about to run: words go to it from then on
    feed: StatusFeed | None = None
    workspace: Path | None = None  # the thread's folder
    bound: tuple[Any, Any] | None = None  # a bound channel's (binding, worktree) for this thread
    stopping: bool = False  # Stop was pressed: the task is being cancelled for good
    abandoned: bool = False  # another replica took the thread over: cancelled as in a shutdown
    parked: Question | None = None  # the unanswered question the run was parked on
    status_ts: str | None = None  # a status message to edit in place (a run resumed after a restart)
    queued_at: float = 0.0  # when the thread was queued: the "Queued" notice is said once per wait
    resumed: bool = False  # started by a resume: answers its earlier life took are replayed
    created_at: float = field(default_factory=time.time)  # a resumed run: when it was resumed
    words: str = ""  # said to the stopped run: given to its first step, once its CLI is up, as an interruption

    def park(self, q: Question) -> None:
        """The engine's ``park`` hook: end this run, leaving ``q`` open for an answer to resume it."""
        if self.parked is None and not self.task.done():
            self.parked = q
            self.task.cancel()

    def cancelled(self, closing: bool) -> Outcome:
        """What a cancel of this run's task means: Stop, a park, or the bot shutting down."""
        if self.parked is not None and not closing:
            return Parked(self.parked)
        return Stopped() if self.stopping else ShutDown()


class Runner:
    """Runs a thread's ``StarterRun`` and shows it: ``go`` is one run, ``conclude`` its end."""

    def __init__(self, *, config: Config, store: BotStore, client: AsyncWebClient, outbox: Outbox,
                 answers: Answers, options: BotOptions, closing: Callable[[], bool]) -> None:
        self.config, self.store, self.client, self.outbox, self.answers = config, store, client, outbox, answers
        self.options, self.closing = options, closing
        self.assistant = AssistantStatus(client)  # the "is working on" lines of every run
        self.pull_requests = PullRequests(config=config, store=store, client=client, outbox=outbox,
                                          retry=options.forge_retry)

    async def go(self, run: Run, key: ThreadKey, ws: Path, ask: str, new: bool, banner_key: str | None,
                 started: Callable[[], None] = lambda: None) -> Outcome:
        """The run from start to its flow's end; ``started()`` is called once its first CLI is up.
        A cancel propagates (``Run.cancelled`` says what it meant)."""
        rd, run.workspace = run_dir(ws), ws
        try:  # a bound channel: the thread's own worktree and branch (git work off the event loop)
            saved = rd / ASK_FILE
            run.bound = await asyncio.to_thread(open_for_thread, self.config.home, key, ws, rd,
                                    ask or (saved.read_text(encoding="utf-8") if saved.exists() else ""), new=new)
            runtime = {"resilience": Resilience(wait_out_storms=True), **(self.options.runtime or {})}
            if self.config.sandbox:
                git = await asyncio.to_thread(worktree_git, *run.bound) if run.bound is not None else None
                runtime["sandbox"] = thread_sandbox(self.config.home, secret_files=self.config.settings_files,
                                                    domains=self.config.sandbox_domains, git=git)
        except RepoError as exc:
            return Failed(str(exc), repo=True)
        if run.bound is not None and not new and ask.strip():  # woken by words: its pull request may be over
            await self.pull_requests.woken(key, run.bound[1].branch)
        async def post_question(k: ThreadKey, qid: int, q: Question) -> str | None:
            ts = await self._post_question(k, qid, q)
            if ts and run.feed is not None:
                await run.feed.question_posted(q.key, ts)  # the status line links to it while it waits
            return ts

        transport = SlackTransport(key, store=self.store, answers=self.answers, post_question=post_question,
                                   close_question=self._close_question, show_answered=self._show_answered,
                                   # a stopped or parked run leaves its question open for the next run
                                   stopping=lambda: run.stopping or run.parked is not None or self.closing(),
                                   # asked before this run was resumed: by its life before a restart,
                                   # or on a replica that died (this replica may be older than that ask)
                                   replay_before=run.created_at if run.resumed else None)
        starter = thread_run(ws, env=self.config.agent_env, transport=transport, park=run.park,
                             runtime=runtime, language=self.config.language,
                             # FLOWER_DATABASE_URL: transcripts in PostgreSQL (issue 17); None: sessions.db
                             database_url=self.config.database_url,
                             # with a database the thread's lease keeps one run per workspace; a flock
                             # on a shared filesystem can outlive a dead machine (NFS: ~90 s) and stall
                             # the takeover
                             lock=self.config.database_url is None,
                             flow={"timeout_s": self.config.question_wait_s, **self.options.flow})
        if new and _has_history(starter.wake_state()):  # archived here, so the thread hears where it went
            archived = await asyncio.to_thread(starter.archive)
            await asyncio.to_thread(tally.reset, rd)
            await self.outbox.send(key, "archived", f"archived:{folder_name(key)}:{archived.name}",
                                   render.archived_notice(str(archived))["text"])
        await self._wake_banner(key, ws, starter, ask, new, banner_key)
        for item in await self.store.drain_inbox(key):  # said while queued, maybe before a restart
            starter.note(item.text, by=item.by)
        run.starter = starter  # words said from now on reach it (notes are kept until its flow exists)
        run.feed = feed = StatusFeed(key, store=self.store, client=self.client, outbox=self.outbox,
                                     every_s=self.options.status_every_s, status=await self._status(key, rd))
        events: asyncio.Queue[Event | None] = asyncio.Queue()
        surfaces = Surfaces(key, store=self.store, client=self.client, outbox=self.outbox, status=self.assistant,
                            goal_path=starter.paths.goal)

        def on_event(event: Event) -> None:
            if event.kind == "session":
                started()  # the CLI is up: another run may start its own
            events.put_nowait(event)
            surfaces.put(event)

        await feed.open(run.status_ts)
        shower = asyncio.create_task(feed.follow(events))
        surfaces.start()
        try:
            ctx = await starter.run(ask, new=False, words=run.words, on_event=on_event)
        finally:
            events.put_nowait(None)
            await asyncio.shield(shower)
            await asyncio.shield(surfaces.close())
        return Finished(bool(ctx.get("_ok")), ctx)

    async def conclude(self, key: ThreadKey, run: Run, outcome: Outcome) -> None:
        """Record how the run ended and say it in the thread: the one place a run's end is decided.

        A finished run's summary is queued before the thread is marked over, so a kill in
        between cannot lose it; a shutdown records nothing (the next start resumes the thread).
        """
        name, feed = folder_name(key), run.feed
        if isinstance(outcome, ShutDown):
            return
        state = state_after(outcome)
        totals = await self._totals(key, run)  # one cost and one elapsed for the status line and the summary
        if isinstance(outcome, Finished):
            reason = "" if outcome.ok else failure_reason(outcome.ctx)
            if not outcome.ok:
                log.warning("run in %s ended without its goal: %s", name, reason)
            status_ts = feed.ts if feed is not None else None
            branch = run.bound[1].branch if run.bound is not None else ""
            summary = with_feedback(
                summary_payload(outcome.ctx, run.workspace, totals, reason=reason, branch=branch), key)
            await self.outbox.send(key, "summary", f"summary:{name}:{status_ts}", summary["text"], summary["blocks"])
            if run.bound is not None:  # right under the summary: Push, the pull request and Diff act on it
                report = pr_text.report_from(outcome.ctx, cost=totals.cost, rounds=totals.rounds)
                await self._post_branch(key, run.bound, report, status_ts)
            await self.store.set_state(key, state)
            if feed is not None:
                await feed.finish(state, cost=totals.cost, at=totals.at, reason=reason)
            return
        if feed is not None:  # the status line shows the end before the thread hears of it
            reason = outcome.reason if isinstance(outcome, Failed) else ""
            await feed.finish(state, cost=totals.cost, at=totals.at, reason=reason)
        await self.store.set_state(key, state)
        if isinstance(outcome, Failed):
            log.warning("run in %s failed: %s", name, outcome.reason)
            text = (texts.RUN_REPO_FAILED if outcome.repo else texts.RUN_FAILED).format(reason=outcome.reason)
            await self.outbox.send(key, "error", f"{'repo-error' if outcome.repo else 'error'}:{name}:{time.time()}",
                                   text)
        elif isinstance(outcome, Stopped):
            await self.outbox.send(key, "stopped", f"stopped:{name}:{time.time()}",
                                   texts.RUN_STOPPED)
        elif isinstance(outcome, Parked):
            await self.outbox.send(key, "parked", f"parked:{name}:{outcome.question.key}:{time.time()}",
                                   render_deadline.parked(outcome.question.timeout_s))

    async def _status(self, key: ThreadKey, rd: Path) -> RunStatus:
        """The status line's start: the thread's first request, and what its earlier runs spent and judged."""
        since = await self._since(key)
        sums = await asyncio.to_thread(final.totals, rd, since)
        return RunStatus(started=since, cost_before=sums.cost, rounds_before=sums.rounds)

    async def _totals(self, key: ThreadKey, run: Run) -> final.Totals:
        since = await self._since(key, run.feed.status.started if run.feed else None)
        if run.workspace is None:
            return final.Totals(0.0, 0, max(0.0, time.time() - since), time.time())
        return await asyncio.to_thread(final.totals, run_dir(run.workspace), since)

    async def _since(self, key: ThreadKey, fallback: float | None = None) -> float:
        """When the thread's first request came (``threads.created_at``)."""
        thread = await self.store.get_thread(key)
        return thread.created_at if thread is not None else fallback or time.time()

    async def _wake_banner(self, key: ThreadKey, ws: Path, starter: StarterRun, ask: str, new: bool,
                           banner_key: str | None) -> None:
        state = starter.wake_state()
        if not state["waking"] or new:
            return
        # a person's words woke it: one more follow-up (a restart or a take-up brings no words)
        follow_up = await asyncio.to_thread(tally.count_follow_up, run_dir(ws)) if ask.strip() else 0
        banner = render.wake_banner(str(ws), follow_up=follow_up, checks=state.get("checks") or 0,
                                    context_tokens=state["context"], said=ask)
        await self.outbox.send(key, "wake", f"wake:{folder_name(key)}:{state['woke']}:{banner_key or ''}",
                               banner["text"], banner["blocks"])

    async def after_conclude(self, key: ThreadKey, run: Run, outcome: Outcome) -> None:
        """What may wait until the thread knows how its run ended: the branch's pull request kept
        in step, or opened by itself (``FLOWER_AUTO_PR``). Network calls, after the state is set."""
        if isinstance(outcome, Finished) and run.bound is not None:
            try:
                await self.pull_requests.after_finished(key, run.bound[1].branch, achieved=outcome.ok)
            except Exception:  # the forge's failures are said in the thread; anything else must not end the thread's task
                log.exception("pull request follow-up in %s failed", folder_name(key))

    async def _post_branch(self, key: ThreadKey, bound: tuple[Any, Any], report: pr_text.Report,
                           status_ts: str | None) -> None:
        binding, worktree = bound
        try:
            result = await asyncio.to_thread(repo_summary, worktree)
        except RepoError as exc:  # a branch the bot cannot read (a changed .git): said, and the run ends as usual
            await self.outbox.send(key, "branch", f"branch:{folder_name(key)}:{status_ts}:unread",
                                   texts.REPO_ERROR.format(error=exc))
            return
        if not report.achieved and not result.commits:
            return  # nothing to push or review yet: the summary says what is left
        has_remote = bool(await asyncio.to_thread(remotes, binding.path))
        pr = await self.pull_requests.finished(key, binding, worktree, report, commits=len(result.commits))
        shown = render_repo.branch_message(key, result, has_remote=has_remote, pr=pr)
        await self.outbox.send(key, "branch", f"branch:{folder_name(key)}:{status_ts}:{result.branch}",
                               shown["text"], shown["blocks"])

    async def _post_question(self, key: ThreadKey, qid: int, q: Question) -> str | None:
        note = render_deadline.deadline_note(q.timeout_s, q.default)
        shown = render.question_message(qid, q.text, q.options, q.asked_by, deadline_note=note)
        return await self.outbox.post(key, "question", controls.question_notice_key(key, qid), shown["text"],
                                      shown["blocks"])

    async def _show_answered(self, q: StoredQuestion) -> None:
        """The question's message shows its answer, without buttons (the click could not edit it yet)."""
        shown = render.answered_message(q.text, q.answer or "", q.answered_by or "", asked_by=q.asked_by)
        await edit(self.client, q.thread.channel, q.message_ts or "", shown["text"], shown["blocks"])

    async def _close_question(self, q: StoredQuestion) -> None:
        """The run stopped waiting (a deadline with a default, or its step moved on): the question
        loses its buttons and the thread hears what happens next."""
        closed, said = render_deadline.timed_out(q.deadline - q.asked_at if q.deadline else None, q.default)
        if q.message_ts:
            shown = render.closed_question_message(q.text, closed, asked_by=q.asked_by)
            await edit(self.client, q.thread.channel, q.message_ts, shown["text"], shown["blocks"])
        await self.outbox.send(q.thread, "timeout", f"timeout:{folder_name(q.thread)}:{q.id}", said)


def _has_history(state: dict[str, Any]) -> bool:
    """Something for ``/new`` to archive: a brief, a goal or a lineage (an empty archive says nothing)."""
    return state.get("brief") is not None or state.get("goal") is not None or bool(state.get("woke"))

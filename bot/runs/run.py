"""One start of a thread's run, from its request to its conclusion: ``ThreadRun`` owns it all.

Built once per start by ``bot.runs.jobs`` (which only schedules), it holds the thread's one
engine ``StarterRun``, the wake state read once, the saved request (``bot.runs.start``) and
the run's state (stopping, parked, abandoned); ``/new`` archived the last run before it
(``Jobs.archive``), so the first reply can say so. Its events reach one list of subscribers: the status message
(``bot.runs.status_feed``) and Slack's agent surfaces (``bot.runs.surfaces``). Every run ends in
one typed ``Outcome``, recorded and said in the thread by ``bot.runs.ending``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey, folder_name, notice_key, run_dir
from bot.errors import RepoError
from bot.forge.client import Retry
from bot.ops.metrics import Metrics
from bot.outbound.agent_surfaces import AgentSessions, AssistantStatus
from bot.outbound.outbox import Outbox
from bot.render import messages as render
from bot.render import notices
from bot.repos.bindings import Binding
from bot.repos.thread_worktree import REPO_DIR, excluding_placeholders, is_bound_thread, open_for_thread, worktree_git
from bot.repos.worktrees import Worktree
from bot.runs import tally
from bot.runs.ending import Failed, Finished, Limited, Nothing, Outcome, Parked, ShutDown, Stopped, elapsed, spent
from bot.runs.events_view import RunStatus
from bot.runs.pull_requests import PullRequests
from bot.runs.spend_book import RunSpend, SpendBook
from bot.runs.start import SavedRequest, Start
from bot.runs.start_gate import START_AT_ONCE
from bot.runs.status_feed import StatusFeed
from bot.runs.surfaces import Surfaces
from bot.runs.transport import Answers, QuestionPosts, SlackTransport
from bot.settings.agent_env import with_thread_attributes
from bot.settings.config import Config
from bot.settings.policy import ChannelPolicy
from bot.settings.sandbox_check import thread_sandbox
from bot.store.bot_store import BotStore, Thread
from bot.store.replicas import HEARTBEAT_S, LEASE_S
from engine import Event, Image, Resilience, StarterRun, WakeState
from engine.authoring import Question
from engine.events import RetryScheduled
from engine.host import file_work

__all__ = ["BotOptions", "Services", "ThreadRun", "thread_run"]


def thread_run(ws: Path, **options: Any) -> StarterRun:
    """The engine's run for thread folder ``ws`` (``options``: more ``StarterRun`` arguments). Blocking.

    A bound thread runs in its worktree (``bot.repos.thread_worktree``) with the workbench beside
    it, and its workers work in that worktree itself. Measured with CLI 2.1.332: a worker's
    ``isolation="worktree"`` puts its worktree under the MAIN checkout's ``.claude/worktrees/``,
    branched from the main checkout's HEAD, so the bound checkout gets touched and the worker's
    commits miss the thread's branch; the thread's worktree already keeps threads apart.
    """
    bound = is_bound_thread(ws)
    if bound and options.get("env") is not None:
        options["env"] = excluding_placeholders(ws, options["env"])
    return StarterRun(ws / REPO_DIR if bound else ws, run_dir=run_dir(ws), isolate=bound,
                      shared_worktree=bound, **options)


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
class Services:
    """What every thread's run uses and none owns: built once by ``Jobs``."""

    config: Config
    store: BotStore
    client: AsyncWebClient
    outbox: Outbox
    answers: Answers
    options: BotOptions
    assistant: AssistantStatus  # the "is working on" lines of every run, where there are no sessions
    sessions: AgentSessions  # every thread's agent session (its state and Slack's Stop button)
    pull_requests: PullRequests
    questions: QuestionPosts
    spend: SpendBook  # the usage ledger's sums, and each run's guard on the spend limits
    metrics: Metrics  # what the operator watches (bot.ops.health serves it)


class Subscriber(Protocol):
    """A view of the run's events: ``put`` never blocks, ``close`` shows what was put."""

    def put(self, event: Event) -> None: ...

    async def close(self) -> None: ...


class ThreadRun:
    """Thread ``key``'s run for one start: ``prepare`` (no slot needed), ``go`` (in a slot), and
    the verbs ``Jobs`` relays: ``hear`` a person's words, ``park``, ``cancelled``.

    ``start`` is what this start is (``bot.runs.start``), ``ws`` the thread's workspace and
    ``thread`` its row, both made or read once by ``Jobs.start``; ``continuing``: a reply after a
    spend limit paused the thread, so the same request goes on."""

    def __init__(self, key: ThreadKey, services: Services, start: Start, *, ws: Path, thread: Thread,
                 continuing: bool = False) -> None:
        self.key, self.s, self.start, self.ws, self.thread = key, services, start, ws, thread
        self.request = SavedRequest(ws)
        self.ask = start.words  # what the run is asked: prepare() reads a resumed run's from its saved request
        self.by = start.by or thread.created_by  # the request's person in the ledger ("" the thread's)
        self.continuing = continuing
        self.spend: RunSpend | None = None
        self.policy: ChannelPolicy = services.config.base_policy()  # the channel's, read by prepare()
        self.task: asyncio.Task[None] | None = None
        self.starter: StarterRun | None = None
        self.state: WakeState | None = None
        self.bound: tuple[Binding, Worktree] | None = None  # a bound channel's binding and the thread's worktree
        self.feed: StatusFeed | None = None
        self.surfaces: Surfaces | None = None
        self.title = ""  # the thread's request: its agent session's title
        self.words = ""  # said to a stopped run still confirming: given to its first step as an interruption
        self.first = False  # ``ask`` is the thread's first request, saved just now (not words for a stopped run)
        self.listening = False  # words reach the engine from now on (before: they wait in bot.db)
        self.stopping = False  # Stop was pressed: the task is being cancelled for good
        self.abandoned = False  # another replica took the thread over: cancelled as in a shutdown
        self.closing = False  # the bot is shutting down: cancelled, the thread stays active
        self.parked: Question | None = None  # the unanswered question the run was parked on
        self.created_at = time.time()  # a resumed run: when it was resumed

    # -- what Jobs relays --------------------------------------------------------------------

    def hear(self, said: str, by: str, images: Sequence[Image] = ()) -> bool:
        """Give ``said`` (and ``images``) to the running engine; False while it is not listening yet, or any more."""
        return self.listening and self.starter is not None and self.starter.interrupt(said, by=by, images=images)

    @property
    def concluding(self) -> bool:
        """The engine's run is over and this one is concluding: words now belong to the next run."""
        return self.starter is not None and self.starter.ended and not (self.stopping or self.parked)

    def park(self, q: Question) -> None:
        """The engine's ``park`` hook: end this run, leaving ``q`` open for an answer to resume it."""
        if self.parked is None and self.task is not None and not self.task.done():
            self.parked = q
            self.task.cancel()

    def cancelled(self) -> Outcome:
        """What a cancel of this run's task means: Stop, a park, or the bot shutting down."""
        if self.parked is not None and not (self.closing or self.abandoned):
            return Parked(self.parked)
        return Stopped() if self.stopping else ShutDown()

    # -- the run -------------------------------------------------------------------------------

    async def prepare(self) -> Outcome | None:
        """The thread's worktree, its one ``StarterRun`` and wake state, the request (a follow-up
        begins one of its own) and a restart's notice; an outcome when the run cannot go on (else None)."""
        rd, saved = run_dir(self.ws), await asyncio.to_thread(self.request.text)
        self.policy = self.s.config.for_channel(self.key.channel)  # read once per run: an edit counts from the next
        try:  # a bound channel: the thread's own worktree and branch (git work off the event loop)
            self.bound = await asyncio.to_thread(open_for_thread, self.s.config.home, self.key, self.ws, rd,
                                                 self.ask if self.start.new or not saved else saved, new=self.start.new)
            runtime = {"resilience": Resilience(wait_out_storms=True), **(self.s.options.runtime or {}),
                       "spend": lambda spent: self.spend.guard(spent) if self.spend is not None else None}
            if self.s.config.sandbox:
                git = await asyncio.to_thread(worktree_git, *self.bound) if self.bound is not None else None
                runtime["sandbox"] = thread_sandbox(self.s.config.home, secret_files=self.s.config.settings_files,
                                                    domains=self.policy.sandbox_domains, git=git)
        except RepoError as exc:
            return Failed(str(exc), repo=True)
        self.starter = self._starter(runtime)
        # the brief, goal and lineage are the run's files: read in their own pool, never the shared one
        self.state = state = await file_work(self.starter.wake_state, what="reading the run's brief, goal and lineage")
        if self.start.resumed:  # the work step wakes; an unfinished clarify is redone from the saved request
            self.ask = "" if state.waking else saved
            if not state.waking and not self.ask:
                return Nothing()
            await self._restarted(state)
        elif self.ask and not self.start.new and not state.waking and saved and not self.first:
            # words for a stopped run still confirming the requirement: the request stays as it was,
            # and the words reach the resumed clarifier as an interruption (not a new request)
            self.words, self.ask = self.ask, saved
        if state.waking and self.ask.strip() and not (self.start.resumed or self.continuing):
            await asyncio.to_thread(self.starter.begin_request)  # a follow-up: its own cost, rounds and time
        if self.ask and (self.start.new or not state.waking):
            await asyncio.to_thread(self.request.save, self.ask)
        self.title = (self.ask if self.start.new else saved) or self.ask
        spent = await asyncio.to_thread(self.starter.totals)
        self.spend = await self.s.spend.open(self.key, self.by, request=spent.request_began or 0.0,
                                             request_spent=spent.request.cost_usd, thread_spent=spent.thread.cost_usd)
        return None

    def _starter(self, runtime: dict[str, Any]) -> StarterRun:
        s, run = self.s, self

        transport = SlackTransport(self.key, store=s.store, answers=s.answers, post_question=self._post_question,
                                   close_question=s.questions.close, show_answered=s.questions.show_answered,
                                   # a stopped or parked run leaves its question open for the next run
                                   stopping=lambda: run.stopping or run.parked is not None or run.closing
                                   or run.abandoned,
                                   # asked before this run was resumed: by its life before a restart,
                                   # or on a replica that died (this replica may be older than that ask)
                                   replay_before=self.created_at if self.start.resumed else None)
        policy = self.policy
        env = with_thread_attributes(s.config.agent_env if policy.agent_env is None else policy.agent_env,
                                     thread=folder_name(self.key), channel=self.key.channel)
        if policy.model:  # the channel's model, for every session of the run
            env["ANTHROPIC_MODEL"] = policy.model
        return thread_run(self.ws, env=env, transport=transport, park=self.park,
                          runtime=runtime, language=s.config.language,
                          # FLOWER_DATABASE_URL: transcripts in PostgreSQL (issue 17); None: sessions.db
                          database_url=s.config.database_url,
                          # with a database the thread's lease keeps one run per workspace; a flock
                          # on a shared filesystem can outlive a dead machine (NFS: ~90 s) and stall
                          # the takeover
                          lock=s.config.database_url is None,
                          flow={"timeout_s": policy.question_wait_s, "rounds": policy.rounds,
                                "instructions": policy.instructions, "judge_instructions": policy.instructions,
                                **s.options.flow})

    async def go(self, started: Any = lambda: None) -> Outcome:
        """The run in its slot, from its wake banner to its flow's end; ``started()`` is called once
        its first CLI is up. A cancel propagates (``cancelled`` says what it meant)."""
        starter, state, s = self.starter, self.state, self.s
        assert starter is not None and state is not None, "prepare() first"
        if self.bound is not None and not self.start.new and self.ask.strip():  # woken by words: its PR may be over
            await s.pull_requests.woken(self.key, self.bound[1].branch)
        banner_ts = await self._wake_banner(state)
        for item in await s.store.drain_inbox(self.key):  # said while queued, maybe before a restart
            starter.note(item.text, by=item.by)
        self.listening = True  # words said from now on reach it (notes are kept until its flow exists)
        self.feed = StatusFeed(self.key, store=s.store, client=s.client, outbox=s.outbox,
                               every_s=s.options.status_every_s, status=await self._status())
        self.surfaces = surfaces = Surfaces(self.key, store=s.store, client=s.client, outbox=s.outbox,
                                            status=s.assistant, sessions=s.sessions, title=self.title,
                                            goal_path=starter.paths.goal)
        subscribers: list[Subscriber] = [self.feed, surfaces]

        spend = self.spend
        assert spend is not None

        def on_event(event: Event) -> None:
            spend.event(event)  # the ledger, before anything shows it
            if isinstance(event, RetryScheduled):
                self.s.metrics.model_retries.labels(event.failure).inc()
            if spend.near is not None and self.feed is not None:  # 80 % of a limit: the status line says so
                self.feed.status.near = spend.near
            if event.kind == "session":
                started()  # the CLI is up: another run may start its own
            for subscriber in subscribers:
                subscriber.put(event)

        ack = await s.store.sent_ts(self.start.ack_key) if self.start.ack_key and not self.start.status_ts else None
        await self.feed.open(self.start.status_ts or ack or banner_ts)
        self.feed.start()
        surfaces.start()
        try:
            result = await starter.run(self.ask, words=self.words, on_event=on_event, images=self.start.images)
        finally:
            for subscriber in subscribers:
                await asyncio.shield(subscriber.close())
            await asyncio.shield(self._reconcile())
        if result.failure is not None and result.failure.cause == "spend" and spend.reached is not None:
            return Limited(spend.reached)
        return Finished(result)

    async def _reconcile(self) -> None:
        """The thread's ledger made equal to its manifest, once the run's sessions are over."""
        if self.spend is not None and self.starter is not None:
            spent = await asyncio.to_thread(self.starter.totals)
            await self.s.spend.reconcile(self.key, self.by, self.spend.request, spent.thread.cost_usd)

    async def _status(self) -> RunStatus:
        """The status line's start: when the request began, and what its earlier runs spent and judged."""
        totals = await spent(self.starter)
        at = time.time()
        return RunStatus(started=at - elapsed(totals, self.thread.created_at, at), cost_before=totals.request.cost_usd,
                         rounds_before=totals.request.rounds, unfenced=not self.s.config.sandbox)

    async def _restarted(self, state: WakeState) -> None:
        """After a restart: the thread hears that the run goes on, or confirms the requirement again."""
        if self.start.restart_notice is None:
            return
        pending = await self.s.store.pending_questions(self.key)  # still answerable: the run asks it again
        if not state.waking or pending:  # a waking run without one is told by its wake banner
            notice = notices.restarted_notice(not state.waking, pending[-1].text if pending else "")
            await self.s.outbox.send(self.key, "resume", notice_key("resume", self.key, self.start.restart_notice),
                                     notice["text"])

    async def _wake_banner(self, state: WakeState) -> str | None:
        """Say the run picks up where it left off. A follow-up has no status message yet: its
        banner is its acknowledgement and becomes its status line (its ts is returned)."""
        if not state.waking or self.start.new:
            return None
        # a person's words woke it: one more follow-up (a restart or a take-up brings no words)
        follow_up = await asyncio.to_thread(tally.count_follow_up, run_dir(self.ws)) if self.ask.strip() else 0
        banner = render.wake_banner(follow_up=follow_up, checks=state.checks, said=self.ask)
        key = notice_key("wake", self.key, state.woke, self.start.banner_key or "")
        if self.start.status_ts is None:
            return await self.s.outbox.post(self.key, "wake", key, banner["text"], banner["blocks"])
        await self.s.outbox.send(self.key, "wake", key, banner["text"], banner["blocks"])
        return None

    async def _post_question(self, key: ThreadKey, qid: int, q: Question) -> str | None:
        ts = await self.s.questions.post(key, qid, q)
        if ts and self.feed is not None:
            await self.feed.question_posted(q.key, ts)  # the status line links to it while it waits
        return ts

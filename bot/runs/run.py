"""One run of a thread: the engine's ``starter_flow`` in the thread's workspace, shown in Slack.

Its events become notices (through the outbox, each once) and one status message edited in place
(``bot.runs.status_feed``); its questions go through a ``SlackTransport``. A question with no default
left unanswered past its deadline parks the run: the task is cancelled, the question stays open,
and an answer later resumes the run (``Jobs.take_up``). ``bot.runs.jobs`` decides when runs start.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.render import controls

from bot.render import messages as render

from bot.render import deadline as render_deadline

from bot.render import repo as render_repo
from bot.runs.transport import Answers, SlackTransport
from bot.config import Config
from bot.repos.git import RepoError, remotes
from bot.slack.outbox import Outbox, edit
from bot.repos.threads import engine_workspace, open_for_thread, share_worktree, thread_wake_state
from bot.runs.start_gate import START_AT_ONCE
from bot.runs.status_feed import StatusFeed
from bot.store.bot_store import BotStore, Question as StoredQuestion, ThreadKey
from bot.runs.threads import folder_name, run_dir
from bot.repos.worktrees import summary as repo_summary
from engine import WORK_STEP, Event, Question, Runtime, last_context_tokens, starter_flow, starter_paths

ASK_FILE = "bot-ask.txt"  # the thread's request, kept so a restart can redo an unfinished clarify


@dataclass
class BotOptions:
    """Engine knobs for the bot's runs (tests make them small): extra ``Runtime`` and
    ``starter_flow`` keyword arguments, and how often the status message may be edited."""

    runtime: dict[str, Any] = field(default_factory=dict)
    flow: dict[str, Any] = field(default_factory=dict)
    status_every_s: float = 3.0
    start_at_once: int | None = START_AT_ONCE  # CLIs starting at once (``bot.runs.start_gate``); None: no limit


@dataclass
class Run:
    """A thread's run as ``Jobs`` tracks it."""

    task: asyncio.Task[None]
    runtime: Runtime | None = None
    flow: Any = None
    stopping: bool = False  # Stop was pressed: the task is being cancelled for good
    parked: Question | None = None  # the unanswered question the run was parked on
    status_ts: str | None = None  # a status message to edit in place (a run resumed after a restart)
    ended: bool = False  # the flow returned: words said now go to bot.db's inbox for the next run
    queued_at: float = 0.0  # when the thread was queued: the "Queued" notice is said once per wait
    resumed: bool = False  # started by a resume: answers taken before this process are replayed
    words: str = ""  # said to the stopped run: given to its first step, once its CLI is up, as an interruption

    def park(self, q: Question) -> None:
        """The engine's ``park`` hook: end this run, leaving ``q`` open for an answer to resume it."""
        if self.parked is None and not self.task.done():
            self.parked = q
            self.task.cancel()


class Runner:
    """Runs ``starter_flow`` for a thread and shows it: ``go`` is one run from start to summary."""

    def __init__(self, *, config: Config, store: BotStore, client: AsyncWebClient, outbox: Outbox,
                 answers: Answers, options: BotOptions, closing: Callable[[], bool], started_at: float) -> None:
        self.config, self.store, self.client, self.outbox, self.answers = config, store, client, outbox, answers
        self.options, self.closing, self.started_at = options, closing, started_at

    async def go(self, run: Run, key: ThreadKey, ws: Path, ask: str, new: bool, banner_key: str | None,
                 started: Callable[[], None] = lambda: None) -> None:
        """The run from start to summary; ``started()`` is called once its first CLI is up."""
        rd = run_dir(ws)
        try:  # a bound channel: the thread's own worktree and branch (git work off the event loop)
            saved = rd / ASK_FILE
            bound = await asyncio.to_thread(open_for_thread, self.config.home, key, ws, rd,
                                            ask or (saved.read_text(encoding="utf-8") if saved.exists() else ""),
                                            new=new)
        except RepoError as exc:
            await self.store.set_state(key, "failed")
            await self.outbox.send(key, "error", f"repo-error:{folder_name(key)}:{time.time()}",
                                   f":x: The thread's repository could not be prepared: {exc}")
            return
        engine_ws, isolate = engine_workspace(ws)
        await self._wake_banner(key, ws, rd, ask, new, banner_key)
        transport = SlackTransport(key, store=self.store, answers=self.answers, post_question=self._post_question,
                                   close_question=self._close_question,
                                   # a stopped or parked run leaves its question open for the next run
                                   stopping=lambda: run.stopping or run.parked is not None or self.closing(),
                                   replay_before=self.started_at if run.resumed else None)
        paths = starter_paths(engine_ws, isolate=isolate)
        run.runtime = rt = Runtime(workspace=engine_ws, run_dir=rd, workbench=paths.workbench, **self.options.runtime)
        feed = StatusFeed(key, store=self.store, client=self.client, outbox=self.outbox,
                          every_s=self.options.status_every_s)
        events: asyncio.Queue[Event | None] = asyncio.Queue()
        try:
            flow = {"timeout_s": self.config.question_wait_s, **self.options.flow}
            run.flow = wf = starter_flow(ask, workspace=engine_ws, run_dir=rd, new=new, isolate=isolate,
                                         transport=transport, park=run.park, **flow)
            if isolate:
                share_worktree(wf)
            for item in await self.store.drain_inbox(key):  # said while queued, maybe before a restart
                wf.channel.post(item.text, by=item.by)

            def on_event(event: Event) -> None:
                if event.kind == "session":
                    started()  # the CLI is up: another run may start its own
                    if run.words and rt.interrupt(run.words):  # its step is running: say them now
                        run.words = ""
                events.put_nowait(event)

            status_ts = await feed.open(run.status_ts)
            shower = asyncio.create_task(feed.follow(events))
            try:
                ctx = await wf.run(rt, on_event=on_event)
            finally:
                run.ended = True
                events.put_nowait(None)
                await asyncio.shield(shower)
            ok = bool(ctx.get("_ok"))
            feed.status.state = "done" if ok else "failed"
            summary = _summary(ctx, ws)
            # queued before the run is marked over, so a kill in between cannot lose the summary
            await self.outbox.send(key, "summary", f"summary:{folder_name(key)}:{status_ts}",
                                   summary["text"], summary["blocks"])
            if ok and bound is not None:
                await self._post_branch(key, bound[0].path, bound[1], status_ts)
            await self.store.set_state(key, "done" if ok else "failed")
            await feed.finish()
        except asyncio.CancelledError:
            feed.status.state = "stopped" if run.stopping else "parked" if run.parked else "running"
            if run.stopping or run.parked:
                await asyncio.shield(feed.finish())
            raise
        finally:
            rt.close()

    async def _wake_banner(self, key: ThreadKey, ws: Path, rd: Path, ask: str, new: bool,
                           banner_key: str | None) -> None:
        state = thread_wake_state(ws)
        if not state["waking"] or new:
            return
        sid = state.get("steps", {}).get(WORK_STEP)
        banner = render.wake_banner(str(ws), woke=state.get("woke", 0), checks=state.get("checks") or 0,
                                    context_tokens=last_context_tokens(rd / "sessions.db", sid) if sid else None,
                                    said=ask)
        await self.outbox.send(key, "wake", f"wake:{folder_name(key)}:{state['woke']}:{banner_key or ''}",
                               banner["text"], banner["blocks"])

    async def _post_branch(self, key: ThreadKey, repo: Path, worktree: Any, status_ts: str | None) -> None:
        result = await asyncio.to_thread(repo_summary, worktree)
        has_remote = bool(await asyncio.to_thread(remotes, repo))
        shown = render_repo.branch_message(key, result, has_remote=has_remote)
        await self.outbox.send(key, "branch", f"branch:{folder_name(key)}:{status_ts}:{result.branch}",
                               shown["text"], shown["blocks"])

    async def _post_question(self, key: ThreadKey, qid: int, q: Question) -> str | None:
        note = render_deadline.deadline_note(q.timeout_s, q.default)
        shown = render.question_message(qid, q.text, q.options, q.asked_by, deadline_note=note)
        return await self.outbox.post(key, "question", controls.question_notice_key(key, qid), shown["text"],
                                      shown["blocks"])

    async def _close_question(self, q: StoredQuestion) -> None:
        """The run stopped waiting (a deadline with a default, or its step moved on): the question
        loses its buttons and the thread hears what happens next."""
        closed, said = render_deadline.timed_out(q.deadline - q.asked_at if q.deadline else None, q.default)
        if q.message_ts:
            shown = render.closed_question_message(q.text, closed, asked_by=q.asked_by)
            await edit(self.client, q.thread.channel, q.message_ts, shown["text"], shown["blocks"])
        await self.outbox.send(q.thread, "timeout", f"timeout:{folder_name(q.thread)}:{q.id}", said)


def _summary(ctx: dict[str, Any], ws: Path) -> render.Payload:
    results = ctx.get("_results", {})
    cost = sum(getattr(r, "cost_usd", 0.0) or 0.0 for r in results.values())
    ok = bool(ctx.get("_ok"))
    why = "" if ok else str(ctx.get("_aborted") or ctx.get("_failed") or "the judge's rounds ran out")
    return render.summary_message(ok, cost, None, str(ws), why)

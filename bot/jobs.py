"""Background runs: one asyncio task per thread, at most ``max_runs`` at once, restart recovery.

A run is the engine's ``starter_flow`` in the thread's workspace with a ``SlackTransport``; its
events become notices (through the outbox, each once) and one status message edited in place
(``bot.status_feed``). Stop cancels the task (the engine's lineage keeps the session, so a later
word continues it); a shutdown or a kill leaves the thread active, so the next start resumes it by
itself, editing the same status message. Words said while a run is queued or ending wait in
``bot.db``'s inbox, so a restart does not lose them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot import controls, render, render_deadline, render_repo
from bot.channel import Answers, SlackTransport
from bot.config import Config
from bot.git import RepoError, remotes
from bot.outbox import Outbox, edit
from bot.repo_threads import (engine_workspace, mark_fresh, open_for_thread, share_worktree,
                              thread_wake_state)
from bot.status_feed import StatusFeed
from bot.store import BotStore, Question as StoredQuestion, ThreadKey
from bot.threads import ensure_workspace, folder_name, run_dir
from bot.worktrees import summary as repo_summary
from engine.stores.sqlite_read import last_context_tokens
from engine.core.atomic import write_text_atomic
from engine.core.events import Event
from engine.core.runtime import Runtime
from engine.core.transports import Question
from engine.workflow.starter import WORK_STEP, archive_run, starter_flow, starter_paths

log = logging.getLogger(__name__)

ASK_FILE = "bot-ask.txt"  # the thread's request, kept so a restart can redo an unfinished clarify


@dataclass
class BotOptions:
    """Engine knobs for the bot's runs (tests make them small): extra ``Runtime`` and
    ``starter_flow`` keyword arguments, and how often the status message may be edited."""

    runtime: dict[str, Any] = field(default_factory=dict)
    flow: dict[str, Any] = field(default_factory=dict)
    status_every_s: float = 3.0


@dataclass
class _Run:
    task: asyncio.Task[None]
    runtime: Runtime | None = None
    flow: Any = None
    stopping: bool = False
    status_ts: str | None = None  # a status message to edit in place (a run resumed after a restart)
    ended: bool = False  # the flow returned: words said now go to bot.db's inbox for the next run
    queued_at: float = 0.0  # when the thread was queued: the "Queued" notice is said once per wait
    resumed: bool = False  # started by resume_all: answers taken before this process are replayed


class Jobs:
    """The runs of every thread; ``start`` / ``stop`` / ``interrupt`` are safe from listeners."""

    def __init__(self, *, config: Config, store: BotStore, client: AsyncWebClient, outbox: Outbox,
                 answers: Answers, options: BotOptions | None = None) -> None:
        self.config, self.store, self.client, self.outbox, self.answers = config, store, client, outbox, answers
        self.options = options or BotOptions()
        self._slots = asyncio.Semaphore(config.max_runs)
        self._runs: dict[ThreadKey, _Run] = {}
        self._queue: list[ThreadKey] = []
        self._closing = False
        self._started_at = time.time()  # answers taken before this moment may be replayed on resume
        self._follow_ups: set[asyncio.Task[None]] = set()

    # -- what listeners call -------------------------------------------------------------------

    def busy(self, key: ThreadKey) -> bool:
        """True while the thread has a run queued or going in this process."""
        run = self._runs.get(ThreadKey(*key))
        return run is not None and not run.task.done()

    def workspace(self, key: ThreadKey) -> Path:
        """The thread's workspace folder, created with its run_dir."""
        return ensure_workspace(self.config.home, key)

    async def start(self, key: ThreadKey, ask: str, *, by: str = "", new: bool = False,
                    banner_key: str | None = None, status_ts: str | None = None,
                    resumed: bool = False) -> bool:
        """Queue a run for the thread; False when one is already going there (one run per thread).

        ``status_ts`` is the thread's status message to keep editing instead of posting a new one.
        """
        key = ThreadKey(*key)
        if self.busy(key) or self._closing:
            return False
        ws = self.workspace(key)
        if ask and (new or not thread_wake_state(ws)["waking"]):
            write_text_atomic(run_dir(ws) / ASK_FILE, ask)
        thread = await self.store.get_thread(key)
        if thread is None or thread.state != "queued":  # still queued from before a restart: same place in line
            thread = await self.store.upsert_thread(key, workspace=folder_name(key), state="queued",
                                                    created_by=by or None)
        task = asyncio.create_task(self._run(key, ws, ask, new, banner_key), name=f"flower-run-{folder_name(key)}")
        self._runs[key] = _Run(task, status_ts=status_ts, queued_at=thread.updated_at, resumed=resumed)
        return True

    async def stop(self, key: ThreadKey) -> bool:
        """Cancel the thread's run and wait for it to end; False when none was going."""
        run = self._runs.get(ThreadKey(*key))
        if run is None or run.task.done():
            return False
        run.stopping = True
        run.task.cancel()
        await asyncio.gather(run.task, return_exceptions=True)
        return True

    async def interrupt(self, key: ThreadKey, said: str, *, by: str = "", ts: str = "") -> bool:
        """Give a person's words (message ``ts``) to the thread's run; False when no run is going here.

        A running step is interrupted; between steps the words are a note for the coordinator's
        inbox. While the run is queued or ending they are kept in ``bot.db`` (a restart keeps them):
        the run takes them when it starts, or they start the next run when it has ended.
        """
        key = ThreadKey(*key)
        run = self._runs.get(key)
        if run is None or run.task.done():
            return False
        if run.runtime is not None and run.runtime.running and run.runtime.interrupt(said):
            return True
        if run.flow is not None and run.flow.channel is not None and not run.ended:
            run.flow.channel.post(said, by=by)
            return True
        await self.store.push_inbox(key, said, by, ts or f"{time.time():.6f}")
        return True

    def archive(self, key: ThreadKey) -> None:
        """Archive the thread's brief, goal and lineage (``/new`` without words)."""
        ws = self.workspace(key)
        engine_ws, isolate = engine_workspace(ws)
        archive_run(starter_paths(engine_ws, isolate=isolate), run_dir(ws))
        if isolate:  # a bound thread: the next run gets a fresh branch; the old branch stays
            mark_fresh(ws, run_dir(ws))

    async def resume_all(self) -> int:
        """Start again every thread whose run was going when the bot stopped; return how many."""
        count = 0
        for thread in await self.store.active_threads():
            ws = self.workspace(thread.key)
            state = thread_wake_state(ws)
            ask_file = run_dir(ws) / ASK_FILE
            ask = "" if state["waking"] else (ask_file.read_text(encoding="utf-8") if ask_file.exists() else "")
            if not state["waking"] and not ask:
                await self.store.set_state(thread.key, "failed")
                continue
            if not state["waking"] and thread.state != "queued":  # a queued run had not begun: nothing to redo
                await self.outbox.send(thread.key, "resume", f"resume:{folder_name(thread.key)}:{thread.updated_at}",
                                       ":arrows_counterclockwise: The bot restarted; confirming the requirement again.")
            # the same run goes on: its status message is edited in place, not posted a second time
            if await self.start(thread.key, ask, banner_key=f"restart:{thread.updated_at}",
                                status_ts=thread.status_ts, resumed=True):
                count += 1
        return count

    async def close(self) -> None:
        """Cancel every run, leaving their threads active for the next start to resume."""
        self._closing = True
        tasks = [r.task for r in self._runs.values() if not r.task.done()] + list(self._follow_ups)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- one run -------------------------------------------------------------------------------

    async def _run(self, key: ThreadKey, ws: Path, ask: str, new: bool, banner_key: str | None) -> None:
        run = self._runs[key]
        name = folder_name(key)
        if self._slots.locked():
            self._queue.append(key)
            place = len(self._queue)
            await self.outbox.send(key, "queued", f"queued:{name}:{run.queued_at}",
                                   f":hourglass: Queued: {place} run(s) ahead of this one. It starts by itself.")
        try:
            async with self._slots:
                if key in self._queue:
                    self._queue.remove(key)
                await self.store.set_state(key, "running")
                await self._go(run, key, ws, ask, new, banner_key)
        except asyncio.CancelledError:
            if run.stopping:
                await self.store.set_state(key, "stopped")
                await self.outbox.send(key, "stopped", f"stopped:{name}:{time.time()}",
                                       ":black_square_for_stop: Stopped. Reply here to continue, or `/new` to start over.")
            raise  # a shutdown leaves the state active: the next start resumes it
        except Exception as exc:  # a broken run must tell its thread, not vanish in a log
            log.exception("run in %s failed", name)
            await self.store.set_state(key, "failed")
            await self.outbox.send(key, "error", f"error:{name}:{time.time()}", f":x: The run failed: {exc}")
        finally:
            if key in self._queue:
                self._queue.remove(key)
        if not self._closing and await self.store.inbox_waiting(key):  # words said while it ended
            follow = asyncio.create_task(self._follow_up(key, run.task), name=f"flower-follow-{name}")
            self._follow_ups.add(follow)
            follow.add_done_callback(self._follow_ups.discard)

    async def _follow_up(self, key: ThreadKey, task: asyncio.Task[None]) -> None:
        """Once ``task`` (the ended run) is over, start the next run with the words kept for it."""
        await asyncio.gather(task, return_exceptions=True)
        if self._closing or self.busy(key):
            return  # a run going there takes the words itself
        items = await self.store.drain_inbox(key)
        if items:
            await self.start(key, "\n".join(item.text for item in items), by=items[-1].by)

    async def _go(self, run: _Run, key: ThreadKey, ws: Path, ask: str, new: bool, banner_key: str | None) -> None:
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
        state = thread_wake_state(ws)
        if state["waking"] and not new:
            sid = state.get("steps", {}).get(WORK_STEP)
            banner = render.wake_banner(str(ws), woke=state.get("woke", 0), checks=state.get("checks") or 0,
                                        context_tokens=last_context_tokens(rd / "sessions.db", sid) if sid else None,
                                        said=ask)
            await self.outbox.send(key, "wake", f"wake:{folder_name(key)}:{state['woke']}:{banner_key or ''}",
                                   banner["text"], banner["blocks"])
        transport = SlackTransport(key, store=self.store, answers=self.answers, post_question=self._post_question,
                                   close_question=self._close_question,
                                   stopping=lambda: run.stopping or self._closing,
                                   replay_before=self._started_at if run.resumed else None)
        paths = starter_paths(engine_ws, isolate=isolate)
        run.runtime = rt = Runtime(workspace=engine_ws, run_dir=rd, workbench=paths.workbench, **self.options.runtime)
        feed = StatusFeed(key, store=self.store, client=self.client, outbox=self.outbox,
                          every_s=self.options.status_every_s)
        events: asyncio.Queue[Event | None] = asyncio.Queue()
        try:
            run.flow = wf = starter_flow(ask, workspace=engine_ws, run_dir=rd, new=new, isolate=isolate, transport=transport,
                                         **self.options.flow)
            if isolate:
                share_worktree(wf)
            for item in await self.store.drain_inbox(key):  # said while queued, maybe before a restart
                wf.channel.post(item.text, by=item.by)
            status_ts = await feed.open(run.status_ts)
            shower = asyncio.create_task(feed.follow(events))
            try:
                ctx = await wf.run(rt, on_event=events.put_nowait)
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
            feed.status.state = "stopped" if run.stopping else "running"
            if run.stopping:
                await asyncio.shield(feed.finish())
            raise
        finally:
            rt.close()

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
        """Nobody answered in time: the question loses its buttons and the thread hears what happens next."""
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

"""Background runs: one asyncio task per thread, at most ``max_runs`` at once, restart recovery.

``bot.runs.run`` is one run; this module decides when runs start and end. Stop cancels the task (the
engine's lineage keeps the session, so a later word continues it); a parked run waits for its
question's answer (``take_up``); a shutdown or a kill leaves the thread active, so the next start
resumes it by itself, editing the same status message. Words said while a run is queued or ending
wait in ``bot.db``'s inbox, so a restart does not lose them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from slack_sdk.web.async_client import AsyncWebClient

from bot.runs.pull_requests import PullRequests
from bot.runs.transport import Answers
from bot.config import Config
from bot.slack.outbox import Outbox
from bot.render import notices, texts
from bot.repos.thread_worktree import mark_fresh, thread_run
from bot.runs.outcome import Failed, Outcome, Parked, ShutDown, Stopped
from bot.runs import tally
from bot.runs.run import ASK_FILE, BotOptions, Run, Runner
from bot.runs.start_gate import StartGate
from bot.store.bot_store import BotStore, Thread, ThreadKey
from bot.records import ACTIVE_STATES
from bot.folders import ensure_workspace, folder_name, run_dir
from engine.host import beneath, write_text_atomic

log = logging.getLogger(__name__)


class Jobs:
    """The runs of every thread; ``start`` / ``stop`` / ``interrupt`` are safe from listeners."""

    def __init__(self, *, config: Config, store: BotStore, client: AsyncWebClient, outbox: Outbox,
                 answers: Answers, options: BotOptions | None = None) -> None:
        self.config, self.store, self.outbox = config, store, outbox
        self._slots = asyncio.Semaphore(config.max_runs)
        self._runs: dict[ThreadKey, Run] = {}
        self._queue: list[ThreadKey] = []
        self._starting: set[ThreadKey] = set()  # threads inside start(), before their task exists
        self._closing = False
        self._follow_ups: set[asyncio.Task[None]] = set()
        options = options or BotOptions()
        self._gate = StartGate(options.start_at_once) if options.start_at_once else None
        self._runner = Runner(config=config, store=store, client=client, outbox=outbox, answers=answers,
                              options=options, closing=lambda: self._closing)

    # -- what listeners call -------------------------------------------------------------------

    @property
    def pull_requests(self) -> PullRequests:
        """The bound threads' pull requests (the Open pull request buttons act on them)."""
        return self._runner.pull_requests

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
        """Queue a run for the thread; False when one is already going or starting there (one run
        per thread), or the bot is closing.

        ``status_ts`` is the thread's status message to keep editing instead of posting a new one.
        """
        key = ThreadKey(*key)
        if self.busy(key) or key in self._starting or self._closing:
            return False
        self._starting.add(key)  # a second start for this thread (a reply and a click at once) stops here
        try:
            return await self._start(key, ask, by=by, new=new, banner_key=banner_key, status_ts=status_ts,
                                     resumed=resumed)
        finally:
            self._starting.discard(key)

    async def _start(self, key: ThreadKey, ask: str, *, by: str, new: bool, banner_key: str | None,
                     status_ts: str | None, resumed: bool) -> bool:
        ws = self.workspace(key)
        state, saved, words = thread_run(ws).wake_state(), run_dir(ws) / ASK_FILE, ""
        if ask and not new and not resumed and not state["waking"] and saved.exists():
            # words for a stopped run still confirming the requirement: the request stays as it was,
            # and the words reach the resumed clarifier as an interruption (not a new request)
            words, ask = ask, saved.read_text(encoding="utf-8")
        elif ask and (new or not state["waking"]):
            write_text_atomic(saved, ask)
        thread = await self.store.get_thread(key)
        if thread is None or thread.state != "queued":  # still queued from before a restart: same place in line
            thread = await self.store.upsert_thread(key, workspace=folder_name(key), state="queued",
                                                    created_by=by or None)
        if self._closing:  # close() ran while this start awaited: the next start resumes the thread
            return False
        task = asyncio.create_task(self._run(key, ws, ask, new, banner_key), name=f"flower-run-{folder_name(key)}")
        self._runs[key] = Run(task, status_ts=status_ts, queued_at=thread.updated_at, resumed=resumed, words=words)
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
        if run.starter is not None and run.starter.interrupt(said, by=by):
            return True
        await self.store.push_inbox(key, said, by, ts or f"{time.time():.6f}")
        if run.starter is not None and run.starter.ended and not (run.stopping or run.parked):
            # the run is concluding: it may have looked at the inbox already, so these words must
            # start the next run themselves (a second follow-up finds nothing left and returns)
            self._follow(key, run.task)
        return True

    def archive(self, key: ThreadKey) -> None:
        """Archive the thread's brief, goal and lineage (``/new`` without words)."""
        ws = self.workspace(key)
        starter = thread_run(ws)
        archived = starter.archive()
        # the old request goes with its brief (into the agent's workbench: no link followed there)
        beneath.move(starter.paths.workbench.anchor, run_dir(ws) / ASK_FILE, archived / ASK_FILE,
                     src_anchor=run_dir(ws))
        tally.reset(run_dir(ws))  # the next request's rounds and follow-ups count from 1
        if starter.isolate:  # a bound thread: the next run gets a fresh branch; the old branch stays
            mark_fresh(ws, run_dir(ws))

    async def resume_all(self) -> int:
        """Start again every thread whose run was going when the bot stopped; return how many."""
        count = 0
        for thread in await self.store.active_threads():
            if await self._resume(thread, banner_key=f"restart:{thread.updated_at}", restarted=True):
                count += 1
        return count

    async def resume(self, key: ThreadKey) -> bool:
        """Resume a thread taken over from a replica that died, if its run was going there."""
        thread = await self.store.get_thread(ThreadKey(*key))
        if thread is None or thread.state not in ACTIVE_STATES or self.busy(thread.key):
            return False
        return await self._resume(thread, banner_key=f"restart:{thread.updated_at}", restarted=True)

    async def abandon(self, key: ThreadKey) -> bool:
        """End the thread's run here without a word: another replica took its lease and resumes it.

        The cancel is a shutdown's (the thread stays active); False when no run was going here.
        """
        run = self._runs.get(ThreadKey(*key))
        if run is None or run.task.done():
            return False
        log.warning("thread %s was taken over by another replica (this one did not renew its lease in time); "
                    "its run stops here and goes on there", folder_name(key))
        run.abandoned = True
        run.task.cancel()
        await asyncio.gather(run.task, return_exceptions=True)
        return True

    async def take_up(self, key: ThreadKey) -> bool:
        """Resume a parked or stopped thread whose open question was just answered (the resumed run
        asks it again and gets that answer); False when the thread is not parked or stopped."""
        thread = await self.store.get_thread(ThreadKey(*key))
        if thread is None or thread.state not in ("parked", "stopped") or self.busy(thread.key):
            return False
        return await self._resume(thread, banner_key=f"take-up:{thread.updated_at}", restarted=False)

    async def _resume(self, thread: Thread, *, banner_key: str, restarted: bool) -> bool:
        """Start the thread's run again where it stopped: the work step wakes, an unfinished clarify
        is redone from the saved request. The same status message is edited, not posted again."""
        ws = self.workspace(thread.key)
        waking = thread_run(ws).wake_state()["waking"]
        ask_file = run_dir(ws) / ASK_FILE
        ask = "" if waking else (ask_file.read_text(encoding="utf-8") if ask_file.exists() else "")
        if not waking and not ask:
            await self.store.set_state(thread.key, "failed")
            return False
        if restarted and thread.state != "queued":  # a queued run had not begun: nothing to redo
            pending = await self.store.pending_questions(thread.key)  # still answerable: the run asks it again
            if not waking or pending:  # a waking run without one is told by its wake banner
                notice = notices.restarted_notice(not waking, pending[-1].text if pending else "")
                await self.outbox.send(thread.key, "resume", f"resume:{folder_name(thread.key)}:{thread.updated_at}",
                                       notice["text"])
        return await self.start(thread.key, ask, banner_key=banner_key, status_ts=thread.status_ts, resumed=True)

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
                                   texts.RUN_QUEUED_BEHIND.format(place=place))
        try:
            outcome = await self._go(run, key, ws, ask, new, banner_key)
        finally:
            if key in self._queue:
                self._queue.remove(key)
        await self._runner.conclude(key, run, outcome)
        await self._runner.after_conclude(key, run, outcome)  # still this thread's task: the next run waits
        if isinstance(outcome, (ShutDown, Stopped)):
            raise asyncio.CancelledError  # the task ends cancelled, as asked; words said meanwhile wait
        if not self._closing and await self.store.inbox_waiting(key):  # words said while it ended
            self._follow(key, run.task)

    async def _go(self, run: Run, key: ThreadKey, ws: Path, ask: str, new: bool, banner_key: str | None) -> Outcome:
        """The run in its slot, as one outcome: the one place where a cancel and a crash are sorted out."""
        try:
            async with self._slots:
                if key in self._queue:
                    self._queue.remove(key)
                await self.store.set_state(key, "running")
                started = await self._gate.enter() if self._gate is not None else (lambda: None)
                try:
                    return await self._runner.go(run, key, ws, ask, new, banner_key, started)
                finally:
                    started()
        except asyncio.CancelledError:
            outcome = run.cancelled(self._closing or run.abandoned)
            if isinstance(outcome, Parked):
                asyncio.current_task().uncancel()  # parked is an end, not a cancel: the task goes on
            return outcome
        except Exception as exc:  # a broken run must tell its thread, not vanish in a log
            log.exception("run in %s failed", folder_name(key))
            return Failed(str(exc))

    def _follow(self, key: ThreadKey, task: asyncio.Task[None]) -> None:
        follow = asyncio.create_task(self._follow_up(key, task), name=f"flower-follow-{folder_name(key)}")
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

"""Background runs: one asyncio task per thread, at most ``max_runs`` at once, restart recovery.

``Jobs`` only schedules: slots and the queue, Stop, a shutdown, a takeover, and which threads to
resume after a restart. Each start, a ``Start`` (``bot.runs.start``) built where it was decided,
builds one ``ThreadRun`` (``bot.runs.run``) with the thread's row and workspace; the run owns it;
``bot.runs.ending`` says how it ended. Stop cancels the task (the engine's lineage keeps the
session, so a later word continues it); a parked run waits for its question's answer
(``take_up``); a shutdown or a kill leaves the thread active, so the next start resumes it by
itself, editing the same status message. Words said while a run is queued or ending wait in
``bot.db``'s inbox, so a restart does not lose them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from pathlib import Path

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ACTIVE_STATES, ThreadKey, ensure_workspace, folder_name, notice_key, run_dir
from bot.errors import RunFilesRefused
from bot.ops.metrics import Metrics
from bot.outbound.agent_surfaces import AgentSessions, AssistantStatus
from bot.outbound.outbox import Outbox
from bot.render import texts
from bot.render.failures import refusal_reason
from bot.repos.thread_worktree import mark_fresh
from bot.runs import tally
from bot.runs.ending import Ending, Failed, Outcome, Parked, ShutDown, Stopped
from bot.runs.pull_requests import PullRequests
from bot.runs.refused import in_the_workbench, refusing
from bot.runs.run import BotOptions, Services, ThreadRun, thread_run
from bot.runs.spend_book import SpendBook
from bot.runs.start import SavedRequest, Start
from bot.runs.start_gate import StartGate
from bot.runs.transport import Answers, QuestionPosts
from bot.settings.config import Config
from bot.store.bot_store import BotStore, Thread
from engine import FileWorkOverran, FlowerError, Image
from engine.host import file_work

__all__ = ["BotOptions", "Jobs"]

log = logging.getLogger(__name__)


class Jobs:
    """The runs of every thread; ``start`` / ``stop`` / ``interrupt`` are safe from listeners."""

    def __init__(self, *, config: Config, store: BotStore, client: AsyncWebClient, outbox: Outbox,
                 answers: Answers, options: BotOptions | None = None, metrics: Metrics | None = None) -> None:
        self.config, self.store, self.outbox = config, store, outbox
        options = options or BotOptions()
        metrics = metrics or Metrics()
        self._services = Services(
            config=config, store=store, client=client, outbox=outbox, answers=answers, options=options,
            assistant=AssistantStatus(client), sessions=AgentSessions(client), questions=QuestionPosts(client=client, outbox=outbox),
            pull_requests=PullRequests(config=config, store=store, client=client, outbox=outbox,
                                       retry=options.forge_retry),
            spend=SpendBook(store, config, metrics), metrics=metrics)
        self._ending = Ending(config=config, store=store, client=client, outbox=outbox,
                              sessions=self._services.sessions, metrics=metrics,
                              pull_requests=self._services.pull_requests)
        self._slots = asyncio.Semaphore(config.max_runs)
        self._runs: dict[ThreadKey, ThreadRun] = {}
        self._queue: list[ThreadKey] = []
        self._starting: set[ThreadKey] = set()  # threads inside start(), before their task exists
        self._closing = False
        self._follow_ups: set[asyncio.Task[None]] = set()
        self._gate = StartGate(options.start_at_once) if options.start_at_once else None

    # -- what listeners call -------------------------------------------------------------------

    @property
    def pull_requests(self) -> PullRequests:
        """The bound threads' pull requests (the Open pull request buttons act on them)."""
        return self._services.pull_requests

    @property
    def spend(self) -> SpendBook:
        """The usage ledger's sums and the spend limits (``/limit`` shows and changes them)."""
        return self._services.spend

    @property
    def sessions(self) -> AgentSessions:
        """The threads' agent sessions (``/new`` closes one, Slack's Stop moves one on)."""
        return self._services.sessions

    def queued(self) -> int:
        """How many runs wait for a slot now."""
        return len(self._queue)

    def busy(self, key: ThreadKey) -> bool:
        """True while the thread has a run queued or going in this process."""
        run = self._runs.get(ThreadKey(*key))
        return run is not None and run.task is not None and not run.task.done()

    def workspace(self, key: ThreadKey) -> Path:
        """The thread's workspace folder, created with its run_dir."""
        return ensure_workspace(self.config.home, key)

    async def start(self, key: ThreadKey, start: Start, *, ws: Path | None = None) -> bool:
        """Queue ``start``'s run for the thread; False when one is already going or starting there
        (one run per thread), or the bot is closing.

        The thread's row is read here, once per start, and handed to the run with its workspace:
        ``ws`` when the caller made it already, else made here.
        """
        key = ThreadKey(*key)
        if self.busy(key) or key in self._starting or self._closing:
            return False
        self._starting.add(key)  # a second start for this thread (a reply and a click at once) stops here
        try:
            thread = await self.store.get_thread(key)
            continuing = thread is not None and thread.state == "limited" and not start.new
            if thread is None or thread.state != "queued":  # still queued from before a restart: same place in line
                thread = await self.store.upsert_thread(key, workspace=folder_name(key), state="queued",
                                                        created_by=start.by or None)
            if self._closing:  # close() ran while this start awaited: the next start resumes the thread
                return False
            run = ThreadRun(key, self._services, start, ws=ws or self.workspace(key), thread=thread,
                            continuing=continuing)
            if not start.new:
                run.first = await asyncio.to_thread(run.request.keep_first, start.words)
            run.task = asyncio.create_task(self._run(run), name=f"flower-run-{folder_name(key)}")
            self._runs[key] = run
            return True
        finally:
            self._starting.discard(key)

    async def stop(self, key: ThreadKey) -> bool:
        """Cancel the thread's run and wait for it to end; False when none was going."""
        run = self._going(key)
        if run is None:
            return False
        run.stopping = True
        await self._cancel(run)
        return True

    async def interrupt(self, key: ThreadKey, said: str, *, by: str = "", ts: str = "",
                        images: Sequence[Image] = ()) -> bool:
        """Give a person's words (message ``ts``) to the thread's run; False when no run is going here.

        A running step is interrupted; between steps the words are a note for the coordinator's
        inbox. While the run is queued or ending they are kept in ``bot.db`` (a restart keeps them):
        the run takes them when it starts, or they start the next run when it has ended.
        """
        run = self._going(key)
        if run is None:
            return False
        if run.hear(said, by, images):
            return True
        # kept words name the images' files (the run may open them); the pictures wait for no one
        await self.store.push_inbox(run.key, said, by, ts or f"{time.time():.6f}")
        if run.concluding:
            # the run is concluding: it may have looked at the inbox already, so these words must
            # start the next run themselves (a second follow-up finds nothing left and returns)
            self._follow(run)
        return True

    async def archive(self, key: ThreadKey, ws: Path | None = None) -> bool:
        """``/new``, the one place it is done: the brief, goal, lineage and request go into the
        workbench's archive (the engine begins a new request), the follow-ups count from 1 again, a
        bound thread's next run opens a fresh branch (the old one stays), and the agent session is
        closed. False when there was nothing to archive. Raises ``RunFilesRefused`` when a link or
        FIFO the run made stands in the way (nothing is moved then). ``ws``: the thread's workspace,
        when the caller made it already."""
        ws = ws or self.workspace(key)

        def archive() -> bool:  # blocking file and git work, off the event loop
            starter = thread_run(ws)
            if not starter.wake_state().has_history:
                return False
            anchor = starter.paths.workbench.anchor
            with refusing("archive", anchor, starter.paths.archive):  # said in the thread by the intake
                SavedRequest(ws).archive(anchor, starter.archive())
            tally.reset(run_dir(ws))
            if starter.isolate:
                mark_fresh(ws, run_dir(ws))
            return True

        try:
            archived = await file_work(archive, what="/new's archive")  # the run's files: their own pool
        except FileWorkOverran as exc:
            raise RunFilesRefused("archive", "", "slow") from exc
        await self.store.forget_plans(key)
        await self.store.retire_pr_watches(key)
        await self.sessions.set(key, "closed")
        return archived

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
        self._services.metrics.takeovers.inc()
        return await self._resume(thread, banner_key=f"restart:{thread.updated_at}", restarted=True)

    async def abandon(self, key: ThreadKey) -> bool:
        """End the thread's run here without a word: another replica took its lease and resumes it.

        The cancel is a shutdown's (the thread stays active); False when no run was going here.
        """
        run = self._going(key)
        if run is None:
            return False
        log.warning("thread %s was taken over by another replica (this one did not renew its lease in time); "
                    "its run stops here and goes on there", folder_name(key))
        run.abandoned = True
        await self._cancel(run)
        return True

    async def take_up(self, key: ThreadKey) -> bool:
        """Resume a parked or stopped thread whose open question was just answered (the resumed run
        asks it again and gets that answer), or one paused at a spend limit whose Go on was
        pressed; False when the thread is none of these."""
        thread = await self.store.get_thread(ThreadKey(*key))
        if thread is None or thread.state not in ("parked", "stopped", "limited") or self.busy(thread.key):
            return False
        return await self._resume(thread, banner_key=f"take-up:{thread.updated_at}", restarted=False)

    async def _resume(self, thread: Thread, *, banner_key: str, restarted: bool) -> bool:
        """Start the thread's run again where it stopped (``ThreadRun.prepare`` decides how); the
        same status message is edited, not posted again. A queued run had not begun: nothing to redo."""
        notice = thread.updated_at if restarted and thread.state != "queued" else None
        return await self.start(thread.key, Start.resume(status_ts=thread.status_ts, banner_key=banner_key,
                                                         restart_notice=notice))

    async def close(self) -> None:
        """Cancel every run, leaving their threads active for the next start to resume."""
        self._closing = True
        for run in self._runs.values():
            run.closing = True
        tasks = [r.task for r in self._runs.values() if r.task is not None and not r.task.done()]
        tasks += list(self._follow_ups)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._services.spend.close()  # the ledger's last rows are written

    # -- scheduling one run ----------------------------------------------------------------------

    def _going(self, key: ThreadKey) -> ThreadRun | None:
        run = self._runs.get(ThreadKey(*key))
        return run if run is not None and run.task is not None and not run.task.done() else None

    @staticmethod
    async def _cancel(run: ThreadRun) -> None:
        assert run.task is not None
        run.task.cancel()
        await asyncio.gather(run.task, return_exceptions=True)

    async def _run(self, run: ThreadRun) -> None:
        key = run.key
        if self._slots.locked():  # told at once, in the order the starts came
            self._queue.append(key)
            await self.outbox.send(key, "queued", notice_key("queued", key, run.thread.updated_at),
                                   texts.RUN_QUEUED_BEHIND.format(place=len(self._queue)))
        try:
            outcome = await self._outcome(run)
        finally:
            if key in self._queue:
                self._queue.remove(key)
        await self._ending.conclude(key, outcome, ws=run.ws, starter=run.starter, since=run.thread.created_at,
                                    feed=run.feed, surfaces=run.surfaces, bound=run.bound)
        await self._ending.after(key, outcome, bound=run.bound)  # still this thread's task: the next run waits
        if isinstance(outcome, (ShutDown, Stopped)):
            raise asyncio.CancelledError  # the task ends cancelled, as asked; words said meanwhile wait
        if not self._closing and await self.store.inbox_waiting(key):  # words said while it ended
            self._follow(run)

    async def _in_slot(self, run: ThreadRun) -> Outcome:
        async with self._slots:
            if run.key in self._queue:
                self._queue.remove(run.key)
            await self.store.set_state(run.key, "running")
            # prepared in its slot: a run that waits keeps its place in line (a restart resumes the
            # threads in order, and the one that was running is not queued behind one that waited)
            outcome = await run.prepare()
            if outcome is not None:
                return outcome
            started = await self._gate.enter() if self._gate is not None else (lambda: None)
            try:
                return await run.go(started)
            finally:
                started()

    async def _outcome(self, run: ThreadRun) -> Outcome:
        """The run's outcome: the one place where a cancel and a crash are sorted out."""
        try:
            return await self._in_slot(run)
        except asyncio.CancelledError:
            outcome = run.cancelled()
            if isinstance(outcome, Parked):
                asyncio.current_task().uncancel()  # parked is an end, not a cancel: the task goes on
            return outcome
        except Exception as exc:  # a broken run must tell its thread, not vanish in a log
            log.exception("run in %s failed", folder_name(run.key))
            return Failed(await self._why(run, exc))

    @staticmethod
    async def _why(run: ThreadRun, exc: Exception) -> str:
        """A crash in the person's words: a link or FIFO the run made where its workbench needs a
        folder is named, with the fix (the engine's own error may name host paths); else the error."""
        try:
            found = await file_work(lambda: in_the_workbench(run.starter or thread_run(run.ws)),
                                    what="looking at a failed run's workbench")
        except (OSError, ValueError, FlowerError):  # it cannot be looked at: the error itself is said
            found = None
        return refusal_reason(*found) if found is not None else str(exc)

    def _follow(self, run: ThreadRun) -> None:
        follow = asyncio.create_task(self._follow_up(run), name=f"flower-follow-{folder_name(run.key)}")
        self._follow_ups.add(follow)
        follow.add_done_callback(self._follow_ups.discard)

    async def _follow_up(self, run: ThreadRun) -> None:
        """Once ``run`` has ended, start the next run with the words kept for it."""
        assert run.task is not None
        await asyncio.gather(run.task, return_exceptions=True)
        if self._closing or self.busy(run.key):
            return  # a run going there takes the words itself
        items = await self.store.drain_inbox(run.key)
        if items:
            await self.start(run.key, Start.reply("\n".join(item.text for item in items), by=items[-1].by))

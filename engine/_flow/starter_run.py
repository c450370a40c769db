"""``StarterRun``: one workspace's starter run, composed once for every front end.

Workspace paths -> ``Runtime`` -> ``starter_flow`` -> run, and the verbs a front end needs around
it: the wake state before it starts, words for the running step or for the coordinator's inbox,
the archive of ``/new``. The terminal (``flower``) and the Slack bot both build one per run, so
neither knows where ``sessions.db`` is, how the workbench is placed, or how the flow is wired.
To stop a run, cancel the task awaiting ``run()``: the lineage keeps the session for the next.
"""

from __future__ import annotations

import contextlib

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engine._events import Event, OnEvent, emit
from engine._flow.base import Workflow
from engine._flow.run_result import RunResult, WakeState
from engine._flow.starter import GOAL_STEP, WORK_STEP, StarterPaths, archive_run, starter_flow, starter_paths, wake_state
from engine._human.channel import Park
from engine._lang import check, current, speaking, step_names, words as words_of
from engine._media.image import Image, image_names
from engine._run.run_lock import run_lock
from engine._run.runtime import Runtime
from engine._run.totals import Totals, begin_request, totals
from engine._resume.archive import session_archive
from engine._resume.policies import TrimPolicy


class StarterRun:
    """The starter workflow in ``workspace``, with its transcripts under ``run_dir``.

    ``isolate=True`` (a git checkout) keeps the workbench outside the checkout and gives each
    worker dispatch a worktree of its own, unless ``shared_worktree=True``: then workers work
    in the checkout itself (it is a thread's own worktree already). ``env`` is the environment
    the CLI gets, built by the host (None: the host's whole ``os.environ``); ``trim`` is the
    large-result trim layer (on, as for the ``flower`` command). ``database_url`` (a
    ``postgresql://`` URL) keeps the transcripts in that database instead of ``sessions.db``
    (``Runtime(database_url=...)``; the wake state reads them there too). ``lock=False`` leaves
    out the workspace's ``run.lock``, for a host that keeps one run per workspace itself (the
    bot's database leases). ``language`` (``en`` /
    ``zh``, default: the one in effect, ``engine._lang``) is what the models are told and what is
    written. ``runtime`` and ``flow`` are further ``Runtime`` and ``starter_flow`` keyword
    arguments (tests make them small).
    Constructing one reads and writes nothing.
    """

    def __init__(
        self,
        workspace: str | Path = ".",
        *,
        run_dir: str | Path = "runs",
        isolate: bool = False,
        shared_worktree: bool = False,
        env: Mapping[str, str] | None = None,
        own_process_group: bool = False,
        trim: bool = True,
        transport: Any = None,
        park: Park | None = None,
        runtime: Mapping[str, Any] | None = None,
        flow: Mapping[str, Any] | None = None,
        language: str | None = None,
        database_url: str | None = None,
        lock: bool = True,
    ) -> None:
        self.language = check(language, source="language") if language else current()
        self.lock = lock
        with speaking(self.language):
            self.paths: StarterPaths = starter_paths(workspace, isolate=isolate)
        self.run_dir = Path(run_dir).resolve()
        self.isolate, self.shared_worktree = isolate, shared_worktree
        self.database_url = database_url
        self._runtime_kw: dict[str, Any] = {
            "trim": TrimPolicy(enabled=trim), "env": env, "own_process_group": own_process_group,
            "database_url": database_url, **(runtime or {})}
        self._flow_kw: dict[str, Any] = {"transport": transport, "park": park, **(flow or {})}
        self.runtime: Runtime | None = None  # while run() runs
        self.archived: Path | None = None  # where run(new=True) archived the last run
        self.flow: Workflow | None = None
        self._notes: list[tuple[str, str]] = []
        self._ended = False

    # -- before a run ---------------------------------------------------------------------------

    def wake_state(self) -> WakeState:
        """The spec's ``wake_state`` of this workspace, typed, with the work step's last context
        size in tokens (None when unknown). Writes nothing."""
        state = wake_state(self.paths.workspace, run_dir=self.run_dir, isolate=self.isolate,
                           database_url=self.database_url)
        sid = next((state["steps"][n] for n in step_names(WORK_STEP) if n in state["steps"]), None)
        archive = session_archive(self.run_dir, self.paths.workspace, self.database_url)
        return WakeState.of(state, archive.last_context_tokens(sid) if sid else None)

    def archive(self) -> Path:
        """``/new``: archive brief, goal and lineage into the workbench's ``notes/archive/<time>/``
        and return that folder; the next run starts fresh (``sessions.db`` stays: it is the archive)
        and a new request begins (``totals().request`` counts from 0; the thread's goes on)."""
        archived = archive_run(self.paths, self.run_dir)
        begin_request(self.run_dir)
        return archived

    def begin_request(self) -> None:
        """A follow-up (words that wake a finished run) is a request of its own: its cost, rounds
        and time count from now (``totals().request``); ``archive`` begins one for ``/new``."""
        begin_request(self.run_dir)

    def totals(self) -> Totals:
        """What the thread and its current request have spent and judged (every session's cost)."""
        return totals(self.run_dir)

    # -- the run --------------------------------------------------------------------------------

    async def run(self, ask: str, *, new: bool = False, words: str = "",
                  on_event: OnEvent | None = None, images: Sequence[Image] = ()) -> RunResult:
        """Run the starter flow once with ``ask`` (``new``: archive first) and say how it ended.

        ``images`` came with ``ask`` (``engine.Image``, see ``load_image``): the clarifier and the
        coordinator's first round are shown them (``starter_flow``), the goal setter and the judge
        are not; a run that goes on with a stopped one's sessions need not pass them again (those
        sessions keep them). ``words`` were said to a run that was stopped: they reach its first
        step as an interruption once that step's CLI is up. Notes left before the flow exists reach the
        coordinator's inbox. Raises ``ValueError`` like ``starter_flow`` (an empty ask in a fresh
        workspace, ``isolate`` outside a git repository), ``CredentialsError``, and
        ``WorkspaceBusyError`` when another live run works in this workspace (one at a time).
        """
        try:
            with run_lock(self.run_dir) if self.lock else contextlib.nullcontext(), speaking(self.language):
                return await self._run(ask, new=new, words=words, on_event=on_event, images=tuple(images))
        finally:
            self._ended = True

    async def _run(self, ask: str, *, new: bool, words: str, on_event: OnEvent | None,
                   images: tuple[Image, ...]) -> RunResult:
        rt = self.runtime = Runtime(workspace=self.paths.workspace, run_dir=self.run_dir,
                                    workbench=self.paths.workbench, **self._runtime_kw)
        pending = [words.strip()] if words.strip() else []

        def relay(event: Event) -> None:
            if event.kind == "session" and pending and rt.interrupt(pending[0]):
                pending.clear()  # its step is running: said now, once
            emit(on_event, event)

        try:
            if new:  # here, under the run lock, and said where (``archived``)
                self.archived = self.archive()
            wf = self.flow = starter_flow(
                ask, workspace=self.paths.workspace, run_dir=self.run_dir, isolate=self.isolate,
                worktrees=False if self.shared_worktree else None, images=images, **self._flow_kw)
            for text, by in self._notes:
                wf.channel.post(text, by=by)
            self._notes.clear()
            return RunResult.of(await wf.run(rt, on_event=relay), words_of(self.language).WORK_STEP)
        finally:
            rt.close()

    @property
    def running(self) -> bool:
        """True while a step is in flight."""
        return self.runtime is not None and self.runtime.running

    @property
    def ended(self) -> bool:
        """True once ``run()`` returned or raised: words said now belong to the next run."""
        return self._ended

    def interrupt(self, said: str, *, by: str = "", images: Sequence[Image] = ()) -> bool:
        """A person's words, and the images they shared with them: the running step is
        interrupted with them (it resumes the same session with ``said`` and the images); while
        the judge or the goal setter runs, between steps, or before the flow is built, they are a
        note for the coordinator's inbox, which names the images' files (the coordinator Reads
        them). False once the run has ended or nothing was said (nothing was delivered)."""
        if self._ended or not (said.strip() or images):
            return False
        label = self.runtime.label_in_flight if self.runtime is not None else None
        judging = label is not None and (label.role == "judge" or label.name in step_names(GOAL_STEP))
        if not judging and self.runtime is not None and self.runtime.interrupt(said, images):
            return True
        # a judge or goal setter that heard them would spend its turn on them
        self.note(said, by=by, images=images)
        return True

    def note(self, said: str, *, by: str = "", images: Sequence[Image] = ()) -> None:
        """Leave ``said`` in the coordinator's inbox (kept until the flow exists); ``images`` are
        named in it, by their files (a note carries text only)."""
        if images:
            said = (said.strip() + words_of(self.language).SHARED_IMAGES.format(names=image_names(images))).strip()
        if self.flow is not None and self.flow.channel is not None:
            self.flow.channel.post(said, by=by)
        else:
            self._notes.append((said, by))

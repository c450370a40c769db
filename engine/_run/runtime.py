"""Runtime: owns the workspace, the session store, the workbench and the policies; runs steps.

Outward it has one verb, ``run`` one step. Retries, continuing after a person's interruption and
the handoff when the context fills all happen inside that one call.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from engine._lang import words, zh
from engine._agents.spec import AgentSpec, HandoffPolicy
from engine._agents.workbench import Workbench
from engine._docs.handoff_doc import is_overflow
from engine._events import (
    HandoffEvent, Interrupted, Label, OnEvent, ResultReported, RetryScheduled, SessionStarted, TurnEnded,
    WaitingForApi, WaitingOnline, emit, stamped,
)
from engine._file_work import OVERRAN
from engine._media.image import Image
from engine._run import signals
from engine._run.attempt import AttemptHooks, AttemptOutcome, run_attempt
from engine._run.credentials import check_credentials
from engine._run.handoff import write_handoff
from engine._run.manifest import MANIFEST_FILE, Manifest, StepResult
from engine._run.options import Setting, prepared_options
from engine._run.said import Said
from engine._run.sandbox import Sandbox
from engine._run.resilience import Resilience, failure_text
from engine._run.spend import SPEND_LIMIT, SpendGuard, SpendMeter
from engine._resume.archive import session_archive
from engine._resume.policies import EphemeralPolicy, PrunePolicy, TrimPolicy


def _policy(value, default_cls, *, default_on: bool):
    """``True``/``False``/an instance -> an instance whose ``enabled`` says whether it is on."""
    if isinstance(value, default_cls):
        return value
    on = default_on if value is None else bool(value)
    return default_cls(enabled=on)


MAX_ERRORS_KEPT = 50  # a storm waited out for days must not grow the manifest without end

class Runtime:
    """Runs steps in one workspace, with their transcripts in ``<run_dir>/sessions.db``, or in the
    PostgreSQL database at ``database_url`` when one is given (then no ``sessions.db`` is made).

    ``run_dir`` is relative to the current directory, not to the workspace. The session store
    is always a ``PruningSessionStore`` or, with ``database_url``, a ``PruningPostgresSessionStore``
    with the same layers (replace ``rt.store`` after construction to change it); stores on one
    URL share one connection pool per process.
    ``trim=False`` only turns off the large-result trim layer: dropping API-error residue,
    old denials, neutralising interrupted results and expiring ephemeral results stay on.

    ``env`` is the environment the CLI gets, built by the host (None: the host's whole
    ``os.environ``, the SDK's default); ``own_process_group`` starts the CLI in a process group
    of its own (a terminal's Ctrl-C then reaches only the host); ``sandbox`` fences an untrusted
    workspace's commands and file tools in (``engine.Sandbox``); ``spend`` is a limit on what
    its sessions spend (``engine.host.SpendGuard``: asked before each step and at every
    message, workers' included; a reason stops the step there, failing with kind
    ``spend_limit``, never retried). The workbench's index is built in the run-files pool
    (``engine.host.file_work``): one that overruns fails the step (kind ``file_work_overran``).
    Construction checks that ``env`` has credentials (``CredentialsError``, a ``RuntimeError``),
    with no effect on the process: unlike the spec's Runtime it loads no ``.env`` and installs no
    signal handler, a host's choices (``flower`` makes both; see ``engine.host.install_signal_rescue``).

    Warning: a ``delegate_only`` spec run with ``workbench=False`` gets no guard at all on its
    main thread (``delegate_guard`` comes with the workbench hooks and replaces the whitelist).
    """

    INTERRUPTED = "interrupted-by-human"
    HANDOFF_DUE = "context-full-handoff"
    INTERRUPT_NOTE = zh.INTERRUPT_NOTE  # the spec's; a run sends its language's (engine._lang)

    def __init__(
        self,
        *,
        workspace: str | Path,
        run_dir: str | Path = "runs",
        portable: bool = True,
        trim: TrimPolicy | bool = False,
        ephemeral: EphemeralPolicy | bool = True,
        keep_denials: int = 1,
        workbench: Workbench | bool = False,
        spill_threshold: int | None = 4000,
        resilience: Resilience | bool = True,
        handoff: HandoffPolicy | bool = True,
        env: Mapping[str, str] | None = None,
        own_process_group: bool = False,
        sandbox: Sandbox | None = None,
        database_url: str | None = None,
        spend: SpendGuard | None = None,
    ) -> None:
        self.workspace = Path(workspace).resolve()
        if not self.workspace.is_dir():
            raise ValueError(
                f"Runtime(workspace=...) must be an existing folder; got {str(workspace)!r}. "
                "Create it first or pass another path."
            )
        self.run_dir = Path(run_dir).resolve()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.portable = portable
        self.spill_threshold = spill_threshold
        self.archive = session_archive(self.run_dir, self.workspace, database_url)
        self.store = self.archive.store(
            _policy(trim, TrimPolicy, default_on=False),
            _policy(ephemeral, EphemeralPolicy, default_on=True),
            PrunePolicy(keep_denials=keep_denials),
        )
        if workbench is True:
            workbench = Workbench(self.workspace, home=self.run_dir / "workbench")
        self.workbench: Workbench | None = workbench or None
        if self.workbench is not None:
            self.workbench.ensure()
        self.resilience = _policy(resilience, Resilience, default_on=True)
        self.handoff = _policy(handoff, HandoffPolicy, default_on=True)
        self.results: list[StepResult] = []
        self.manifest = Manifest(self.run_dir / MANIFEST_FILE)
        # Set by Workflow around ``run`` only, so a judge's session never enters the lineage.
        self.on_session: Callable[[str], None] | None = None
        self._inflight: StepResult | None = None
        self._label: Label | None = None
        self._stops: asyncio.Queue[str] | None = None
        self._said = Said()
        self._ctx = 0
        self._warned = False
        self._storm = False  # a transient storm outlasted the retry budget (Resilience.wait_out_storms)
        self.env = None if env is None else dict(env)
        self.own_process_group = own_process_group
        self.sandbox = sandbox
        self.meter = SpendMeter(spend)
        check_credentials(self.env)
        signals.watch(self)  # rescued on SIGTERM/SIGHUP once a host installs the handlers

    # -- public helpers ------------------------------------------------------------------------

    def has_session(self, session_id: str) -> bool:
        """Whether ``session_id``'s transcript is in this runtime's archive (``sessions.db``, or
        the database under this workspace's project key) with a message in it, so it can be resumed."""
        return self.archive.has_session(session_id)

    @property
    def running(self) -> bool:
        """True while a step is in flight."""
        return self._inflight is not None

    def interrupt(self, said: str, images: Sequence[Image] = ()) -> bool:
        """Deliver a person's words, and the images they shared with them, to the running step: it
        stops at a message boundary and the same session resumes with ``said`` + ``INTERRUPT_NOTE``
        and the images after them (as ``run`` sends a step's). Safe to call from any task of the
        runtime's event loop. Returns False when no step is running or nothing was said.
        """
        if self._stops is None or not self._said.add(said, images):
            return False
        self._stops.put_nowait(self.INTERRUPTED)
        return True

    @property
    def step_in_flight(self) -> str | None:
        """The manifest label of the step running now (``干活#round2``, ``干活·判定#1``), else None."""
        return self._inflight.step if self._inflight is not None else None

    @property
    def label_in_flight(self) -> Label | None:
        """Whose session is running now (its name, role and round), else None."""
        return self._label if self._inflight is not None else None

    def rescue(self) -> None:
        """Record the in-flight step in the manifest as ``killed-by-signal`` (signal handlers)."""
        if self._inflight is not None:
            self._inflight.error = "killed-by-signal"
            self._inflight.ended_at = time.time()
            self.manifest.write([*self.results, self._inflight])

    def close(self) -> None:
        """Close storage. Safe to call more than once, with or without a running event loop."""
        signals.forget(self)
        self.store.close()

    # -- the one verb -------------------------------------------------------------------------

    async def run(
        self,
        spec: AgentSpec,
        prompt: str,
        *,
        step_name: str | Label | None = None,
        resume: str | None = None,
        fork: bool = False,
        resume_at: str | None = None,
        on_event: OnEvent | None = None,
        images: Sequence[Image] = (),
    ) -> StepResult:
        """Run one step to success or a final failure; see this module's docstring.

        ``step_name`` is the manifest label, or a ``Label`` saying whose session this is: every
        event of the step then carries its name, role and round (and so does its manifest row).
        ``images`` follow ``prompt`` in its user message (``engine.Image``), each named; they are
        sent with every prompt that opens a session for the step (the first, a fresh start after
        a failure that left no session, a handoff's new session), never again to a session that
        was shown them (a retry or a person's interruption resumes it with new words only)."""
        label = step_name if isinstance(step_name, Label) else Label(step_name or spec.name)
        name = str(label)
        on_event, self._label = stamped(on_event, label), label
        self._ctx, self._warned = 0, False
        result = StepResult(step=name, started_at=time.time(), session_id=resume, role=label.role,
                            round=label.round)
        self._inflight, self._stops, self._said = result, asyncio.Queue(), Said(images)
        session, fork_cur, at_cur, prompt_cur, shown = resume, fork, resume_at, prompt, tuple(images)
        attempt = 0
        try:
            while not self.meter.stopped():  # a limit reached before the step: it does not start
                attempt += 1
                result.attempts = max(result.attempts, attempt)
                out = await self._attempt(spec, prompt_cur, result, session, fork_cur, at_cur, on_event,
                                          images=shown)
                session = out.session_id or session
                fork_cur, at_cur = False, None
                if out.error is None:  # exit 1: success
                    result.ok, result.text, result.error, result.error_kind = True, out.text, None, None
                    self._api_answered(name, on_event)
                    break
                result.error, result.error_kind = out.error, out.error_kind
                if out.error == SPEND_LIMIT or out.error_kind == OVERRAN:
                    break  # a front end's limit, or a workspace that stalls the host: a retry meets it again
                if out.error == self.INTERRUPTED:  # exit 2: a person spoke; not a failed attempt
                    if not session:
                        break
                    said, shown = self._said.take()
                    said = said or words().INTERRUPTED_SAID
                    emit(on_event, Interrupted(name, said=said, images=tuple(i.name for i in shown)))
                    prompt_cur, attempt = said + words().INTERRUPT_NOTE, attempt - 1
                    continue
                if out.error == self.HANDOFF_DUE or (
                    self.handoff.enabled and session and is_overflow(out.error)
                ):  # exit 3: context full; not a failed attempt either
                    if len(result.retired) >= self.handoff.max_generations:
                        result.error = (
                            f"context filled {len(result.retired)} times (HandoffPolicy."
                            f"max_generations={self.handoff.max_generations}); stopped. Raise "
                            "max_generations or split the task."
                        )
                        break
                    h = await write_handoff(
                        self._handoff_turn(spec, result, session), name, session, prompt,
                        used=self._ctx, window=self.handoff.window, workbench=self.workbench,
                        degrade_why="" if out.error == self.HANDOFF_DUE else out.error,
                        on_event=on_event,
                    )
                    result.retired.append(session)
                    session, prompt_cur, shown = None, h.prompt_block(), tuple(self._said.shared)
                    self._ctx, self._warned, attempt = 0, False, attempt - 1
                    continue
                result.errors.append(out.error)  # exit 4: retry, wait a storm out, or give up
                del result.errors[:-MAX_ERRORS_KEPT]
                if out.limit:
                    break
                said = failure_text(out.error, out.error_kind)
                if self._may_retry(attempt, said):
                    await self._back_off(name, attempt, out.error, on_event)
                elif self._storming(said):
                    await self._wait_storm(name, attempt, out.error, on_event)
                else:
                    break
                if session:  # the session was shown the prompt and its images: it goes on without them
                    prompt_cur, result.resumed = self.resilience.resume_prompt or words().RESUME_PROMPT, True
                    shown = ()
            if self.meter.why:
                result.ok, result.error, result.error_kind = False, self.meter.why, SPEND_LIMIT
        finally:
            result.session_id = session or result.session_id
            result.context = self._ctx
            result.ended_at = time.time()
            self._inflight, self._stops = None, None
            self.results.append(result)
            self.manifest.write(self.results)
        return result

    # -- internals -------------------------------------------------------------------------------

    def _may_retry(self, attempt: int, error: str) -> bool:
        r = self.resilience
        return r.enabled and attempt < r.max_attempts and r.should_retry(error)

    async def _back_off(self, name: str, attempt: int, error: str, on_event: OnEvent | None) -> None:
        r = self.resilience
        delay = r.delay_for(attempt)
        emit(on_event, RetryScheduled(
            name, attempt=attempt, max_attempts=r.max_attempts, delay_s=round(delay, 2),
            failure=r.classify(error), error=error[:500]))
        await self._pause(name, delay, on_event)

    def _storming(self, error: str) -> bool:
        r = self.resilience
        return r.enabled and r.wait_out_storms and r.classify(error) == "transient"

    async def _wait_storm(self, name: str, attempt: int, error: str, on_event: OnEvent | None) -> None:
        """Past the retry budget in a transient storm: say so once, then try every ``max_delay``."""
        r = self.resilience
        if not self._storm:
            self._storm = True
            emit(on_event, WaitingForApi(name, phase="waiting", failures=attempt, every_s=r.max_delay,
                                         error=error[:500]))
        await self._pause(name, r.max_delay * random.uniform(0.75, 1.25), on_event)

    async def _pause(self, name: str, delay: float, on_event: OnEvent | None) -> None:
        """Wait for the model's endpoint to be reachable, then ``delay`` seconds."""
        online = await self.resilience.wait_online(
            on_wait=lambda host, port, waited: emit(on_event, WaitingOnline(
                name, host=host, port=port, waited_s=round(waited, 1))),
        )
        if online:
            await asyncio.sleep(delay)

    def _api_answered(self, name: str, on_event: OnEvent | None) -> None:
        if self._storm:
            self._storm = False
            emit(on_event, WaitingForApi(name, phase="back"))

    def _handoff_turn(self, spec: AgentSpec, result: StepResult, session: str | None):
        """The retiring session's handoff turn: no budget cap (it must get written), no events."""
        async def turn(prompt: str) -> tuple[str | None, str]:
            out = await self._attempt(replace(spec, max_budget_usd=None), prompt, result, session,
                                      False, None, None, watch_context=False)
            return out.error, out.text
        return turn

    def _setting(self) -> Setting:
        return Setting(workspace=self.workspace, store=self.store, portable=self.portable,
                       workbench=self.workbench, spill_threshold=self.spill_threshold,
                       handoff_on=self.handoff.enabled, env=self.env, own_group=self.own_process_group,
                       run_dir=self.run_dir, sandbox=self.sandbox)

    def _on_context(self, name: str, on_event: OnEvent | None, watch: bool):
        def check(tokens: int) -> str | None:
            self._api_answered(name, on_event)
            self._ctx = tokens
            emit(on_event, TurnEnded(name, context=tokens))
            if not (watch and self.handoff.enabled):
                return None
            if tokens >= self.handoff.warn_at and not self._warned:
                self._warned = True  # once per generation, even when one turn jumps past `at`
                emit(on_event, HandoffEvent(
                    name, phase="near", used=tokens, due_at=self.handoff.at, window=self.handoff.window))
            return self.HANDOFF_DUE if tokens >= self.handoff.at else None
        return check

    async def _attempt(
        self,
        spec: AgentSpec,
        prompt: str,
        result: StepResult,
        session: str | None,
        fork: bool,
        resume_at: str | None,
        on_event: OnEvent | None,
        *,
        watch_context: bool = True,
        images: Sequence[Image] = (),
    ) -> AttemptOutcome:
        base_cost = result.cost_usd
        self.meter.attempt()

        def on_session(sid: str) -> None:
            result.session_id = sid
            if self.on_session is not None:
                self.on_session(sid)
            emit(on_event, SessionStarted(result.step, session_id=sid))

        def on_result(out: AttemptOutcome) -> None:
            self.meter.result(out.cost_usd)
            result.cost_usd = base_cost + out.cost_usd
            emit(on_event, ResultReported(result.step, cost_usd=round(result.cost_usd, 6), num_turns=out.num_turns,
                                          tokens=out.tokens, model=out.model))

        hooks = AttemptHooks(
            on_session=on_session,
            on_context=self._on_context(result.step, on_event, watch_context),
            on_result=on_result,
            on_message=self.meter.message,
            stop_requests=self._stops if watch_context and self._stops else asyncio.Queue(),
        )
        options, overran = await prepared_options(self._setting(), spec, session, fork, resume_at,
                                                  hooks.stop_requests)
        if options is None:  # building the workbench's index overran: the step fails, saying why
            return AttemptOutcome(error=overran[0], error_kind=OVERRAN)
        out = await run_attempt(options, prompt, hooks, images=images)
        if out.stopped is not None and out.stopped in overran:
            out.error_kind = OVERRAN
        result.cost_usd = base_cost + out.cost_usd
        result.num_turns += out.num_turns
        return out

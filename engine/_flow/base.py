"""Workflow and Step: steps run in order, state passes between them in ``ctx``.

The private keys ``run()`` writes into ``ctx`` all start with ``_`` so they never collide with
step names:

- ``_runtime``, ``_channel``, ``_workbench``, ``_on_event``: what the steps' gates may use;
- ``_results``: step name -> its last ``StepResult`` (written whether the step passed or not);
- ``_sessions``: step name -> session id; ``_lineage``: the ``Lineage`` (continuous runs);
- ``_woke``: which wake this is (1 on the first run of a directory);
- ``_aborted``: the message of a gate's ``StepAbort``; ``_failed``: the step that stopped the
  workflow; ``_ok``: True when every step that ran passed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from engine._lang import speaking, words
from engine._agents.spec import AgentSpec
from engine._errors import FlowerError
from engine._events import Label, OnEvent, StepStarted, WorkflowDone, emit
from engine._media.image import Image
from engine._run.lineage import LINEAGE_FILE, Lineage
from engine._run.manifest import StepResult
from engine._run.resilience import classify, failure_text

if TYPE_CHECKING:
    from engine._run.runtime import Runtime

Ctx = dict[str, Any]
OnFail = Literal["stop", "continue", "ask"]
ON_FAIL_VALUES = ("stop", "continue", "ask")

# The three answers of on_fail="ask".


class StepAbort(FlowerError):
    """Raised by a gate: stop now, retrying cannot help (``False`` means "not this time")."""


@dataclass
class Step:
    """The declaration of one step; ``Runtime.run(step.spec, prompt, ...)`` does the work.

    ``on_fail``: ``"stop"`` (default; the workflow ends), ``"continue"`` (the next step runs, the
    failure stays in ``ctx["_results"]``), ``"ask"`` (the workflow's channel asks a person:
    retry, continue or stop). Sessions connect three ways: fresh (``resume_from=None``),
    continue an earlier step's session (``resume_from="<step>"``), or branch from it
    (``fork=True``). With ``on_reject`` a rejected attempt continues the rejected session with
    the returned prompt (an empty string, or no session id, falls back to starting over).
    ``images`` go with the step's own prompt (``Runtime.run(images=...)``) whenever it is sent,
    never with an ``on_reject`` follow-up: that session was shown them.
    """

    name: str
    spec: AgentSpec
    prompt: str | Callable[[Ctx], str]
    resume_from: str | None = None
    fork: bool = False
    retries: int = 0
    gate: Callable[[StepResult, Ctx], Any] | None = None
    on_fail: str = "stop"
    when: Callable[[Ctx], bool] | None = None
    on_reject: Callable[[StepResult, Ctx], str] | None = None
    resume_prompt: str | Callable[[Ctx], str] | None = None
    reduce: Callable[[StepResult, Ctx], str] | None = None
    images: Sequence[Image] = ()

    def __post_init__(self) -> None:
        if self.on_fail not in ON_FAIL_VALUES:
            raise ValueError(
                f"Step {self.name!r}: on_fail must be one of {', '.join(ON_FAIL_VALUES)}; "
                f"got {self.on_fail!r}."
            )


def _text(value: str | Callable[[Ctx], str], ctx: Ctx) -> str:
    return value(ctx) if callable(value) else value


def _label(name: str, attempt: int, rounds: bool) -> Label:
    """Attempt ``attempt`` (0-based) of step ``name``: its round (1-based) when it has rounds, else its retry."""
    return Label(name, round=attempt + 1) if rounds else Label(name, retry=attempt)


@dataclass
class Workflow:
    """Runs ``steps`` in order and returns the final ``ctx``; continuity is on by default.

    With ``continuous=True`` a step with ``resume_from=None`` resumes the session the same-named
    step used in an earlier process (from ``<run_dir>/lineage.json``), sending its
    ``resume_prompt`` when it has one. ``continuous=False`` starts every process fresh.
    """

    steps: list[Step]
    name: str = "workflow"
    context: Ctx = field(default_factory=dict)
    channel: Any = None
    workbench: Any = None
    continuous: bool = True
    language: str | None = None  # runs in this language (``engine._lang``); None: the one in effect

    async def run(
        self,
        runtime: "Runtime",
        *,
        on_event: OnEvent | None = None,
        on_step: Callable[[Step, StepResult], None] | None = None,
    ) -> Ctx:
        with speaking(self.language) if self.language else nullcontext():
            return await self._run(runtime, on_event, on_step)

    async def _run(self, runtime: "Runtime", on_event: OnEvent | None,
                   on_step: Callable[[Step, StepResult], None] | None) -> Ctx:
        ctx: Ctx = self.context
        if self.channel is not None and getattr(self.channel, "on_event", False) is None:
            self.channel.on_event = on_event  # questions reach the same front end as progress
        ctx.update(_runtime=runtime, _channel=self.channel, _on_event=on_event,
                   _workbench=self.workbench or runtime.workbench, _results={}, _sessions={})
        lineage = None
        if self.continuous:
            lineage = Lineage(runtime.run_dir / LINEAGE_FILE, runtime.workspace,
                              has_session=runtime.has_session)
            ctx["_woke"] = lineage.wake()
        else:
            ctx["_woke"] = 1
        ctx["_lineage"] = lineage
        ctx["_ok"] = True
        index = 0
        while index < len(self.steps):
            step = self.steps[index]
            if step.when is not None and not step.when(ctx):
                index += 1
                continue
            passed, result = await self._run_step(step, index, ctx, runtime, lineage, on_event)
            if on_step is not None:
                on_step(step, result)
            if passed:
                index += 1
                continue
            decision = step.on_fail
            if _fatal(result):
                decision = "stop"  # nor can asking whether to retry it
            if decision == "ask":
                decision = await self._ask_on_fail(step, ctx)
            if decision == "retry":
                continue
            if decision == "continue":
                index += 1
                continue
            ctx["_ok"], ctx["_failed"] = False, step.name
            break
        if ctx.get("_failed") is None and any(not r.ok for r in ctx["_results"].values()):
            ctx["_ok"] = False
        emit(on_event, WorkflowDone(self.name, ok=ctx["_ok"], failed=ctx.get("_failed"),
                                    aborted=ctx.get("_aborted")))
        return ctx

    async def _run_step(self, step, index, ctx, runtime, lineage, on_event):
        resume = ctx["_sessions"].get(step.resume_from) if step.resume_from else None
        fork = step.fork and resume is not None
        prompt = _text(step.prompt, ctx)
        woken = None
        if step.resume_from is None and lineage is not None:
            woken = lineage.session_of(step.name)
        if woken:
            resume, fork = woken, False
            if step.resume_prompt is not None:
                prompt = _text(step.resume_prompt, ctx)
        emit(on_event, StepStarted(step.name, index=index, total=len(self.steps), name=step.name,
                                   resumed=resume is not None, woke=ctx["_woke"]))
        prompt_cur, resume_cur, fork_cur, images = prompt, resume, fork, tuple(step.images)
        passed, result = False, StepResult(step=step.name)
        ctx.pop("_aborted", None)
        for attempt in range(step.retries + 1):

            def remember(sid: str) -> None:
                ctx["_sessions"][step.name] = sid
                if lineage is not None:
                    lineage.remember(step.name, sid)  # the step's own name, never a label

            runtime.on_session = remember
            try:
                result = await runtime.run(
                    step.spec, prompt_cur, step_name=_label(step.name, attempt, step.on_reject is not None),
                    resume=resume_cur, fork=fork_cur, on_event=on_event, images=images)
            finally:
                runtime.on_session = None  # before the gate: the judge must not enter the lineage
            ctx["_results"][step.name] = result
            if result.session_id:
                remember(result.session_id)
            if _fatal(result):
                break  # a refused key, an unknown model: trying the step again cannot help
            if result.ok:
                try:
                    verdict = step.gate(result, ctx) if step.gate is not None else True
                    passed = bool(await verdict if inspect.isawaitable(verdict) else verdict)
                except StepAbort as exc:
                    ctx["_aborted"], passed = str(exc), False
                    break
            if passed:
                break
            follow = step.on_reject(result, ctx) if step.on_reject and result.ok else ""
            if follow and result.session_id:
                prompt_cur, resume_cur, fork_cur, images = follow, result.session_id, False, ()
            else:
                prompt_cur, resume_cur, fork_cur, images = prompt, resume, fork, tuple(step.images)
        if passed:
            ctx[step.name] = step.reduce(result, ctx) if step.reduce else result.text
        return passed, result

    async def _ask_on_fail(self, step: Step, ctx: Ctx) -> str:
        if self.channel is None:
            return "stop"
        result = ctx["_results"].get(step.name)
        why = ctx.get("_aborted") or (result.error if result else "") or "the gate did not pass"
        w = words()
        answer = await self.channel.ask(
            w.STEP_FAILED_QUESTION.format(step=step.name, why=why),
            options=[w.ASK_RETRY, w.ASK_CONTINUE, w.ASK_STOP],
        )
        if getattr(answer, "state", "") != "answered":
            return "stop"
        text = (answer.text or "").strip()
        return {w.ASK_RETRY: "retry", w.ASK_CONTINUE: "continue"}.get(text, "stop")


def _fatal(result: StepResult) -> bool:
    """A failure no retry can mend (a refused key, an unknown model)."""
    return not result.ok and classify(failure_text(result.error, result.error_kind)) == "fatal"

"""The ready-made steps: confirm the requirement, set the goal, and guard a step with the goal.

ctx keys these steps share (all private, starting with ``_``): ``BRIEF_KEY`` the frozen
``Brief``, ``GOAL_KEY`` the frozen ``Goal``, ``VERDICT_KEY`` the last ``Verdict``, ``ROUND_KEY``
the judge's round counter, ``MISSING_KEY`` the sections a rejected answer lacked.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from engine._agents.spec import AgentSpec
from engine._events import Label, TaskWarning, VerdictGiven, emit
from engine._run.manifest import StepResult
from engine._agents.roles import clarify, judge
from engine._docs.brief import Brief
from engine._docs.goal import Goal
from engine._docs.verdict import Verdict
from engine._flow.base import Ctx, Step, StepAbort
from engine._lang import words, zh

BRIEF_KEY = "_brief"
GOAL_KEY = "_goal"
VERDICT_KEY = "_verdict"
ROUND_KEY = "_round"
MISSING_KEY = "_missing"

# The prompts and questions are in the language tables (``engine._lang``); these two names are
# the spec's public constants (its Chinese texts).
CLARIFY_RESUME = zh.CLARIFY_RESUME
VERIFY_PROMPT = zh.VERIFY_PROMPT


def _resend(result: StepResult, ctx: Ctx) -> str:
    missing = ctx.get(MISSING_KEY) or []
    w = words()
    return w.RESEND_MISSING.format(missing=w.MISSING_JOIN.join(missing)) if missing else ""


def clarify_step(
    channel: Any,
    *,
    brief_path: str | Path,
    prompt: str | Callable[[Ctx], str],
    name: str | None = None,
    spec: AgentSpec | None = None,
    instructions: str = "",
    always_ask: bool = False,
    on_fail: str = "stop",
    retries: int = 0,
    **spec_kw: Any,
) -> Step:
    """Clarify the request -> ``Brief`` -> frozen to ``brief_path`` once all four sections exist.

    Skipped when the brief on disk is complete (and still injected into ctx, or later steps
    would not get the requirement). A rejected answer is sent back to the same session with
    the missing sections named. The next step is a NEW session that only sees the brief: the
    Q&A never enters the coordinator's context.
    """
    name = name or words().CLARIFY_STEP
    spec = spec or clarify(name, channel, instructions=instructions, **spec_kw)

    def inject(ctx: Ctx, brief: Brief) -> None:
        ctx[BRIEF_KEY], ctx[name] = brief, brief.prompt_block()
        ctx.pop(MISSING_KEY, None)

    def when(ctx: Ctx) -> bool:
        if always_ask:
            return True
        brief = Brief.load(brief_path)
        if brief is not None and brief.complete():
            inject(ctx, brief)
            return False
        return True

    def gate(result: StepResult, ctx: Ctx) -> bool:
        brief = Brief.parse(result.text)
        if not brief.complete():
            ctx[MISSING_KEY] = brief.missing()
            return False
        old = Brief.load(brief_path)
        if old is not None and getattr(old, "extra", ""):
            brief.extra = old.extra  # amendments said on wake stay with the brief
        brief.write(brief_path)
        inject(ctx, brief)
        return True

    return Step(
        name, spec, prompt, retries=retries, gate=gate, on_fail=on_fail, when=when,
        on_reject=_resend, resume_prompt=words().CLARIFY_RESUME,
        reduce=lambda result, ctx: ctx[BRIEF_KEY].prompt_block(),
    )


def goal_step(
    channel: Any,
    *,
    goal_path: str | Path,
    brief_key: str | None = None,
    name: str | None = None,
    spec: AgentSpec | None = None,
    instructions: str = "",
    always_set: bool = False,
    on_fail: str = "stop",
    retries: int = 0,
    **spec_kw: Any,
) -> Step:
    """The judge reads the brief and writes the goal + checklist, frozen to ``goal_path``.

    No ``resume_prompt``: re-deriving the checklist needs the whole brief again. Pass
    ``can_run=True`` through ``spec_kw`` to let this judge run commands. Checks marked
    unverifiable raise a ``task`` event at once: their fate is sealed when the goal is set, and
    by the verdict a whole round of work would already be paid for.
    """
    name, brief_key = name or words().GOAL_STEP, brief_key or words().CLARIFY_STEP
    spec = spec or judge(name, channel, instructions=instructions, **spec_kw)
    goal_prompt = words().GOAL_PROMPT

    def inject(ctx: Ctx, goal: Goal) -> None:
        ctx[GOAL_KEY], ctx[name] = goal, goal.prompt_block()
        ctx.pop(MISSING_KEY, None)

    def prompt(ctx: Ctx) -> str:
        brief = ctx.get(brief_key) or (ctx[BRIEF_KEY].prompt_block() if BRIEF_KEY in ctx else "")
        return goal_prompt.format(brief=brief)

    def when(ctx: Ctx) -> bool:
        if always_set:
            return True
        goal = Goal.load(goal_path)
        if goal is not None and goal.complete():
            inject(ctx, goal)
            return False
        return True

    def gate(result: StepResult, ctx: Ctx) -> bool:
        goal = Goal.parse(result.text)
        if not goal.complete():
            ctx[MISSING_KEY] = goal.missing()
            return False
        goal.write(goal_path)
        inject(ctx, goal)
        if goal.unverifiable():
            emit(ctx.get("_on_event"), TaskWarning(
                name, unverifiable=tuple(goal.unverifiable()), total=len(goal.checks),
                path=str(goal_path)))
        return True

    return Step(name, spec, prompt, retries=retries, gate=gate, on_fail=on_fail, when=when,
                on_reject=_resend)


def with_goal(
    step: Step,
    channel: Any,
    *,
    goal_path: str | Path,
    spec: AgentSpec | None = None,
    rounds: int = 3,
    instructions: str = "",
    can_run: bool = False,
    name: str | None = None,
    **spec_kw: Any,
) -> Step:
    """Wrap ``step`` with the goal guard: after each round an independent judge gives a verdict.

    The judge runs through ``rt.run`` with ``resume=None`` every round: always a new session,
    never in the lineage (a judge that continued would degrade into self-audit). Ambiguous
    verdicts count as not achieved. An unreachable verdict asks a person (accept / amend the
    goal / "you judged wrong"); nobody answering aborts, spinning on is the costliest choice.
    Built with ``dataclasses.replace`` so every other field, ``resume_prompt`` included, stays.
    """
    w = words()  # the language the flow is built in; the gate below runs later, maybe elsewhere
    label = name or w.JUDGE_LABEL.format(step=step.name)
    judger = spec or judge(label, channel, instructions=instructions, can_run=can_run, **spec_kw)

    async def gate(result: StepResult, ctx: Ctx) -> bool:
        rt = ctx.get("_runtime")
        if rt is None:
            raise StepAbort(w.NO_RUNTIME)
        ctx[ROUND_KEY] = ctx.get(ROUND_KEY, 0) + 1
        goal = ctx.get(GOAL_KEY)
        if not (isinstance(goal, Goal) and goal.complete()):
            goal = Goal.load(goal_path) or Goal()
        on_event = ctx.get("_on_event")
        judged = await rt.run(
            judger, w.VERIFY_PROMPT.format(goal=goal.prompt_block(), report=result.text or w.NO_REPORT),
            step_name=Label(label, role="judge", round=ctx[ROUND_KEY]), on_event=on_event)
        verdict = Verdict.parse(judged.text if judged.ok else "")
        ctx[VERDICT_KEY] = verdict
        emit(on_event, VerdictGiven(
            step.name, name=label, role="judge", round=ctx[ROUND_KEY], state=verdict.state or "unclear",
            reason=verdict.reason, failed=tuple(verdict.failed), error=judged.error))
        if verdict.achieved:
            return True
        if not verdict.unreachable:
            if not verdict.ok:
                verdict.reason = verdict.reason or judged.error or w.AMBIGUOUS_REASON
            return False
        answer = await channel.ask(
            w.UNREACHABLE_QUESTION.format(reason=verdict.reason or w.NO_REASON),
            options=[w.ACCEPT, w.AMEND_GOAL, w.JUDGED_WRONG], asked_by=label)
        if answer.state != "answered":
            raise StepAbort(w.UNREACHABLE_UNANSWERED.format(state=answer.state))
        if answer.text == w.ACCEPT:
            return True
        if answer.text == w.AMEND_GOAL:
            new = await channel.ask(w.NEW_GOAL_QUESTION, asked_by=label)
            if new.state != "answered" or not new.text.strip():
                raise StepAbort(w.NO_NEW_GOAL)
            goal = goal.amend(new.text)
            goal.write(goal_path)
            ctx[GOAL_KEY] = goal
            verdict.reason = w.GOAL_AMENDED.format(said=new.text)
            return False
        verdict.reason = w.JUDGED_WRONG_REASON.format(said=answer.text)
        return False

    def on_reject(result: StepResult, ctx: Ctx) -> str:
        verdict = ctx.get(VERDICT_KEY)
        return verdict.feedback() if isinstance(verdict, Verdict) else ""

    return replace(step, retries=max(0, rounds - 1), gate=gate, on_reject=on_reject)

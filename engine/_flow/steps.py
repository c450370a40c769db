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
from engine._events import TaskWarning, VerdictGiven, emit
from engine._run.manifest import StepResult
from engine._agents.roles import clarify, judge
from engine._docs.brief import Brief
from engine._docs.goal import Goal
from engine._docs.verdict import Verdict
from engine._flow.base import Ctx, Step, StepAbort

BRIEF_KEY = "_brief"
GOAL_KEY = "_goal"
VERDICT_KEY = "_verdict"
ROUND_KEY = "_round"
MISSING_KEY = "_missing"

CLARIFY_RESUME = "继续刚才没做完的需求确认,接着问或者直接给出四节需求——不要从头再来。"
RESEND_MISSING = "你的回复缺少这几节:{missing}。按规定的格式重新给出完整的回复,每节都要有内容。"
GOAL_PROMPT = "读下面的需求,设定目标和判定清单。\n\n{brief}"
VERIFY_PROMPT = (
    "判定这一轮的工作是否达成目标。自己去看工作区里的文件和结果,执行者的汇报只是线索。\n\n"
    "{goal}\n\n## 执行者这一轮的汇报\n{report}"
)
UNREACHABLE_QUESTION = "判定者认为这个目标在当前环境下达不成或验证不了:\n{reason}\n\n怎么办?"
ACCEPT, AMEND_GOAL, JUDGED_WRONG = "接受这个结果,就这样往下走", "修改目标", "你判错了,继续做"
NEW_GOAL_QUESTION = "新的目标是什么?(一句话,会加进目标和判定清单)"
AMBIGUOUS_REASON = "判定含糊,没有明确结论;按未达成处理。"


def _resend(result: StepResult, ctx: Ctx) -> str:
    missing = ctx.get(MISSING_KEY) or []
    return RESEND_MISSING.format(missing="、".join(missing)) if missing else ""


def clarify_step(
    channel: Any,
    *,
    brief_path: str | Path,
    prompt: str | Callable[[Ctx], str],
    name: str = "确认需求",
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
        on_reject=_resend, resume_prompt=CLARIFY_RESUME,
        reduce=lambda result, ctx: ctx[BRIEF_KEY].prompt_block(),
    )


def goal_step(
    channel: Any,
    *,
    goal_path: str | Path,
    brief_key: str = "确认需求",
    name: str = "设定目标",
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
    spec = spec or judge(name, channel, instructions=instructions, **spec_kw)

    def inject(ctx: Ctx, goal: Goal) -> None:
        ctx[GOAL_KEY], ctx[name] = goal, goal.prompt_block()
        ctx.pop(MISSING_KEY, None)

    def prompt(ctx: Ctx) -> str:
        brief = ctx.get(brief_key) or (ctx[BRIEF_KEY].prompt_block() if BRIEF_KEY in ctx else "")
        return GOAL_PROMPT.format(brief=brief)

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
    label = name or f"{step.name}·判定"
    judger = spec or judge(label, channel, instructions=instructions, can_run=can_run, **spec_kw)

    async def gate(result: StepResult, ctx: Ctx) -> bool:
        rt = ctx.get("_runtime")
        if rt is None:
            raise StepAbort("拿不到 Runtime,无法判定目标")
        ctx[ROUND_KEY] = ctx.get(ROUND_KEY, 0) + 1
        goal = ctx.get(GOAL_KEY)
        if not (isinstance(goal, Goal) and goal.complete()):
            goal = Goal.load(goal_path) or Goal()
        on_event = ctx.get("_on_event")
        judged = await rt.run(
            judger, VERIFY_PROMPT.format(goal=goal.prompt_block(), report=result.text or "(无)"),
            step_name=f"{label}#{ctx[ROUND_KEY]}", on_event=on_event)
        verdict = Verdict.parse(judged.text if judged.ok else "")
        ctx[VERDICT_KEY] = verdict
        emit(on_event, VerdictGiven(
            step.name, round=ctx[ROUND_KEY], state=verdict.state or "unclear",
            reason=verdict.reason, failed=tuple(verdict.failed), error=judged.error))
        if verdict.achieved:
            return True
        if not verdict.unreachable:
            if not verdict.ok:
                verdict.reason = verdict.reason or judged.error or AMBIGUOUS_REASON
            return False
        answer = await channel.ask(
            UNREACHABLE_QUESTION.format(reason=verdict.reason or "(没有给出理由)"),
            options=[ACCEPT, AMEND_GOAL, JUDGED_WRONG], asked_by=label)
        if answer.state != "answered":
            raise StepAbort(f"目标判定为达不成,没人回答怎么办({answer.state});停下。")
        if answer.text == ACCEPT:
            return True
        if answer.text == AMEND_GOAL:
            new = await channel.ask(NEW_GOAL_QUESTION, asked_by=label)
            if new.state != "answered" or not new.text.strip():
                raise StepAbort("要修改目标,但没拿到新的目标;停下。")
            goal = goal.amend(new.text)
            goal.write(goal_path)
            ctx[GOAL_KEY] = goal
            verdict.reason = f"目标已修改:{new.text}"
            return False
        verdict.reason = f"人认为判定有误:{answer.text}"
        return False

    def on_reject(result: StepResult, ctx: Ctx) -> str:
        verdict = ctx.get(VERDICT_KEY)
        return verdict.feedback() if isinstance(verdict, Verdict) else ""

    return replace(step, retries=max(0, rounds - 1), gate=gate, on_reject=on_reject)

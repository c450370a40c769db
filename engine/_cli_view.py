"""What the ``flower`` command prints: the wake banner, step banners and one line per event.

Without the wake line, "does it remember or not?" is invisible, and that is this layer's whole
value; the context number is there on purpose, so a person can choose to start over before the
context hits the wall.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from engine._events import (
    AskEvent,
    Event,
    HandoffEvent,
    Interrupted,
    RetryScheduled,
    StepStarted,
    TaskWarning,
    VerdictGiven,
    WaitingOnline,
)
from engine._flow.starter import WORK_STEP
from engine._tokens import human_tokens

BANNER_WIDTH = 38


def _home_relative(path: Path) -> str:
    path = path.resolve()
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def wake_banner(workspace: Path, state: dict[str, Any]) -> str:
    """``<- 在 ~/proj 接上上次  需求已确认 · 目标 15 条 · 干活上下文 80.2K · 第 3 次唤醒``.

    ``state`` is ``StarterRun.wake_state()``. 需求已确认 always; 目标 N 条 only with a non-empty
    checklist; the work context only when the last turn's size of that session is known.
    """
    parts = ["需求已确认"]
    if state.get("checks"):
        parts.append(f"目标 {state['checks']} 条")
    if state.get("context"):
        parts.append(f"{WORK_STEP}上下文 {human_tokens(state['context'])}")
    parts.append(f"第 {state.get('woke', 0) + 1} 次唤醒")
    return f"<- 在 {_home_relative(workspace)} 接上上次  " + " · ".join(parts)


def step_banner(event: StepStarted) -> str:
    """``== 干活 ======  3/3  <- 接上次 · 第 3 次唤醒``."""
    head = f"== {event.step} ".ljust(BANNER_WIDTH, "=")
    line = f"{head}  {event.index + 1}/{event.total}"
    if event.resumed:
        line += f"  <- 接上次 · 第 {event.woke} 次唤醒"
    return line


def _handoff_line(e: HandoffEvent) -> str:
    if e.phase == "near":
        due = f",接近交接线 {human_tokens(e.due_at)}" if e.due_at else ""
        return f"  ~ 上下文 {human_tokens(e.used or 0)}{due}"
    if e.phase == "writing":
        return f"  ~ 上下文满了({human_tokens(e.used or 0)}),正在写交接文档"
    tag = "(降级)" if e.degraded else ""
    return f"  ~ 交接完成{tag},新会话接手" + (f":{e.path}" if e.path else "")


def event_line(event: Event) -> str | None:
    """One line for a progress event, or None for events not worth a line in a terminal."""
    match event:
        case StepStarted():
            return step_banner(event)
        case RetryScheduled():
            return (f"  ! 模型暂时不可用,第 {event.attempt}/{event.max_attempts} 次失败,"
                    f"{event.delay_s:.0f}s 后接着同一会话重试")
        case WaitingOnline():
            return f"  ! 连不上 {event.host}:{event.port},已等 {event.waited_s:.0f}s,继续等"
        case HandoffEvent():
            return _handoff_line(event)
        case VerdictGiven():
            failed = "".join(f"\n    - {f}" for f in event.failed)
            return f"  判定 #{event.round}: {event.state}  {event.reason}".rstrip() + failed
        case TaskWarning() if event.unverifiable:
            return (f"  ! 目标里有 {len(event.unverifiable)}/{event.total} 条在这个环境无法验证,"
                    f"见 {event.path}")
        case Interrupted():
            return f"  <- 收到:{event.said}"
        case AskEvent() if event.phase == "cancelled":
            return "  (这个问题撤回了:这一步被打断,带着你的话接着做)"
    return None


class TerminalView:
    """An ``on_event`` callback that prints ``event_line`` to a stream."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, event: Event) -> None:
        line = event_line(event)
        if line:
            print(line, file=self.out, flush=True)

    def summary(self, ctx: dict[str, Any], results: list[Any]) -> None:
        """The last line: achieved or not (and why), and what this process spent on every step,
        judge rounds and retries included."""
        cost = sum(r.cost_usd for r in results)
        state = "达成" if ctx.get("_ok") else "没有达成"
        why = ctx.get("_aborted") or ctx.get("_failed") or ""
        print(f"== 结束:{state}{'(' + why + ')' if why else ''} · ${cost:.2f}", file=self.out)

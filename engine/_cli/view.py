"""What the ``flower`` command prints: the wake banner, step banners and one line per event.

Without the wake line, "does it remember or not?" is invisible, and that is this layer's whole
value; the context number is there on purpose, so a person can choose to start over before the
context hits the wall. The texts are ``engine._cli.cli_texts``'s, in the run's language.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from wcwidth import wcswidth

from engine import Event, RunResult, WakeState
from engine._cli.cli_failure import failure
from engine._cli.cli_texts import say
from engine.events import (
    AskEvent,
    HandoffEvent,
    Interrupted,
    RetryScheduled,
    StepStarted,
    TaskWarning,
    VerdictGiven,
    WaitingForApi,
    WaitingOnline,
)
from engine.host import human_tokens
from engine.lang import starter_step_name

BANNER_WIDTH = 38  # terminal columns of "== <step> ====", whatever script the step's name is in


def _home_relative(path: Path) -> str:
    path = path.resolve()
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def wake_banner(workspace: Path, state: WakeState) -> str:
    """``<- 在 ~/proj 接上上次  需求已确认 · 目标 15 条 · 干活上下文 80.2K · 第 3 次唤醒``.

    ``state`` is ``StarterRun.wake_state()``. The request is confirmed always; the checks only
    with a non-empty checklist; the work context only when the last turn's size of that session
    is known.
    """
    parts = [say("wake_confirmed")]
    if state.checks:
        parts.append(say("wake_checks", n=state.checks))
    if state.context:
        parts.append(say("wake_context", work=starter_step_name("work"), size=human_tokens(state.context)))
    parts.append(say("wake_count", n=state.woke + 1))
    return say("wake_head", where=_home_relative(workspace)) + " · ".join(parts)


def pad(text: str, width: int, fill: str = " ") -> str:
    """``text`` filled with ``fill`` up to ``width`` terminal columns (a CJK character takes two)."""
    used = wcswidth(text)
    used = len(text) if used < 0 else used  # a control character: count code points, as ljust did
    return text + fill * max(0, width - used)


def step_banner(event: StepStarted) -> str:
    """``== 干活 ======  3/3  <- 接上次 · 第 3 次唤醒``, its counter in the same column for any name."""
    line = f"{pad(f'== {event.step} ', BANNER_WIDTH, '=')}  {event.index + 1}/{event.total}"
    if event.resumed:
        line += say("step_resumed", woke=event.woke)
    return line


def _handoff_line(e: HandoffEvent) -> str:
    if e.phase == "near":
        due = say("handoff_due", due_at=human_tokens(e.due_at)) if e.due_at else ""
        return say("handoff_near", used=human_tokens(e.used or 0), due=due)
    if e.phase == "writing":
        return say("handoff_writing", used=human_tokens(e.used or 0))
    tag = say("handoff_degraded") if e.degraded else ""
    return say("handoff_done", tag=tag) + (say("handoff_path", path=e.path) if e.path else "")


def verdict_line(e: VerdictGiven) -> str:
    """``  verdict #2: not yet  <reason>`` and the failed checks below, the state in words."""
    state = say(f"state_{e.state}")
    reason = e.reason or ((e.error or "") if e.state == "unclear" else "")
    failed = "".join(say("verdict_failed", check=f) for f in e.failed)
    return say("verdict", round=e.round, state=state, reason=reason).rstrip() + failed


def event_line(event: Event) -> str | None:
    """One line for a progress event, or None for events not worth a line in a terminal."""
    match event:
        case StepStarted():
            return step_banner(event)
        case RetryScheduled():
            return say("retry", attempt=event.attempt, max_attempts=event.max_attempts,
                       delay=f"{event.delay_s:.0f}")
        case WaitingOnline():
            return say("offline", host=event.host, port=event.port, waited=f"{event.waited_s:.0f}")
        case WaitingForApi():
            if event.phase == "back":
                return say("storm_back")
            return say("storm", failures=event.failures, error=event.error[:120] or "?",
                       every=f"{event.every_s:.0f}")
        case HandoffEvent():
            return _handoff_line(event)
        case VerdictGiven():
            return verdict_line(event)
        case TaskWarning() if event.unverifiable:
            return say("unverifiable", count=len(event.unverifiable), total=event.total, path=event.path)
        case Interrupted():
            return say("interrupted", said=event.said)
        case AskEvent() if event.phase == "cancelled":
            return say("ask_cancelled")
    return None


class TerminalView:
    """An ``on_event`` callback that prints ``event_line`` to a stream."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, event: Event) -> None:
        line = event_line(event)
        if line:
            print(line, file=self.out, flush=True)

    def archived(self, folder: Path | None) -> None:
        """``--new``: where the last run was archived (``StarterRun.archived``), or that there was
        nothing to archive (the folder stayed empty)."""
        if folder is not None and folder.is_dir() and any(folder.iterdir()):
            print(say("archived", path=folder), file=self.out, flush=True)
        else:
            print(say("archived_nothing"), file=self.out, flush=True)

    def summary(self, result: RunResult, results: list[Any], *, rounds: int | None = None) -> None:
        """The last lines: achieved or not and what this process spent on every step (judge
        rounds and retries included); when not, why and what to do next."""
        cost = f"{sum(r.cost_usd for r in results):.2f}"
        if result.ok or result.failure is None:
            print(say("done_achieved", cost=cost), file=self.out)
            return
        print(say("done_not_achieved", cost=cost), file=self.out)
        why = failure(result.failure, rounds=rounds)
        print(say("why", reason=why.reason), file=self.out)
        print(say("next", next=why.next), file=self.out, flush=True)

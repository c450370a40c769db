"""The handoff turn: the full session writes its own handoff document, a new session takes over.

Only the retiring session has the context, so it writes the document (not a new role). Its turn
runs without a budget cap (the handoff must get written) and without UI events. When it cannot
be written (the context already overflowed, the turn failed, the answer lacks sections) a
degraded handoff is built mechanically from the original task.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from engine._agents.spec import AgentSpec
from engine._events import HandoffEvent, OnEvent, emit
from engine._run.manifest import StepResult
from engine._docs.handoff import HANDOFF_PROMPT, Handoff, degraded

if TYPE_CHECKING:
    from engine._run.runtime import Runtime


def _file_stem(step: str) -> str:
    return "".join(c if c.isalnum() or c in "-_·" else "_" for c in step) or "step"


def _store(rt: "Runtime", h: Handoff, step: str) -> str | None:
    """Write ``h`` to ``<notes>/交接-<step>.md``, moving an older one to the archive first."""
    if rt.workbench is None:
        return None  # still handed over through the prompt, just not readable afterwards
    notes = rt.workbench.notes
    path = notes / f"交接-{_file_stem(step)}.md"
    if path.exists():
        archive = notes / "archive" / "交接"
        archive.mkdir(parents=True, exist_ok=True)
        path.replace(archive / f"{_file_stem(step)}-{time.strftime('%Y%m%d-%H%M%S')}.md")
    h.write(path)
    return str(path)


async def write_handoff(
    rt: "Runtime",
    spec: AgentSpec,
    step: str,
    session: str | None,
    task: str,
    *,
    degrade_why: str,
    on_event: OnEvent | None,
    result: StepResult,
) -> Handoff:
    """Have ``session`` write its handoff (unless ``degrade_why``), store it, and return it."""
    emit(on_event, HandoffEvent(step, phase="writing", used=rt._ctx, window=rt.handoff.window))
    handoff: Handoff | None = None
    why = degrade_why
    if not why and session:
        prompt = HANDOFF_PROMPT.format(used=rt._ctx, window=rt.handoff.window)
        out = await rt._attempt(
            replace(spec, max_budget_usd=None), prompt, result, session, False, None,
            None, watch_context=False,
        )
        if out.error is None:
            parsed = Handoff.parse(out.text)
            if parsed.complete():
                handoff = parsed
            else:
                why = "the handoff answer lacked: " + ", ".join(parsed.missing())
        else:
            why = out.error
    if handoff is None:
        handoff = degraded(step, task, why=why or "no session to write it")
    handoff.step = step
    path = _store(rt, handoff, step)
    emit(on_event, HandoffEvent(
        step, phase="done", degraded=bool(getattr(handoff, "degraded", False)), path=path,
        sections=tuple(name for name in ("doing", "decided", "deadends", "next", "scene")
                       if getattr(handoff, name, "")),
        retired=session))
    return handoff

"""The handoff turn: the full session writes its own handoff document, a new session takes over.

Only the retiring session has the context, so it writes the document (not a new role). Its turn
runs without a budget cap (the handoff must get written) and without UI events. When it cannot
be written (the context already overflowed, the turn failed, the answer lacks sections) a
degraded handoff is built mechanically from the original task.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from engine._agents.workbench import Workbench
from engine._beneath import move
from engine._docs.handoff_doc import Handoff, degraded
from engine._lang import words
from engine._events import HandoffEvent, OnEvent, emit

log = logging.getLogger(__name__)

# One more turn of the retiring session with this prompt; returns (error or None, answer text).
HandoffTurn = Callable[[str], Awaitable[tuple[str | None, str]]]


def _file_stem(step: str) -> str:
    return "".join(c if c.isalnum() or c in "-_·" else "_" for c in step) or "step"


def _store(workbench: Workbench | None, h: Handoff, step: str) -> str | None:
    """Write ``h`` to ``<notes>/交接-<step>.md`` (``handoff-<step>.md``), moving an older one to the archive first."""
    if workbench is None:
        return None  # still handed over through the prompt, just not readable afterwards
    notes = workbench.notes
    w = words()
    path = notes / w.HANDOFF_NOTE_FILE.format(step=_file_stem(step))
    archived = notes / "archive" / w.HANDOFF_ARCHIVE / f"{_file_stem(step)}-{time.strftime('%Y%m%d-%H%M%S')}.md"
    try:
        move(workbench.anchor, path, archived)  # beneath the workbench's anchor: no link is followed
        h.write(path, anchor=workbench.anchor)
    except OSError as exc:  # a link the agent put there, or a full disk: the prompt still carries it
        log.warning("could not keep the handoff note %s (%s); it is handed over in the prompt only", path, exc)
        return None
    return str(path)


async def write_handoff(
    turn: HandoffTurn,
    step: str,
    session: str | None,
    task: str,
    *,
    used: int,
    window: int,
    workbench: Workbench | None,
    degrade_why: str,
    on_event: OnEvent | None,
) -> Handoff:
    """Have ``session`` write its handoff through ``turn`` (unless ``degrade_why``), store it in
    ``workbench``'s notes, and return it; ``used`` / ``window`` are the context's tokens."""
    emit(on_event, HandoffEvent(step, phase="writing", used=used, window=window))
    handoff: Handoff | None = None
    why = degrade_why
    if not why and session:
        error, text = await turn(words().HANDOFF_PROMPT.format(used=used, window=window))
        if error is None:
            parsed = Handoff.parse(text)
            if parsed.complete():
                handoff = parsed
            else:
                why = "the handoff answer lacked: " + ", ".join(parsed.missing())
        else:
            why = error
    if handoff is None:
        handoff = degraded(step, task, why=why or "no session to write it")
    handoff.step = step
    path = _store(workbench, handoff, step)
    emit(on_event, HandoffEvent(
        step, phase="done", degraded=bool(getattr(handoff, "degraded", False)), path=path,
        sections=tuple(name for name in ("doing", "decided", "deadends", "next", "scene")
                       if getattr(handoff, name, "")),
        retired=session))
    return handoff

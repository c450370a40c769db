"""The oracle: answer a side question about a running job ("where are we?") from its recent
events and its workbench, in a session of its own that never enters the run's context, its
lineage, its manifest or its session store."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from engine._lang import words
from engine._agents.spec import AgentSpec, build_options
from engine._run.attempt import AttemptHooks, run_attempt
from engine._events import Event
from engine._agents.guard import whitelist_guard
from engine._agents.rules import shared_files_rules
from engine._agents.roles import oracle
from engine._agents.workbench import Workbench
from engine._errors import FlowerError
from engine._file_work import file_work
from engine._run.options import with_rules

RECENT_EVENTS = 40


def _event_line(e: Event) -> str:
    detail = ", ".join(f"{k}={v}" for k, v in e.payload.items() if v not in (None, "", (), [], {}))
    return f"- [{e.kind}] {e.step}: {detail}"[:500]


async def consult(
    question: str,
    *,
    workspace: str | Path,
    events: Sequence[Event] = (),
    workbench: Workbench | None = None,
    spec: AgentSpec | None = None,
) -> str:
    """Answer ``question`` about the run; raises ``FlowerError`` when the oracle fails."""
    spec = spec or oracle()
    recent = "\n".join(_event_line(e) for e in list(events)[-RECENT_EVENTS:]) or words().NO_EVENTS
    wb = workbench if spec.workbench else None
    # the index walks the agent's files: in the run-files pool, never on the event loop
    prelude = "" if wb is None else await file_work(wb.prompt_block, what="building the workbench index")
    opts = build_options(
        spec, cwd=workspace, portable=False,
        prelude=prelude,
        add_dirs=[str(wb.root)] if wb is not None and wb.external else None,
    )
    with_rules(opts, shared_files_rules(workbench or Workbench(Path(workspace))))
    guard = whitelist_guard(spec.allowed_tools, role=spec.name)
    opts.hooks = {"PreToolUse": [guard]} if guard else None
    out = await run_attempt(opts, words().ORACLE_PROMPT.format(events=recent, question=question),
                            AttemptHooks())
    if out.error is not None:
        raise FlowerError(f"the oracle could not answer {question!r}: {out.error}")
    return out.text

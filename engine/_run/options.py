"""The CLI options of one attempt of a step: the spec's own, plus what the runtime adds.

The runtime adds its session store, the workbench's guards and prelude, the tool whitelist, the
switch that keeps the CLI from compacting on its own while handoff is on, and the detached CLI
wrapper for a terminal front end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_agent_sdk import ClaudeAgentOptions

from engine._agents.spec import AgentSpec, build_options
from engine._run.detach import detached_cli
from engine._agents.guard import merge_hooks, whitelist_guard, workbench_hooks

if TYPE_CHECKING:
    from engine._run.runtime import Runtime


def attempt_options(rt: Runtime, spec: AgentSpec, session: str | None, fork: bool,
                    resume_at: str | None) -> ClaudeAgentOptions:
    """``spec``'s options for one attempt in ``rt``'s workspace, resuming ``session`` when given."""
    wb = rt.workbench if spec.workbench else None
    guards = None
    if wb is not None:
        guards = workbench_hooks(
            wb, delegate_only=spec.delegate_only, spill_threshold=rt.spill_threshold,
            agents=spec.agents, allow_glance=spec.glance,
        )
    whitelist = None
    if not spec.delegate_only:  # delegate_guard says "delegate" instead; two voices confuse
        matcher = whitelist_guard(spec.allowed_tools, role=spec.name)
        whitelist = {"PreToolUse": [matcher]} if matcher else None
    opts = build_options(
        spec, cwd=rt.workspace, session_store=rt.store, resume=session, fork=fork,
        resume_at=resume_at, portable=rt.portable,
        prelude=wb.prompt_block() if wb is not None else "",
        add_dirs=[str(wb.root)] if wb is not None and wb.external else None,
    )
    opts.hooks = merge_hooks(spec.hooks, guards, whitelist) or None
    if rt.handoff.enabled and spec.compact is None:
        # Otherwise the CLI answers "prompt is too long" by compacting on its own, and the
        # readable, editable handoff never happens (measured with CLI 2.1.332).
        opts.env.setdefault("DISABLE_AUTO_COMPACT", "1")
    if rt.detach_cli:
        opts.cli_path = str(detached_cli(rt.run_dir))
    return opts

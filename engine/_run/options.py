"""The CLI options of one attempt of a step: the spec's own, plus what the runtime adds.

The runtime adds its session store, the workbench's guards and prelude, the tool whitelist, the
switch that keeps the CLI from compacting on its own while handoff is on, and how the CLI is
launched (the host's environment for it, a process group of its own for a terminal).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from claude_agent_sdk import ClaudeAgentOptions
from claude_agent_sdk.types import SessionStore

from engine._agents.guard import merge_hooks, whitelist_guard, workbench_hooks
from engine._agents.spec import AgentSpec, build_options
from engine._agents.workbench import Workbench
from engine._run.launcher import launch


@dataclass(frozen=True)
class Setting:
    """What a runtime gives every attempt, whatever the step: where, with what, launched how."""

    workspace: Path
    store: SessionStore
    portable: bool
    workbench: Workbench | None
    spill_threshold: int | None
    handoff_on: bool
    env: Mapping[str, str] | None  # None: the host's whole environment (the SDK's default)
    own_group: bool


def attempt_options(setting: Setting, spec: AgentSpec, session: str | None, fork: bool,
                    resume_at: str | None) -> ClaudeAgentOptions:
    """``spec``'s options for one attempt in ``setting``, resuming ``session`` when given."""
    wb = setting.workbench if spec.workbench else None
    guards = None
    if wb is not None:
        guards = workbench_hooks(
            wb, delegate_only=spec.delegate_only, spill_threshold=setting.spill_threshold,
            agents=spec.agents, allow_glance=spec.glance,
        )
    whitelist = None
    if not spec.delegate_only:  # delegate_guard says "delegate" instead; two voices confuse
        matcher = whitelist_guard(spec.allowed_tools, role=spec.name)
        whitelist = {"PreToolUse": [matcher]} if matcher else None
    opts = build_options(
        spec, cwd=setting.workspace, session_store=setting.store, resume=session, fork=fork,
        resume_at=resume_at, portable=setting.portable,
        prelude=wb.prompt_block() if wb is not None else "",
        add_dirs=[str(wb.root)] if wb is not None and wb.external else None,
    )
    opts.hooks = merge_hooks(spec.hooks, guards, whitelist) or None
    if setting.handoff_on and spec.compact is None:
        # Otherwise the CLI answers "prompt is too long" by compacting on its own, and the
        # readable, editable handoff never happens (measured with CLI 2.1.332).
        opts.env.setdefault("DISABLE_AUTO_COMPACT", "1")
    launch(opts, setting.env, own_group=setting.own_group)
    return opts

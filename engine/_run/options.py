"""The CLI options of one attempt of a step: the spec's own, plus what the runtime adds.

The runtime adds its session store, the workbench's guards and prelude, the tool whitelist, the
switch that keeps the CLI from compacting on its own while handoff is on, and how the CLI is
launched (the host's environment for it, a process group of its own for a terminal), and the
sandbox that fences an untrusted workspace in (``sandbox``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shlex
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions
from claude_agent_sdk.types import SessionStore

from engine._agents.guard import isolated, merge_hooks, wants_isolation, whitelist_guard, workbench_hooks
from engine._agents.rules import shared_files_rules
from engine._agents.spec import AgentSpec, build_options
from engine._agents.workbench import Workbench
from engine._run.launcher import key_helper, launch, private_folder, real_cli
from engine._errors import FlowerError
from engine._file_work import file_work
from engine._run.sandbox import Sandbox, cli_view, fence_guard, sandbox_settings


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
    run_dir: Path
    sandbox: Sandbox | None  # None: the workspace is trusted (the person's own, in a terminal)


def attempt_options(setting: Setting, spec: AgentSpec, session: str | None, fork: bool,
                    resume_at: str | None, *, prelude: str = "",
                    on_overrun: Callable[[str], Any] | None = None) -> ClaudeAgentOptions:
    """``spec``'s options for one attempt in ``setting``, resuming ``session`` when given.

    ``prelude`` is the workbench's block (``Workbench.prompt_block()``), built by the caller off
    the event loop: it walks the agent's files (``prepared_options`` does it in the run-files pool).
    ``on_overrun`` hears why a workbench hook's file work was given up (see ``index_guard``)."""
    wb = setting.workbench if spec.workbench else None
    files = shared_files_rules(setting.workbench or Workbench(setting.workspace))
    spec = _telling_workers(spec, files)
    guards = None
    if wb is not None:
        guards = workbench_hooks(
            wb, delegate_only=spec.delegate_only, spill_threshold=setting.spill_threshold,
            agents=spec.agents, allow_glance=spec.glance, on_overrun=on_overrun,
        )
    whitelist = None
    if not spec.delegate_only:  # delegate_guard says "delegate" instead; two voices confuse
        matcher = whitelist_guard(spec.allowed_tools, role=spec.name)
        whitelist = {"PreToolUse": [matcher]} if matcher else None
    opts = build_options(
        spec, cwd=setting.workspace, session_store=setting.store, resume=session, fork=fork,
        resume_at=resume_at, portable=setting.portable,
        prelude=prelude if wb is not None else "",
        add_dirs=[str(wb.root)] if wb is not None and wb.external else None,
    )
    with_rules(opts, files)
    fence = temp = None
    if setting.sandbox is not None:
        temp = _run_temp(Path(os.path.realpath(setting.workspace)))
        fence, own = _fence(setting, wb, temp)
        opts.sandbox = sandbox_settings(fence)  # type: ignore[assignment]
        opts.setting_sources = []  # a workspace's .claude/settings.json may declare hooks: none loaded
    opts.hooks = merge_hooks(
        spec.hooks, guards, whitelist,
        {"PreToolUse": [fence_guard(fence, setting.workspace)]} if fence is not None else None,
    ) or None
    if setting.handoff_on and spec.compact is None:
        # Otherwise the CLI answers "prompt is too long" by compacting on its own, and the
        # readable, editable handoff never happens (measured with CLI 2.1.332).
        opts.env.setdefault("DISABLE_AUTO_COMPACT", "1")
    env, view = setting.env, None
    if fence is not None:
        env = dict(os.environ if env is None else env)
        key = key_helper(env)  # the model key reaches the CLI, never its commands' environment
        if key is not None:
            opts.settings = json.dumps({"apiKeyHelper": f"cat {shlex.quote(str(key))}"})
        env["CLAUDE_CODE_TMPDIR"] = env["TMPDIR"] = str(temp)
        # the CLI's own program and the plugins it loads stay readable in its view, even from a temp folder
        code = [Path(os.path.realpath(real_cli())).parent,
                *(Path(p["path"]) for p in opts.plugins or [] if isinstance(p, dict) and p.get("path"))]
        view = [_bwrap(), *cli_view(fence, writable=own, readable=[*code, *([key] if key else [])],
                                    hidden=[tempfile.gettempdir()])]
    launch(opts, env, own_group=setting.own_group, view=view)
    return opts


async def prepared_options(setting: Setting, spec: AgentSpec, session: str | None, fork: bool, resume_at: str | None,
                           stops: asyncio.Queue[str]) -> tuple[ClaudeAgentOptions | None, list[str]]:
    """``attempt_options`` with the workbench's block built first in the run-files pool (it walks
    the agent's files: never on the event loop), and the reasons file work overran: building the
    block (then there are no options), or later a hook's, whose reason also goes on ``stops`` (the
    attempt stops with it)."""
    wb = setting.workbench if spec.workbench else None
    try:
        prelude = "" if wb is None else await file_work(wb.prompt_block, what="building the workbench index")
    except FlowerError as exc:  # what file_work raises when the call overran
        return None, [str(exc)]
    overran: list[str] = []

    def overrun(why: str) -> None:
        overran.append(why)
        stops.put_nowait(why)

    return attempt_options(setting, spec, session, fork, resume_at, prelude=prelude, on_overrun=overrun), overran


def with_rules(opts: ClaudeAgentOptions, rules: str) -> None:
    """Append ``rules`` to the system prompt ``build_options`` made: after the role's own rules,
    which stay first (the spec's texts, and what tells one role from another)."""
    prompt = opts.system_prompt
    if isinstance(prompt, dict) and rules:
        prompt["append"] = "\n\n".join(part for part in (prompt.get("append", ""), rules) if part)


def _telling_workers(spec: AgentSpec, rules: str) -> AgentSpec:
    """``spec`` with ``rules`` appended to each worker's prompt: a subagent never sees the
    coordinator's system prompt. The isolation mark is a plain attribute ``replace`` loses: kept."""
    if not spec.agents:
        return spec
    agents = {name: isolated(replace(agent, prompt=f"{agent.prompt}\n\n{rules}"), wants_isolation(agent))
              if isinstance(agent, AgentDefinition) else agent for name, agent in spec.agents.items()}
    return replace(spec, agents=agents)


def _run_temp(workspace: Path) -> Path:
    """This workspace's own temp folder for its CLI and commands: ``<tmp>/flower-runs-<uid>/<id>``,
    0700. With the one ``/tmp/claude-<uid>`` every run shared, a run read and appended to another
    thread's background-command output, which that thread's agent then read as its own tool
    result. The fence hides the parent from every run and opens only the run's own folder. Short on
    purpose: the sandbox's proxy sockets live there (a unix socket path holds 107 bytes)."""
    parent = Path(tempfile.gettempdir()) / f"flower-runs-{os.getuid()}"
    try:
        parent.mkdir(mode=0o700)
    except FileExistsError:
        pass  # made by an earlier run: checked below like a new one
    st = os.lstat(parent)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise FlowerError(f"{parent} is not a private folder of this user (a link, another owner, or open to "
                          "others); remove it so each run gets its own temp folder there.")
    path = parent / hashlib.sha256(str(workspace).encode()).hexdigest()[:16]
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def _fence(setting: Setting, wb: Workbench | None, temp: Path) -> tuple[Sandbox, list[Path]]:
    """The setting's sandbox around its workspace: the run's own state, the launcher's private
    folder (the key file), the CLI's config folder (every session's transcript) and every other
    run's temp hidden; an outside workbench and the run's own ``temp`` open. Also the CLI's own
    files among them (its config), which only its commands may not reach."""
    env = os.environ if setting.env is None else setting.env
    home = Path(env.get("HOME") or Path.home())
    config = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    own = [config, home / ".claude.json"]
    private = [setting.run_dir, private_folder(), *own]
    shared = [*([wb.root] if wb is not None and wb.external else []), temp]
    fence = setting.sandbox.around(setting.workspace, private=private, shared=shared)  # type: ignore[union-attr]
    outside = setting.workbench if setting.workbench is not None and setting.workbench.external else None
    if wb is None and outside is not None:  # a role without the workbench still reads what people
        # shared and what the run hands back (a judge checks a chart in outbox/), nothing else of it
        fence = replace(fence, allow_read=(*fence.allow_read, outside.inbox, outside.outbox))
    # every run's temp and the CLI's old shared one are hidden (a deny on writes too would close the
    # run's own folder inside them: measured, the sandbox mounts a denied folder over an allowed one)
    others = (temp.parent, Path(tempfile.gettempdir()) / f"claude-{os.getuid()}")
    return replace(fence, deny_read=(*fence.deny_read, *others)), own


def _bwrap() -> str:
    found = shutil.which("bwrap")
    if found is None:
        raise FlowerError("a sandboxed run needs bubblewrap (bwrap), which is not on PATH: install it "
                          "(apt-get install bubblewrap), or run without a sandbox.")
    return found

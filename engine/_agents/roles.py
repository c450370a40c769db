"""The five role factories: rules text + tool set (+ hooks the runtime derives from the spec).

``worker()`` makes the SDK's ``AgentDefinition`` (dispatched as a subagent); the other four make
an ``AgentSpec`` (they open their own session). Roles do not install hooks themselves: the
runtime derives them from ``spec.delegate_only`` / ``allowed_tools``.
"""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import AgentDefinition

from engine._agents.spec import AgentSpec, CompactPolicy
from engine._agents.guard import isolated
from engine._lang import words

COORDINATOR_TOOLS = ["Agent", "TodoWrite", "Read"]
WEB_TOOLS = ["WebFetch", "WebSearch"]
WORKER_TOOLS = ["Read", "Write", "Edit", "Bash", "Glob", "Grep", "WebFetch", "WebSearch"]
READ_TOOLS = ["Read", "Glob", "Grep", "WebFetch", "WebSearch"]
# Workers' tools that must be pre-approved for the whole session. The spec merged only the web
# tools, saying subagents' Bash works anyway; with CLI 2.1.332 a worker's `python3 ...` or
# `git commit` is refused ("This command requires approval") unless Bash is in the session's
# allowed_tools, even with the subagent's own permissionMode=bypassPermissions (measured). The
# delegate wall is a PreToolUse hook keyed on agent_id, so the main thread stays denied.
SESSION_APPROVED = [*WEB_TOOLS, "Bash"]


def _join(rules: str, instructions: str) -> str:
    return "\n\n".join(part for part in (rules, instructions.strip()) if part)


def _channel_tools(channel: Any, role: str, *, inbox: bool) -> tuple[list[str], dict[str, Any]]:
    if channel is None:
        return [], {}
    names = [channel.tool_name] + ([channel.inbox_tool_name] if inbox else [])
    return names, channel.mcp_servers(asked_by=role)


def coordinator(
    name: str,
    instructions: str,
    workers: dict[str, AgentDefinition],
    *,
    channel: Any = None,
    can_read: bool = True,
    glance: bool = True,
    model: str | None = None,
    effort: str | None = None,
    max_turns: int | None = None,
    max_budget_usd: float | None = None,
    permission_mode: str = "acceptEdits",
    compact: CompactPolicy | None = None,
    hooks: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
) -> AgentSpec:
    """The main-thread coordinator: splits, dispatches, reads reports, decides; never hands-on.

    ``delegate_only=True`` (the runtime's ``delegate_guard`` denies its Bash/Write/Edit by
    ``agent_id``), ``agents=workers``, workbench on. A ``channel`` brings both its tools (ask
    and inbox). Workers' web tools are merged into ``allowed_tools``: that list is
    session-scoped, and a tool missing from it needs approval even when a subagent calls it;
    unattended, nobody approves and the model retries the call forever (a novel-writing run
    saw twenty user-rejected calls and wrote nothing). Bash is merged too (see
    ``SESSION_APPROVED``); Write/Edit are not: ``acceptEdits`` already approves a worker's edits.
    """
    tools = list(COORDINATOR_TOOLS)
    if can_read:
        tools += ["Glob", "Grep"]
    channel_tools, servers = _channel_tools(channel, name, inbox=True)
    tools += channel_tools
    for agent in workers.values():
        for tool in agent.tools or []:
            if tool in SESSION_APPROVED and tool not in tools:
                tools.append(tool)
    return AgentSpec(
        name=name,
        instructions=_join(words().COORDINATOR_RULES, instructions),
        allowed_tools=tools,
        model=model,
        effort=effort,
        max_turns=max_turns,
        max_budget_usd=max_budget_usd,
        permission_mode=permission_mode,
        agents=dict(workers),
        mcp_servers=servers,
        hooks=hooks,
        compact=compact,
        env=dict(env or {}),
        glance=glance,
        delegate_only=True,
    )


def worker(
    description: str,
    prompt: str,
    *,
    tools: list[str] | None = None,
    model: str = "inherit",
    effort: str | int | None = None,
    max_turns: int | None = None,
    permission_mode: str | None = None,
    skills: list[str] | None = None,
    discipline: bool = True,
    isolate: bool = False,
) -> AgentDefinition:
    """The subagent that does the work. ``discipline`` appends the worker rules to ``prompt``.

    ``isolate=True`` gives each dispatch its own git worktree (the workspace must be a git
    repository). The mark is a Python attribute: ``dataclasses.replace`` on the result loses it.
    """
    agent = AgentDefinition(
        description=description,
        prompt=_join(prompt, words().WORKER_RULES if discipline else ""),
        tools=list(tools) if tools is not None else list(WORKER_TOOLS),
        model=model,
        skills=skills,
        maxTurns=max_turns,
        effort=effort,  # type: ignore[arg-type]
        permissionMode=permission_mode,  # type: ignore[arg-type]
    )
    return isolated(agent) if isolate else agent


def clarify(
    name: str,
    channel: Any,
    *,
    instructions: str = "",
    can_read: bool = True,
    model: str | None = None,
    effort: str | None = None,
    max_turns: int | None = None,
    max_budget_usd: float | None = None,
) -> AgentSpec:
    """The clarifier: asks before anything is done, does nothing else, ends with four sections.

    No Write/Edit/Bash/Agent (the runtime's ``whitelist_guard`` enforces it), no inbox,
    workbench off (it writes nothing, the index would be noise).
    """
    channel_tools, servers = _channel_tools(channel, name, inbox=False)
    return AgentSpec(
        name=name,
        instructions=_join(words().CLARIFY_RULES, instructions),
        allowed_tools=channel_tools + (list(READ_TOOLS) if can_read else []),
        model=model,
        effort=effort,
        max_turns=max_turns,
        max_budget_usd=max_budget_usd,
        mcp_servers=servers,
        workbench=False,
    )


def judge(
    name: str,
    channel: Any,
    *,
    instructions: str = "",
    can_run: bool = False,
    model: str | None = None,
    effort: str | None = None,
    max_turns: int | None = None,
    max_budget_usd: float | None = None,
) -> AgentSpec:
    """The judge: sets the goal before work starts, or gives the verdict after each round.

    ``can_run=True`` adds Bash (a harder verdict: it really runs the acceptance commands) at the
    cost of a judge that can change the workspace; Write/Edit stay denied either way.
    """
    channel_tools, servers = _channel_tools(channel, name, inbox=False)
    return AgentSpec(
        name=name,
        instructions=_join(words().JUDGE_RULES, instructions),
        allowed_tools=channel_tools + ["Read", "Glob", "Grep"] + (["Bash"] if can_run else []),
        model=model,
        effort=effort,
        max_turns=max_turns,
        max_budget_usd=max_budget_usd,
        mcp_servers=servers,
        workbench=False,
    )


def oracle(
    name: str | None = None,
    *,
    instructions: str = "",
    model: str | None = None,
    effort: str | None = None,
    max_turns: int | None = 12,
    max_budget_usd: float | None = 0.5,
) -> AgentSpec:
    """The side-question answerer: reads recent events and the workbench, changes nothing.

    The only non-coordinator role with the workbench on: that is where it reads.
    """
    return AgentSpec(
        name=name or words().ORACLE_NAME,
        instructions=_join(words().ORACLE_RULES, instructions),
        allowed_tools=["Read", "Glob", "Grep"],
        model=model,
        effort=effort,
        max_turns=max_turns,
        max_budget_usd=max_budget_usd,
        workbench=True,
    )

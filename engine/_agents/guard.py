"""The hook layer: what the main thread may not touch, how giant results are cut, who gets a worktree.

All of it is enforced by SDK hooks, not by the prompt: a prompt is a suggestion the model can
ignore (measured: with "don't use worktree" in the system prompt, isolate_guard's injection still
landed). Every "main thread only" guard relies on one test, ``_is_main_thread``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Callable

from claude_agent_sdk import AgentDefinition, HookMatcher

from engine._agents.workbench import Workbench, is_within
from engine._errors import FlowerError
from engine._file_work import file_work
from engine._lang import words
from engine._resume.ephemeral import is_ephemeral
from engine._resume.spill_file import safe_text, write_spill

__all__ = [
    "whitelist_guard",
    "delegate_guard",
    "spill_guard",
    "index_guard",
    "isolate_guard",
    "isolated",
    "wants_isolation",
    "workbench_hooks",
    "merge_hooks",
]

HANDS_ON = "Bash|Write|Edit|NotebookEdit"
WRITE_ONLY = "Write|Edit|NotebookEdit"
BULKY = "Bash|Read|Grep|Glob|WebFetch|WebSearch"

ISOLATE_ATTR = "_flower_isolate"
SPILL_HEAD = 400

log = logging.getLogger(__name__)



def _is_main_thread(data: dict[str, Any]) -> bool:
    """A subagent's tool-lifecycle hook input carries ``agent_id``; the main thread's does not."""
    return not data.get("agent_id")


def _deny(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def whitelist_guard(allowed: list[str] | None, *, role: str | None = None) -> HookMatcher | None:
    """Make ``allowed`` truly exclusive for the four hands-on tools (Bash Write Edit NotebookEdit).

    PreToolUse; denies, on the main thread only, each of the four not in ``allowed`` (a
    subagent's tools are set by its AgentDefinition). Returns None when nothing is banned.
    """
    # allowed_tools is a list of tools needing no approval, not an exclusive whitelist (measured:
    # an agent with allowed_tools=["Read"] called Write and Bash); this hook closes the gap.
    have = set(allowed or ())
    banned = [t for t in HANDS_ON.split("|") if t not in have]
    if not banned:
        return None

    async def hook(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if not _is_main_thread(data):
            return {}
        return _deny(words().WHITELIST_TEXT.format(role=role or words().THIS_ROLE, tool=data.get("tool_name", "?")))

    return HookMatcher(matcher="|".join(banned), hooks=[hook])


def delegate_guard(*, tools: str = HANDS_ON, allow_glance: bool = False) -> HookMatcher:
    """Deny the main thread's hands-on tools, telling it to dispatch a subagent instead.

    PreToolUse, matcher ``tools``. Subagents always pass. With ``allow_glance`` a Bash command
    that ``is_ephemeral`` accepts (``git status``, ``ls``) passes too.
    """
    # A delegate_only role installs this and not whitelist_guard: both ban the same tools, and
    # two different denials ("you don't have it" vs "go delegate") would contradict each other.

    async def hook(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if not _is_main_thread(data):
            return {}
        tool = data.get("tool_name", "?")
        if allow_glance and tool == "Bash":
            command = (data.get("tool_input") or {}).get("command", "")
            # Same function as the expiry on resume: what may run here must be what later expires.
            if isinstance(command, str) and is_ephemeral(command):
                return {}
        return _deny(words().DELEGATE_TEXT.format(tool=tool))

    return HookMatcher(matcher=tools, hooks=[hook])


def spill_guard(
    workbench: Workbench,
    *,
    threshold: int = 4000,
    tools: str = BULKY,
    main_only: bool = False,
) -> HookMatcher:
    """Write tool results over ``threshold`` characters to disk now; the model sees a pointer.

    PostToolUse. The file is ``<workbench.spill>/<sha256[:16]>.txt``; the pointer names its
    absolute path and shows the first 400 characters. Only string fields of the tool output
    (at any depth of nested dicts) are replaced, so its structure stays what the CLI expects
    (a wrong shape is silently rejected); lists are never touched (they may hold images), nor
    are images and PDFs (a Read's ``{"type": "image", "file": {"base64": ...}}``, Bash output
    with ``isImage``), whose base64 the CLI turns into an image block.
    A Read of a file inside the spill folder is left alone, or the read-back would spill again.
    A text that cannot be written (a full disk, a link the agent put at ``spill/``) stays in the
    output as it is, with one log line. The files are written beneath the workbench's anchor,
    following no link, in the run-files pool (``engine.host.file_work``), never on the event loop.
    """
    spill_dir, anchor = workbench.spill, workbench.anchor

    def stash(text: str) -> str | None:
        try:  # the agent's folder: a link there would make the host write its text where it points
            path = write_spill(spill_dir, text, anchor=anchor)  # same content, same name: written once
        except (OSError, ValueError) as exc:  # a tool's output must never be lost to a failed cut
            log.warning("could not spill a tool output of %d characters to %s (%s); it stays whole",
                        len(text), spill_dir, exc)
            return None
        head = safe_text(text[:SPILL_HEAD])
        return words().SPILL_TEXT.format(
            size=len(text), path=os.path.abspath(path), head_len=len(head), head=head
        )

    def shrink(value: Any) -> Any | None:
        """The value with its long strings replaced, or None when nothing needed replacing."""
        if isinstance(value, str):
            return stash(value) if len(value) > threshold else None
        if isinstance(value, dict):
            if _is_binary(value):
                return None  # an image or PDF as base64: cutting it would corrupt the block
            out, changed = dict(value), False
            for key, item in value.items():
                if key in _BINARY_KEYS:
                    continue
                if isinstance(item, (str, dict)) and (new := shrink(item)) is not None:
                    out[key], changed = new, True
            return out if changed else None
        return None  # lists (image blocks), numbers, None: left exactly as they are

    async def hook(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if main_only and not _is_main_thread(data):
            return {}
        if data.get("tool_name") == "Read" and _reads_spill(data, spill_dir):
            return {}  # reading a spill file back must work, else it spills again, forever
        try:
            shrunk = await file_work(shrink, data.get("tool_response"), what="spilling a long tool output")
        except FlowerError as exc:  # overran: the output stays whole, as for a full disk
            log.warning("%s (%s)", exc, spill_dir)
            return {}
        if shrunk is None:
            return {}
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": shrunk}}

    return HookMatcher(matcher=tools, hooks=[hook])


_BINARY_KEYS = frozenset({"base64", "data"})
_BINARY_TYPES = frozenset({"image", "pdf", "document"})


def _is_binary(value: dict[str, Any]) -> bool:
    """A Read of an image/PDF ({"type": "image", "file": {"base64": ...}}) or Bash image output."""
    return bool(value.get("isImage")) or value.get("type") in _BINARY_TYPES


def _reads_spill(data: dict[str, Any], spill_dir: Path) -> bool:
    raw = (data.get("tool_input") or {}).get("file_path")
    if not isinstance(raw, str) or not raw:
        return False
    return is_within(_resolve(raw, data.get("cwd")), spill_dir)


def index_guard(workbench: Workbench, *, on_overrun: Callable[[str], Any] | None = None) -> HookMatcher:
    """Rebuild ``INDEX.md`` after a Write or Edit inside the workbench; always returns {}.

    PostToolUse, matcher ``Write|Edit``: the next agent starts out knowing the file exists. The
    rebuild runs in the run-files pool (``engine.host.file_work``); one that overruns is given up
    and ``on_overrun`` gets the reason (the runtime then fails the step with it), else it is logged.
    """

    async def hook(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        raw = (data.get("tool_input") or {}).get("file_path")
        if isinstance(raw, str) and raw and is_within(_resolve(raw, data.get("cwd")), workbench.root):
            try:  # the agent's files: never on the event loop, never in the shared executor
                await file_work(workbench.refresh, what="rebuilding the workbench index")
            except FlowerError as exc:  # its words may reach a thread: the path only in the log
                log.warning("%s (%s)", exc, workbench.root)
                if on_overrun is not None:
                    on_overrun(str(exc))
        return {}

    return HookMatcher(matcher="Write|Edit", hooks=[hook])


def isolated(agent: AgentDefinition, flag: bool = True) -> AgentDefinition:
    """Mark a subagent definition as wanting its own git worktree; returns the same object.

    The mark is a plain attribute, not a dataclass field, so the SDK's ``asdict()`` never sends
    it to the CLI. ``dataclasses.replace()`` loses it (and isolation then silently stops).
    """
    object.__setattr__(agent, ISOLATE_ATTR, bool(flag))
    return agent


def wants_isolation(agent: AgentDefinition | None) -> bool:
    """Whether ``isolated()`` marked this definition; False for None or an unmarked one."""
    return bool(getattr(agent, ISOLATE_ATTR, False))


def isolate_guard(
    agents: dict[str, AgentDefinition],
    *,
    on_inject: Callable[[str], Any] | None = None,
) -> HookMatcher:
    """Send each dispatch of an ``isolated()`` role into its own worktree.

    PreToolUse, matcher ``Agent``. Injects ``isolation="worktree"`` (permissionDecision allow +
    updatedInput) only when the tool is Agent, the input sets neither ``cwd`` nor ``isolation``
    (they exclude each other; a model-given cwd is respected), and the ``subagent_type`` role is
    marked. ``on_inject(subagent_type)`` is called on each injection.
    """

    async def hook(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if data.get("tool_name") != "Agent":
            return {}
        tool_input = dict(data.get("tool_input") or {})
        if tool_input.get("cwd") or tool_input.get("isolation"):
            return {}
        role = tool_input.get("subagent_type") or ""
        if not wants_isolation(agents.get(role)):
            return {}
        tool_input["isolation"] = "worktree"
        if on_inject is not None:
            on_inject(role)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": tool_input,
            }
        }

    return HookMatcher(matcher="Agent", hooks=[hook])


def workbench_hooks(
    workbench: Workbench,
    *,
    delegate_only: bool = True,
    spill_threshold: int | None = 4000,
    agents: dict[str, AgentDefinition] | None = None,
    allow_glance: bool = False,
    on_overrun: Callable[[str], Any] | None = None,
) -> dict[str, list[HookMatcher]]:
    """The hooks a workbench session needs, by event; events with no hook are left out.

    PreToolUse: ``delegate_guard`` when ``delegate_only``, plus ``isolate_guard`` when a role in
    ``agents`` is ``isolated()``. PostToolUse: ``index_guard`` always (given ``on_overrun``), plus
    ``spill_guard`` when ``spill_threshold`` is truthy.
    """
    pre: list[HookMatcher] = []
    if delegate_only:
        pre.append(delegate_guard(allow_glance=allow_glance))
    if agents and any(wants_isolation(a) for a in agents.values()):
        pre.append(isolate_guard(agents))
    post = [index_guard(workbench, on_overrun=on_overrun)]
    if spill_threshold:
        post.append(spill_guard(workbench, threshold=spill_threshold))
    return {event: hooks for event, hooks in (("PreToolUse", pre), ("PostToolUse", post)) if hooks}


def merge_hooks(*groups: dict[str, list[Any]] | None) -> dict[str, list[Any]]:
    """Concatenate hook configurations per event (extend, no dedup); None groups are skipped."""
    out: dict[str, list[Any]] = {}
    for group in groups:
        for event, matchers in (group or {}).items():
            out.setdefault(event, []).extend(matchers)
    return out


def _resolve(raw: str, cwd: Any) -> Path:
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = Path(cwd if isinstance(cwd, str) and cwd else os.getcwd()) / path
    return Path(os.path.realpath(path))


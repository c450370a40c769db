"""The fence around an attempt: what its commands and file tools may read, write and reach.

A ``Sandbox`` says it once; three enforcers apply it, because Claude Code's own sandbox covers
only its Bash tool (on Linux: bubblewrap for the filesystem, a proxy for the network):

- ``sandbox_settings``: the CLI's ``sandbox`` settings for commands (``allowUnsandboxedCommands``
  off, so a command cannot ask its way out);
- ``cli_view``: the CLI process itself starts in a bubblewrap view of the machine where what the
  fence hides is absent and what it may not write is read-only, so its own file tools cannot be
  raced past a check, and every process of the run dies with it;
- ``fence_guard``: a PreToolUse hook that refuses Read/Write/Edit/Glob/Grep outside the fence with
  a reason the model can act on. Permission deny rules cannot say "this folder but not that folder
  inside it" (the thread's own workspace lies inside the hidden ``FLOWER_HOME``), and the hook
  resolves symlinks first.

All three use one rule: the deepest listed folder that holds a path decides (measured with CLI
2.1.332: ``allowRead`` re-opens a folder inside a ``denyRead`` one, and a ``denyRead`` below that
closes it again). A sandboxed attempt also loads no settings file (a workspace's
``.claude/settings.json`` could declare hooks, which run unsandboxed) and its model key goes to
the CLI through a key helper instead of the environment its commands inherit (``launcher``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from claude_agent_sdk import HookMatcher

FILE_TOOLS = "Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS"
_WRITERS = {"Write", "Edit", "MultiEdit", "NotebookEdit"}
_PATH_KEYS = ("file_path", "notebook_path", "path")
_GLOB_CHARS = set("*?[{")

LINK_TEXT = (
    "{tool} refused: {path} goes through the symbolic link {link} inside the workspace. File tools "
    "take real paths only here; use the path the link points to, if it is inside the workspace."
)
UNCHECKED_TEXT = (
    "{tool} refused: its path could not be checked ({error}); something may be replacing files "
    "there. Try again once it stops, with a path that holds no symbolic link."
)
FENCE_TEXT = (
    "{tool} refused: {path} is outside what this run may {verb}. Work inside the workspace "
    "{workspace}; other threads, the bot's files and its secrets are not reachable from here."
)


@dataclass(frozen=True)
class Sandbox:
    """Where an attempt's commands and file tools may read and write, and which hosts they reach.

    The workspace is always readable and writable; everything else is readable unless it lies in
    ``deny_read`` and writable only in ``allow_write`` (commands may also write the temp folder
    the CLI gives them). ``allow_read`` re-opens folders inside ``deny_read``; ``deny_write``
    closes folders inside writable ones. ``domains`` are the only hosts commands may reach
    (``*.example.com`` allowed); none means no network for commands.
    """

    deny_read: tuple[Path, ...] = ()
    allow_read: tuple[Path, ...] = ()
    allow_write: tuple[Path, ...] = ()
    deny_write: tuple[Path, ...] = ()
    domains: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("deny_read", "allow_read", "allow_write", "deny_write"):
            object.__setattr__(self, name, tuple(_real(p) for p in getattr(self, name)))
        object.__setattr__(self, "domains", tuple(self.domains))

    def around(self, workspace: Path, *, private: Iterable[Path] = (),
               shared: Iterable[Path] = ()) -> "Sandbox":
        """This fence for one ``workspace``: readable and writable, with ``private`` folders
        inside or outside it hidden (the run's own state) and ``shared`` ones open (an outside
        workbench)."""
        ws, private, shared = _real(workspace), [_real(p) for p in private], [_real(p) for p in shared]
        return replace(self, deny_read=(*self.deny_read, *private),
                       allow_read=(*self.allow_read, ws, *shared),
                       allow_write=(*self.allow_write, ws, *shared),
                       deny_write=(*self.deny_write, *private))

    def may_read(self, path: str | os.PathLike[str]) -> bool:
        """Whether the fence lets ``path`` (symlinks resolved) be read."""
        return _decides(_real(path), allow=self.allow_read + self.allow_write, deny=self.deny_read,
                        default=True)

    def may_write(self, path: str | os.PathLike[str]) -> bool:
        """Whether the fence lets ``path`` (symlinks resolved) be written."""
        p = _real(path)
        return self.may_read(p) and _decides(p, allow=self.allow_write, deny=self.deny_write,
                                             default=False)


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


def _decides(path: Path, *, allow: tuple[Path, ...], deny: tuple[Path, ...], default: bool) -> bool:
    """The deepest rule folder holding ``path`` decides (deny wins a tie); none: ``default``."""
    def deepest(folders: tuple[Path, ...]) -> int:
        return max((len(f.parts) for f in folders if f == path or f in path.parents), default=-1)

    allowed, denied = deepest(allow), deepest(deny)
    return default if allowed == denied == -1 else allowed > denied


def sandbox_settings(fence: Sandbox) -> dict[str, Any]:
    """The CLI's ``sandbox`` settings that apply ``fence`` (already ``around`` a workspace) to
    commands: the folders as absolute paths, no unsandboxed escape, failing when unavailable."""
    return {
        "enabled": True,
        "failIfUnavailable": True,
        "autoAllowBashIfSandboxed": True,
        "allowUnsandboxedCommands": False,
        "filesystem": {
            "denyRead": [str(p) for p in fence.deny_read],
            "allowRead": [str(p) for p in fence.allow_read],
            "allowWrite": [str(p) for p in fence.allow_write],
            "denyWrite": [str(p) for p in fence.deny_write],
        },
        "network": {"allowedDomains": list(fence.domains)},
    }


def cli_view(fence: Sandbox, *, writable: Iterable[Path] = (), readable: Iterable[Path] = (),
             hidden: Iterable[Path] = ()) -> list[str]:
    """bubblewrap arguments that start the CLI process itself inside ``fence``: what it may not
    read is not there, what it may not write is read-only, and its PID namespace dies with it.

    The hook (``fence_guard``) checks a path when a tool is called and the CLI opens it later, so a
    link swapped in between was followed (6 of 30 raced ``Read`` calls returned a secret). In this
    view the secret is simply absent, for the CLI's file tools and for every command. ``writable``
    and ``readable`` are the CLI's own files (its config folder; its key file), open whatever the
    fence says; ``hidden`` are folders shown empty besides the fence's own (``/tmp`` always is: other
    processes keep their files there). Every process of the run (the CLI, the sandbox's proxies, commands
    left in the background) lives in the namespace, which ends when the CLI exits or is killed, and
    the CLI is killed when the process that started it dies (``--die-with-parent``)."""
    state: dict[Path, str] = {}
    for path in (*fence.deny_read, *fence.allow_read, *fence.allow_write, *fence.deny_write):
        state[path] = "rw" if fence.may_write(path) else "ro" if fence.may_read(path) else "hide"
    for path in map(_real, hidden):
        state.setdefault(path, "hide")
    state.update((_real(path), "ro") for path in readable)
    state.update((_real(path), "rw") for path in writable)

    def inherited(path: Path) -> str:  # what a path shows without a mount of its own
        for parent in path.parents:
            if parent in state:
                return state[parent]
        return "ro"

    state[Path("/tmp")] = "hide"  # emptied below, first
    args = [*_VIEW_BASE]
    for path in sorted(state, key=lambda p: len(p.parts)):  # a folder before what it holds
        kind = state[path]
        if kind == inherited(path) or not os.path.lexists(path) or path == Path("/tmp"):
            continue
        if kind == "hide":  # an empty folder (what is written there stays there), an empty file
            args += ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
        else:
            args += ["--bind" if kind == "rw" else "--ro-bind", str(path), str(path)]
    return args


# A user namespace of its own (the host's processes, the bot's /proc/<pid>/environ, are out of reach
# even for root) and a PID namespace of its own, whose /proc the CLI needs (Claude Code names its
# own files there by pid). Its commands' sandbox mounts a fresh /proc for each command, which the
# kernel allows in a user namespace only while some /proc mount is fully visible; bwrap's --proc
# covers parts of its own, so the host's /proc stays mounted, out of reach under an emptied folder.
_VIEW_BASE = ("--unshare-user", "--unshare-pid", "--die-with-parent", "--ro-bind", "/", "/",
              "--dev-bind", "/dev", "/dev", "--tmpfs", "/tmp", "--bind", "/proc", "/tmp/.proc/host",
              "--tmpfs", "/tmp/.proc", "--proc", "/proc")


def fence_guard(fence: Sandbox, workspace: Path) -> HookMatcher:
    """PreToolUse: refuse a file tool whose path (or a search's root) is outside ``fence``."""

    async def hook(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        tool = data.get("tool_name", "")
        try:
            reason = _refusal(fence, workspace, tool, data)
        except Exception as exc:  # a hook that raises lets the tool run: this gate fails closed
            # (an OSError: a path changing under the check, as a link swapped in mid-check does)
            reason = UNCHECKED_TEXT.format(tool=tool, error=getattr(exc, "strerror", None) or exc)
        if reason is None:
            return {}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}

    return HookMatcher(matcher=FILE_TOOLS, hooks=[hook])


def _refusal(fence: Sandbox, workspace: Path, tool: str, data: dict[str, Any]) -> str | None:
    """Why ``fence`` refuses this file tool call, or None when it may go ahead."""
    cwd = Path(data.get("cwd") or workspace)
    writes = tool in _WRITERS
    written = _paths(tool, data.get("tool_input") or {}, cwd)
    for path in written:  # a link inside the workspace could be swapped before the CLI opens it
        if (link := _link_in(path, workspace)) is not None:
            return LINK_TEXT.format(tool=tool, path=path, link=link)
    for path in map(_real, written):
        if not (fence.may_write(path) if writes else fence.may_read(path)):
            return FENCE_TEXT.format(tool=tool, path=path, verb="write" if writes else "read",
                                     workspace=workspace)
    return None


def _link_in(path: Path, workspace: Path) -> Path | None:
    """The first symbolic link among ``path``'s components below ``workspace`` (as written, not
    resolved), or None; a path outside the workspace is the fence's to judge."""
    root = Path(os.path.abspath(workspace))
    p = Path(os.path.abspath(path))
    if p != root and root not in p.parents:
        return None
    for part in p.relative_to(root).parts:
        root = root / part
        if root.is_symlink():
            return root
    return None


def _paths(tool: str, given: dict[str, Any], cwd: Path) -> list[Path]:
    """The paths a file tool call touches, absolute but as written (links not resolved): its path
    argument, or for a search its root and the fixed start of its pattern (``../../other/**``
    searches ``../../other``)."""
    found = [cwd / str(given[key]) for key in _PATH_KEYS if isinstance(given.get(key), str) and given[key]]
    if tool in ("Glob", "Grep", "LS") and not found:
        found.append(cwd)
    pattern = given.get("pattern") if tool == "Glob" else given.get("glob") if tool == "Grep" else None
    if isinstance(pattern, str) and pattern:
        fixed = []
        for part in Path(pattern).parts:
            if _GLOB_CHARS & set(part):
                break
            fixed.append(part)
        base = found[0] if found else cwd
        found.append(base.joinpath(*fixed) if fixed else base)
    return [Path(os.path.abspath(os.path.expanduser(p))) for p in found]


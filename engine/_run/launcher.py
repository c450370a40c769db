"""How the Claude Code CLI is started: with exactly the environment its host chose.

The SDK always starts the CLI with the parent's whole ``os.environ`` plus ``options.env``. A host
that hands the CLI an environment of its own (``Runtime(env=...)``: a bot whose process holds
tokens the agent must never see) gets the CLI through a tiny launcher instead: it keeps only the
variables named in ``FLOWER_CLI_ENV`` (plus the few the SDK sets for the CLI itself) and execs the
real CLI. The same launcher puts the CLI in a process group of its own for a terminal front end
(a Ctrl-C then reaches ``flower``, which interrupts at a message boundary, not the CLI), and on
Linux asks the kernel to kill the CLI when the process that started it dies (``PR_SET_PDEATHSIG``;
the SDK sets nothing, and an orphaned CLI keeps its turn going and calling the model, beside the
run a restarted host resumes in the same workspace). A sandboxed run's CLI is exec'd inside its
bubblewrap view (``sandbox.cli_view``), after the environment is cut down.

The launcher file is written once per process into a private (0700) temporary folder, never
into a workspace: anything an agent can write must not become code the host runs.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import subprocess
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import claude_agent_sdk
from claude_agent_sdk import ClaudeAgentOptions

from engine._errors import FlowerError
from engine._tree import remove_tree

KEEP_VARIABLE = "FLOWER_CLI_ENV"  # comma-separated names the CLI may see
GROUP_VARIABLE = "FLOWER_CLI_OWN_GROUP"  # "1": the CLI gets a process group of its own
PARENT_VARIABLE = "FLOWER_CLI_PARENT"  # the host's pid: a CLI whose host is already gone never starts
VIEW_VARIABLE = "FLOWER_CLI_VIEW"  # JSON [bwrap, its arguments...]: the CLI starts inside that view

# What the SDK itself sets for the CLI (entry point, version, app label, session-state frames,
# trace context, cwd): always kept, or the SDK's own protocol with the CLI breaks.
SDK_VARIABLES = (
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_AGENT_SDK_VERSION",
    "CLAUDE_AGENT_SDK_CLIENT_APP",
    "CLAUDE_AGENT_SDK_DERIVED_CLIENT_APP",
    "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING",
    "CLAUDE_CODE_SDK_READS_SESSION_STATE",
    "TRACEPARENT",
    "TRACESTATE",
    "PWD",
)

_BODY = """#!{python} -I
import os, sys
if sys.platform.startswith("linux"):
    import ctypes, signal
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: kept across exec
    if str(os.getppid()) != os.environ.get({parent!r}):
        sys.exit("flower: the process that started this CLI is gone")  # it died before the prctl
env = dict(os.environ)
env.pop({parent!r}, None)
if env.pop({group!r}, "") == "1":
    os.setpgrp()
view = env.pop({view!r}, None)
keep = env.pop({keep!r}, None)
if keep is not None:
    names = set(keep.split(",")) | set({sdk!r})
    env = {{k: v for k, v in env.items() if k in names}}
if view is not None:
    import json
    wrap = json.loads(view)
    config = env.get("CLAUDE_CONFIG_DIR")  # the SDK resumes a session from a fresh temp folder of its own
    if config and os.path.isdir(config):
        wrap += ["--bind", config, config]
    os.execve(wrap[0], [*wrap, "--", {cli!r}, *sys.argv[1:]], env)
os.execve({cli!r}, [{cli!r}, *sys.argv[1:]], env)
"""

_written: dict[str, Path] = {}


def real_cli() -> Path:
    """The CLI the SDK would run: the bundled one, else ``claude`` on PATH."""
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if bundled.is_file():
        return bundled
    found = shutil.which("claude")
    if found is None:
        raise FlowerError(
            "Claude Code CLI not found: the claude-agent-sdk wheel has no bundled CLI and "
            "`claude` is not on PATH. Reinstall claude-agent-sdk or install Claude Code.")
    return Path(found)


def check_cli(cli: str | os.PathLike[str] | None = None, *, timeout: float = 120.0) -> str:
    """Run ``cli --version`` (default: the CLI the SDK would run) and return what it printed.

    Raises ``FlowerError`` naming the CLI and the fix when it is missing or cannot start, so a
    host can refuse to start instead of failing every run later.
    """
    path = Path(cli) if cli is not None else real_cli()
    fix = "Reinstall it (pip install --force-reinstall claude-agent-sdk) or put Claude Code on PATH."
    try:
        done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FlowerError(f"Claude Code CLI {path} cannot start ({exc}). {fix}") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        raise FlowerError(f"Claude Code CLI {path} cannot start ({said[0]}). {fix}")
    return done.stdout.strip()


_folder: list[Path] = []


def private_folder() -> Path:
    """This process's private (0700) temp folder for the launcher and key files, made once."""
    if not _folder:
        folder = Path(tempfile.mkdtemp(prefix="flower-cli-"))  # 0700: only this user can swap it
        atexit.register(_remove, folder)
        _folder.append(folder)
    return _folder[0]


def _remove(folder: Path) -> None:
    try:
        remove_tree(folder.parent, folder)  # a loop, never a recursion, and no link followed
    except OSError:
        pass  # the process is ending: a temp folder left behind is the system's to clear


def key_helper(env: dict[str, str]) -> Path | None:
    """Move ``env``'s ``ANTHROPIC_API_KEY`` into a private file and return it, for the CLI's
    ``apiKeyHelper`` to print (None when there is no such key).

    The CLI then sends the key itself (measured with CLI 2.1.332: the same ``x-api-key``) while
    its commands inherit an environment without it. ``CLAUDE_CODE_SUBPROCESS_ENV_SCRUB`` would
    hide it too, but it also forces the permission mode to ``default`` and leaves 0-byte
    read-only ``package.json``/``.env``/``.npmrc`` placeholders in the workspace and ``$HOME``.
    """
    key = env.pop("ANTHROPIC_API_KEY", None)
    if not key:
        return None
    path = private_folder() / f"key-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(key)
    return path


def launcher_path() -> Path:
    """The launcher for this process's CLI, written on first use into the private folder."""
    cli = str(real_cli())
    if cli not in _written:
        path = private_folder() / f"claude-{hashlib.sha256(cli.encode()).hexdigest()[:8]}"
        path.write_text(_BODY.format(python=sys.executable, group=GROUP_VARIABLE, keep=KEEP_VARIABLE,
                                     sdk=SDK_VARIABLES, cli=cli, parent=PARENT_VARIABLE,
                                     view=VIEW_VARIABLE), encoding="utf-8")
        path.chmod(stat.S_IRWXU)
        _written[cli] = path
    return _written[cli]


def launch(opts: ClaudeAgentOptions, env: Mapping[str, str] | None, *, own_group: bool,
           view: list[str] | None = None) -> None:
    """Start ``opts``' CLI through the launcher when needed: with exactly ``env`` plus the
    options' own variables (None: the host's whole environment, as the SDK does), with
    ``own_group`` in a process group of its own, and inside ``view`` (``[bwrap, arguments...]``,
    ``sandbox.cli_view``) when given. Call it last, once ``opts.env`` is complete."""
    if env is None and not own_group and view is None:
        return  # nothing to change: the SDK starts the CLI itself, saving a process start
    opts.env = {**(env or {}), **opts.env}
    if env is not None:
        opts.env[KEEP_VARIABLE] = ",".join(sorted(opts.env))
    if own_group:
        opts.env[GROUP_VARIABLE] = "1"
    if view is not None:
        opts.env[VIEW_VARIABLE] = json.dumps(view)
    opts.env[PARENT_VARIABLE] = str(os.getpid())
    opts.cli_path = str(launcher_path())

"""Keep the Claude Code CLI out of the terminal's Ctrl-C.

A Ctrl-C in a terminal sends SIGINT to the whole foreground process group, and the SDK starts
the CLI in the caller's group: the CLI would die mid-step instead of being interrupted at a
message boundary. For the ``flower`` command the runtime launches the CLI through a tiny
wrapper that moves it into its own process group first (``os.setpgrp``, then ``exec``), so only
``flower`` sees the Ctrl-C and turns it into a cooperative interrupt.
"""

from __future__ import annotations

import shlex
import shutil
import stat
import sys
from pathlib import Path

import claude_agent_sdk

from engine._errors import FlowerError

WRAPPER_NAME = ".claude-detached"


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


def detached_cli(folder: str | Path) -> Path:
    """Write (once) and return an executable wrapper in ``folder`` that runs the real CLI in a
    process group of its own."""
    path = Path(folder) / WRAPPER_NAME
    body = (
        "#!/bin/sh\n"
        f"exec {shlex.quote(sys.executable)} -c "
        "'import os, sys; os.setpgrp(); os.execv(sys.argv[1], sys.argv[1:])' "
        f"{shlex.quote(str(real_cli()))} \"$@\"\n"
    )
    if not path.is_file() or path.read_text() != body:
        path.write_text(body)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path

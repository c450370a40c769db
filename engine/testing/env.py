"""The environment that points the Claude Code CLI at the fake model, offline."""

from __future__ import annotations

import os
from pathlib import Path

FAKE_API_KEY = "sk-ant-fake-offline-key"


def offline_env(base_url: str, config_dir: str | os.PathLike[str]) -> dict[str, str]:
    """Environment variables for running the real CLI against a fake model at ``base_url``.

    Pass the result as ``ClaudeAgentOptions(env=...)`` (or to a subprocess), and set
    ``CLAUDE_CONFIG_DIR`` in the calling process too: the SDK's transcript mirror reads it there
    and drops frames otherwise. ``config_dir`` is created if missing; give each test its own.
    """
    os.makedirs(config_dir, exist_ok=True)
    env = {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": FAKE_API_KEY,
        "CLAUDE_CONFIG_DIR": os.fspath(config_dir),
        # An API error comes back at once as a synthetic message instead of minutes of retries.
        "CLAUDE_CODE_MAX_RETRIES": "0",
        # No telemetry, update checks or other calls to hosts other than the fake model.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # As root the CLI refuses bypassPermissions unless told it runs in a sandbox (tests, CI).
        "IS_SANDBOX": "1",
    }
    return {**env, **_own_home(Path(config_dir))}


def _own_home(config_dir: Path) -> dict[str, str]:
    """A HOME of the CLI's own, so its shell does not run this machine's dotfiles.

    The CLI sources ``~/.bashrc`` (and the login profile) for its Bash tool: slow, different on
    every machine, and some (a version manager's init) take a lock that a test killing a process
    group can leave behind, stalling every later shell. PATH and the rest of the environment are
    still inherited; git keeps the person's identity through ``GIT_CONFIG_GLOBAL``.
    """
    home = config_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {"HOME": os.fspath(home)}
    gitconfig = Path(os.environ.get("GIT_CONFIG_GLOBAL") or Path.home() / ".gitconfig")
    if gitconfig.is_file():
        env["GIT_CONFIG_GLOBAL"] = os.fspath(gitconfig)
    return env

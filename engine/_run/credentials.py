"""Credentials: find out before the first step whether Claude Code can authenticate at all.

Without this check a missing key surfaces only after a subprocess has started, as a 401 deep in
a step; the runtime raises at construction instead, naming what it looked for.
"""

from __future__ import annotations

import os
from pathlib import Path

from dotenv import load_dotenv

from engine._errors import FlowerError

CREDENTIAL_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
)


class CredentialsError(FlowerError, RuntimeError):
    """No way for Claude Code to authenticate was found."""


def load_env(workspace: str | Path) -> None:
    """Load ``.env`` from the workspace, then from the current folder; never overrides the shell."""
    load_dotenv(Path(workspace) / ".env", override=False)
    load_dotenv(Path.cwd() / ".env", override=False)


def _credential_files() -> list[Path]:
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    base = Path(config) if config else Path.home() / ".claude"
    return [base / ".credentials.json"]


def check_credentials() -> None:
    """Raise ``CredentialsError`` unless a credential variable is set or Claude Code is logged in."""
    if any(os.environ.get(name, "").strip() for name in CREDENTIAL_VARIABLES):
        return
    files = _credential_files()
    if any(f.is_file() for f in files):
        return
    raise CredentialsError(
        "No Claude credentials found: none of "
        + ", ".join(CREDENTIAL_VARIABLES)
        + f" is set (in the environment or a .env file), and there is no {files[0]}. "
        "Set ANTHROPIC_API_KEY (or log in once with the `claude` command)."
    )

"""Credentials: find out before the first step whether Claude Code can authenticate at all.

Without this check a missing key surfaces only after a subprocess has started, as a 401 deep in
a step; the runtime raises at construction instead, naming what it looked for. It looks in the
environment the CLI will get (the host's choice), not necessarily the host's own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

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


def _credential_files(env: Mapping[str, str]) -> list[Path]:
    config = env.get("CLAUDE_CONFIG_DIR")
    home = env.get("HOME")
    base = Path(config) if config else (Path(home) if home else Path.home()) / ".claude"
    return [base / ".credentials.json"]


def check_credentials(env: Mapping[str, str] | None = None) -> None:
    """Raise ``CredentialsError`` unless ``env`` (default: ``os.environ``) sets a credential
    variable or names a config folder where Claude Code is logged in."""
    env = os.environ if env is None else env
    if any(env.get(name, "").strip() for name in CREDENTIAL_VARIABLES):
        return
    files = _credential_files(env)
    if any(f.is_file() for f in files):
        return
    raise CredentialsError(
        "No Claude credentials found: none of "
        + ", ".join(CREDENTIAL_VARIABLES)
        + f" is set (in the environment or a .env file), and there is no {files[0]}. "
        "Set ANTHROPIC_API_KEY (or log in once with the `claude` command)."
    )

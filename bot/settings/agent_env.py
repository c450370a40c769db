"""The environment a run's CLI gets: built from an allow-list, never the bot's own as it is.

The bot's process holds the Slack tokens and the signing secret; the agent runs arbitrary commands.
So a CLI sees only what Claude Code needs to reach the model, the basics a shell needs, and the
names the operator adds in ``FLOWER_AGENT_ENV``. In a sandboxed run the engine then moves the
model's API key out of it, into a key helper only the CLI calls (``engine/_run/sandbox.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import quote

from bot.errors import AgentEnvError

# What a shell and the usual tools need, and the proxy and CA settings of a corporate network.
BASICS = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TERM", "TZ",
    "TMPDIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy",
    "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
)
# Claude Code's own settings and the model's endpoint and credential (the CLI's namespaces).
MODEL_PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_")
MODEL_NAMES = ("CLAUDE_CONFIG_DIR", "IS_SANDBOX", "DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY")
# A cloud provider's credentials go along only when that provider is chosen.
PROVIDERS = {
    "CLAUDE_CODE_USE_BEDROCK": (re.compile(r"AWS_[A-Z_]+"),),
    "CLAUDE_CODE_USE_VERTEX": (re.compile(r"CLOUD_ML_REGION|GOOGLE_[A-Z_]+|VERTEX_REGION_[A-Z0-9_]+"),),
    # Claude Code's OpenTelemetry export, when the operator turns it on (their collector and its headers)
    "CLAUDE_CODE_ENABLE_TELEMETRY": (re.compile(r"OTEL_[A-Z0-9_]+"),),
}
# Never handed to a run, whatever FLOWER_AGENT_ENV says: the bot's own secrets and settings.
NEVER = re.compile(r"SLACK_[A-Z_]*|FLOWER_[A-Z_]*|GITHUB_TOKEN|GITLAB_TOKEN|GH_TOKEN|GITHUB_WEBHOOK_SECRET|GITLAB_WEBHOOK_TOKEN")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def extra_names(raw: str) -> tuple[str, ...]:
    """The names in ``FLOWER_AGENT_ENV`` (commas or spaces); raises ``AgentEnvError`` for a bad one."""
    names = tuple(part for part in re.split(r"[\s,]+", raw) if part)
    for name in names:
        if not _NAME.fullmatch(name):
            raise AgentEnvError(f"FLOWER_AGENT_ENV must list variable names, separated by commas; got {name!r}. "
                                "Give the names only (FOO,BAR), not values.")
        if NEVER.fullmatch(name):
            raise AgentEnvError(f"FLOWER_AGENT_ENV names {name}, which a run never gets: the bot's tokens and "
                                "settings stay in the bot. Remove it from FLOWER_AGENT_ENV.")
    return names


def agent_env(env: Mapping[str, str], extra: tuple[str, ...] = ()) -> dict[str, str]:
    """The CLI's environment from the bot's ``env``: the allow-list plus ``extra`` names, set ones only."""
    chosen = [p for flag, patterns in PROVIDERS.items() if env.get(flag) for p in patterns]

    def allowed(name: str) -> bool:
        if NEVER.fullmatch(name):
            return False
        return (name in BASICS or name in MODEL_NAMES or name in extra or name.startswith(MODEL_PREFIXES)
                or any(p.fullmatch(name) for p in chosen))

    return {name: value for name, value in env.items() if allowed(name)}


def with_thread_attributes(env: Mapping[str, str], *, thread: str, channel: str) -> dict[str, str]:
    """``env`` for one thread's CLI: with Claude Code's telemetry on, its OpenTelemetry resource
    attributes name the thread and the channel (values percent-encoded, as the format asks)."""
    out = dict(env)
    if out.get("CLAUDE_CODE_ENABLE_TELEMETRY"):
        ours = f"flower.thread={quote(thread, safe='')},flower.channel={quote(channel, safe='')}"
        have = out.get("OTEL_RESOURCE_ATTRIBUTES", "").strip().strip(",")
        out["OTEL_RESOURCE_ATTRIBUTES"] = f"{have},{ours}" if have else ours
    return out

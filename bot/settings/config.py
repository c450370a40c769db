"""The bot's settings: the only module that reads the environment (and the ``.env`` file).

``load_config()`` validates everything at start, so a bad setting stops the bot with one line that
names the variable, the offending value (secrets masked) and the fix, instead of failing later in
a listener where nobody sees it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib.util import find_spec
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from dotenv import dotenv_values

from bot.errors import AgentEnvError
from bot.forge.remote import DEFAULT_GITHUB_API, DEFAULT_GITLAB_URL, ForgeSettings
from bot.settings.agent_env import agent_env, extra_names
from bot.settings.limits import Limits
from bot.settings.policy import ChannelPolicy, Policy
from bot.settings.sandbox_check import default_domains
from bot.settings.values import (
    CHANNEL_ID,
    USER_ID,
    ConfigError,
    base_url,
    domains,
    flag,
    ids,
    listen_host,
    megabytes,
    seconds,
    switch,
    whole_number,
)
from engine.host import redact
from engine.lang import LANGUAGE_ENV, check_language

__all__ = ["AUTO", "LOOPBACK", "Config", "Mode", "load_config", "load_store_config", "mask"]

Mode = Literal["socket", "http"]
DEFAULT_API_URL = "https://slack.com/api/"
DEFAULT_HOME = "~/.flower"
AUTO = Path(".env")  # the default dotenv: the .env of the current folder, read only for os.environ
LOOPBACK = "127.0.0.1"
METRICS_TOKEN_MIN = 16  # characters: a short token can be guessed

_SECRET_PREFIX = re.compile(r"[a-z]{3,5}-")  # xoxb-, xapp-, xoxp-: not secret, and the usual mistake


def mask(secret: str) -> str:
    """``secret`` safe to print: its prefix (``xoxb-``) and at most 2 more characters, then ``…``.

    Short secrets show less, so at least 4 characters always stay hidden; without a known
    prefix only the first 4 characters of a long value show.
    """
    m = _SECRET_PREFIX.match(secret)
    head = m.group(0) if m else ""
    rest = secret[len(head):]
    shown = 2 if head else 4
    shown = max(0, min(shown, len(rest) - 4 - (0 if head else 8)))
    return repr(head + rest[:shown] + "…")


@dataclass(frozen=True)
class Config:
    """The validated settings; build it with ``load_config()``.

    ``allowed_users`` / ``allowed_channels`` empty means everyone / every channel. ``repr()``
    masks the three secrets, so a logged config never leaks a token.
    """

    bot_token: str
    app_token: str = ""
    signing_secret: str = ""
    port: int = 3000
    api_url: str = DEFAULT_API_URL
    home: Path = field(default_factory=lambda: Path(DEFAULT_HOME).expanduser())
    database_url: str | None = None  # FLOWER_DATABASE_URL: the bot's tables on PostgreSQL, not bot.db
    allowed_users: frozenset[str] = frozenset()
    allowed_channels: frozenset[str] = frozenset()
    max_runs: int = 2
    admins: frozenset[str] = frozenset()
    socket_idle_s: float = 600.0  # no Socket Mode frame for this long: reconnect (0 turns the watchdog off)
    question_wait_s: float = 1800.0  # then the run goes on with the question's default, or is parked
    agent_env: Mapping[str, str] = field(default_factory=dict)  # what a run's CLI gets (bot.settings.agent_env)
    allow_everyone: bool = False  # FLOWER_ALLOW_EVERYONE=1: no allow-list is the operator's choice
    sandbox: bool = True  # FLOWER_SANDBOX=off: runs are not fenced in (bot.settings.sandbox_check)
    sandbox_domains: tuple[str, ...] = default_domains(None)  # FLOWER_SANDBOX_DOMAINS
    settings_files: tuple[Path, ...] = ()  # the .env files read: hidden from runs
    language: str = "en"  # FLOWER_LANGUAGE: what the models are told and the workspace files are named (en, zh)
    slack_language: str = "en"  # FLOWER_SLACK_LANGUAGE: the bot's own sentences in Slack (unset: FLOWER_LANGUAGE)
    forges: ForgeSettings = ForgeSettings()  # GITHUB_TOKEN, GITHUB_API_URL, GITLAB_TOKEN, GITLAB_URL: the bot's alone
    auto_pr: bool = False  # FLOWER_AUTO_PR=1: an achieved verdict in a bound channel opens its pull request by itself
    pr_poll_s: float = 60.0  # FLOWER_PR_POLL_S: how often an open pull request is read back (backs off when quiet)
    pr_batch_s: float = 120.0  # FLOWER_PR_BATCH_S: the quiet window that gathers review remarks into one post
    limits: Limits = Limits()  # FLOWER_LIMIT_*_USD: spend limits (bot.settings.limits)
    metrics_port: int | None = None  # FLOWER_METRICS_PORT: /metrics, /healthz, /readyz (0: a free port)
    metrics_host: str = LOOPBACK  # FLOWER_METRICS_HOST: where that endpoint listens (this machine only by default)
    metrics_token: str = ""  # FLOWER_METRICS_TOKEN: the bearer token the endpoint asks for ("" asks none)
    policy: Policy | None = None  # FLOWER_POLICY: per-channel settings over these (bot.settings.policy)
    file_max_mb: float = 20.0  # FLOWER_FILE_MAX_MB: the largest file taken from a thread or posted back (MiB)

    def base_policy(self) -> ChannelPolicy:
        """The settings of a channel the policy file does not name: the environment's."""
        return ChannelPolicy(allowed_users=self.allowed_users, admins=self.admins, question_wait_s=self.question_wait_s,
                             sandbox_domains=self.sandbox_domains, limits=self.limits)

    def for_channel(self, channel: str) -> ChannelPolicy:
        """The settings in effect in ``channel``: its policy table, ``[defaults]``, the environment."""
        return self.policy.channel(channel) if self.policy is not None else self.base_policy()

    @property
    def mode(self) -> Mode:
        """"socket" with an app token (the default), "http" with only a signing secret."""
        if self.app_token:
            return "socket"
        if self.signing_secret:
            return "http"
        raise ConfigError(_NO_MODE)

    @property
    def file_max_bytes(self) -> int:
        """``file_max_mb`` in bytes (a MB here is 1024 × 1024 bytes)."""
        return int(self.file_max_mb * 1024 * 1024)

    @property
    def db_path(self) -> Path:
        """The bot's own SQLite file under ``home`` (unused with ``database_url``)."""
        return self.home / "bot.db"

    def user_allowed(self, user_id: str) -> bool:
        """True when ``user_id`` may start or steer runs (always, with no allow-list)."""
        return not self.allowed_users or user_id in self.allowed_users

    def channel_allowed(self, channel_id: str) -> bool:
        """True when runs may start in ``channel_id`` (always, with no allow-list)."""
        return not self.allowed_channels or channel_id in self.allowed_channels

    def refuse_if_open(self) -> None:
        """Raise ``ConfigError`` when nobody is named who may start runs and the operator did not
        choose to let everyone: the ``flower-bot`` command is closed by default."""
        if not (self.allowed_users or self.allowed_channels or self.allow_everyone):
            raise ConfigError(_OPEN)

    def __repr__(self) -> str:
        secrets = {"bot_token", "app_token", "signing_secret", "metrics_token"}
        parts = []
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name in secrets:
                parts.append(f"{name}={mask(value) if value else repr('')}")
            elif isinstance(value, frozenset):
                parts.append(f"{name}={sorted(value)!r}")
            elif name == "database_url" and value:  # its password is a secret
                parts.append(f"{name}={redact(value)!r}")
            elif name == "agent_env":  # values are secrets (the model's key): names only
                parts.append(f"{name}=<{', '.join(sorted(value))}>")
            else:
                parts.append(f"{name}={value!r}")
        return f"Config({', '.join(parts)})"

    __str__ = __repr__


_OPEN = (
    "Neither FLOWER_ALLOWED_USERS nor FLOWER_ALLOWED_CHANNELS is set, so every member of every channel "
    "the bot is in could run commands on this machine. Set FLOWER_ALLOWED_USERS (U… ids) or "
    "FLOWER_ALLOWED_CHANNELS (C… ids), or FLOWER_ALLOW_EVERYONE=1 to allow that on purpose."
)

_NO_MODE = (
    "SLACK_APP_TOKEN is not set, and neither is SLACK_SIGNING_SECRET. Set SLACK_APP_TOKEN to an "
    "app-level token (xapp-…) for Socket Mode, or SLACK_SIGNING_SECRET (Basic Information → App "
    "Credentials) and PORT for the HTTP Events API."
)


def load_config(environ: Mapping[str, str] | None = None, *, dotenv: str | Path | None = AUTO) -> Config:
    """Read and validate the settings; raise ``ConfigError`` on the first bad one.

    ``environ`` defaults to ``os.environ``. ``dotenv`` is a ``.env`` file whose values fill in
    what the environment lacks (the environment wins); the default ``AUTO`` reads ``./.env`` if it
    exists, but only when ``environ`` is None, so callers passing a mapping see only it. An
    explicit ``dotenv`` path must exist. Empty values count as unset.
    """
    env, dotenv = _settings(environ, dotenv)
    bot_token = _token(env, "SLACK_BOT_TOKEN", "xoxb-", _BOT_TOKEN_FIX, required=True)
    app_token = _token(env, "SLACK_APP_TOKEN", "xapp-", _APP_TOKEN_FIX)
    signing_secret = _signing_secret(env)
    if not app_token and not signing_secret:
        raise ConfigError(_NO_MODE)
    language = _language(env, LANGUAGE_ENV, "en")
    config = Config(
        bot_token=bot_token,
        app_token=app_token,
        signing_secret=signing_secret,
        port=whole_number(env, "PORT", 3000, low=0, high=65535, fix="the port the HTTP Events API listens on"),
        api_url=_api_url(env),
        home=_home(env),
        database_url=_database_url(env),
        allowed_users=ids(env, "FLOWER_ALLOWED_USERS", USER_ID, "user"),
        allowed_channels=ids(env, "FLOWER_ALLOWED_CHANNELS", CHANNEL_ID, "channel"),
        max_runs=whole_number(env, "FLOWER_MAX_RUNS", 2, low=1, high=None, fix="how many runs may go at once"),
        admins=ids(env, "FLOWER_ADMINS", USER_ID, "user", empty="have no admins"),
        socket_idle_s=seconds(env, "FLOWER_SOCKET_IDLE_S", 600.0,
                               fix="how many seconds of Socket Mode silence force a reconnect (0: never)"),
        question_wait_s=seconds(env, "FLOWER_QUESTION_WAIT_S", 1800.0,
                                 fix="how many seconds a question waits for an answer (0: runs never wait)"),
        agent_env=_agent_env(env),
        allow_everyone=flag(env, "FLOWER_ALLOW_EVERYONE", fix="to let everyone in the bot's channels start runs"),
        sandbox=switch(env, "FLOWER_SANDBOX", fix="off only on a machine nobody else uses: runs then reach "
                        "everything the bot's user can"),
        sandbox_domains=domains(env),
        settings_files=(Path(dotenv).resolve(),) if dotenv is not None and Path(dotenv).is_file() else (),
        language=language,
        slack_language=_language(env, "FLOWER_SLACK_LANGUAGE", language),  # a team may read Slack in another
        forges=_forges(env),
        auto_pr=flag(env, "FLOWER_AUTO_PR", fix="to open a pull request by itself when a bound thread's goal is achieved"),
        pr_poll_s=seconds(env, "FLOWER_PR_POLL_S", 60.0, positive=True,
                          fix="how many seconds between two reads of an open pull request's reviews and checks"),
        pr_batch_s=seconds(env, "FLOWER_PR_BATCH_S", 120.0,
                           fix="how many quiet seconds gather a pull request's review remarks into one post"),
        limits=_limits(env),
        metrics_port=whole_number(env, "FLOWER_METRICS_PORT", 0, low=0, high=65535,
                                  fix="the port of /metrics, /healthz and /readyz")
        if env.get("FLOWER_METRICS_PORT") else None,
        metrics_host=listen_host(env, "FLOWER_METRICS_HOST", LOOPBACK, fix=f"Leave it unset for {LOOPBACK} (this "
                                 "machine only), or set 0.0.0.0 (every interface, as in a container scraped from "
                                 "outside) and FLOWER_METRICS_TOKEN."),
        metrics_token=_metrics_token(env),
        file_max_mb=megabytes(env, "FLOWER_FILE_MAX_MB", 20.0,
                              fix="the largest file flower takes from a thread or posts back"),
    )
    return replace(config, policy=Policy(_policy_path(env, config.home), config.base_policy(), env))


def load_store_config(environ: Mapping[str, str] | None = None, *, dotenv: str | Path | None = AUTO
                      ) -> tuple[Config, str]:
    """Only what reaching the bot's store takes (``FLOWER_HOME``, ``FLOWER_DATABASE_URL``: raises
    ``ConfigError`` for those alone), for the reports an operator reads while the bot's other
    settings may be broken; and why the policy file would stop the bot ("" when it would not)."""
    env, _ = _settings(environ, dotenv)
    config = Config(bot_token="", home=_home(env), database_url=_database_url(env))
    try:
        Policy(_policy_path(env, config.home), ChannelPolicy(), env)
    except ConfigError as exc:
        return config, str(exc)
    return config, ""


def _policy_path(env: dict[str, str], home: Path) -> Path:
    return Path(env.get("FLOWER_POLICY") or home / "policy.toml").expanduser()


def _limits(env: dict[str, str]) -> Limits:
    try:
        return Limits.from_env(env)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _metrics_token(env: dict[str, str]) -> str:
    value = env.get("FLOWER_METRICS_TOKEN", "")
    if value and (len(value) < METRICS_TOKEN_MIN or not all("!" <= c <= "~" for c in value)):
        raise ConfigError(f"FLOWER_METRICS_TOKEN must be at least {METRICS_TOKEN_MIN} printable ASCII characters "
                          f"with no spaces; got {mask(value)} ({len(value)} characters). Make one with: "
                          "python -c 'import secrets; print(secrets.token_urlsafe(32))'")
    return value


def _forges(env: dict[str, str]) -> ForgeSettings:
    for name in ("GITHUB_TOKEN", "GITLAB_TOKEN", "GITHUB_WEBHOOK_SECRET", "GITLAB_WEBHOOK_TOKEN"):
        if any(c.isspace() for c in env.get(name, "")):
            raise ConfigError(f"{name} contains whitespace; got {mask(env[name])}. Paste the token alone, on one line.")
    return ForgeSettings(github_token=env.get("GITHUB_TOKEN", ""),
                         github_api_url=base_url(env, "GITHUB_API_URL", DEFAULT_GITHUB_API,
                                                  example="https://ghe.example.com/api/v3"),
                         gitlab_token=env.get("GITLAB_TOKEN", ""),
                         gitlab_url=base_url(env, "GITLAB_URL", DEFAULT_GITLAB_URL, example="https://gitlab.example.com"),
                         github_webhook_secret=env.get("GITHUB_WEBHOOK_SECRET", ""),
                         gitlab_webhook_token=env.get("GITLAB_WEBHOOK_TOKEN", ""))


def _language(env: dict[str, str], name: str, default: str) -> str:
    try:
        return check_language(env.get(name) or default, source=name)
    except ValueError as exc:
        unset = "" if name == LANGUAGE_ENV else f" Or leave it unset to follow {LANGUAGE_ENV}."
        raise ConfigError(f"{exc}{unset}") from None


def _agent_env(env: dict[str, str]) -> dict[str, str]:
    try:
        return agent_env(env, extra_names(env.get("FLOWER_AGENT_ENV", "")))
    except AgentEnvError as exc:
        raise ConfigError(str(exc)) from None


_BOT_TOKEN_FIX = "Copy the Bot User OAuth Token (OAuth & Permissions → Install to Workspace)."
_APP_TOKEN_FIX = "Create an app-level token with the connections:write scope (Basic Information → App-Level Tokens)."


def _settings(environ: Mapping[str, str] | None, dotenv: str | Path | None) -> tuple[dict[str, str], Path | None]:
    """The environment (``os.environ`` by default) over the ``.env`` file, and that file if read:
    ``AUTO`` is read only for the process's own environment."""
    if environ is not None and dotenv is AUTO:
        dotenv = None
    return _merge(os.environ if environ is None else environ, dotenv), None if dotenv is None else Path(dotenv)


def _merge(environ: Mapping[str, str], dotenv: str | Path | None) -> dict[str, str]:
    merged: dict[str, str] = {}
    if dotenv is not None:
        path = Path(dotenv)
        if path.exists() or dotenv is not AUTO:
            if not path.is_file():
                raise ConfigError(
                    f"the settings file {str(path)!r} does not exist or is not a file. Create it "
                    "(one VARIABLE=value a line) or start the bot without it."
                )
            merged.update({k: v for k, v in dotenv_values(path).items() if v is not None})
    merged.update(environ)
    return {k: v.strip() for k, v in merged.items() if isinstance(v, str) and v.strip()}


def _token(env: dict[str, str], name: str, prefix: str, fix: str, *, required: bool = False) -> str:
    value = env.get(name, "")
    if not value:
        if required:
            raise ConfigError(f"{name} is not set. Set it to your app's {prefix}… token. {fix}")
        return ""
    if not value.startswith(prefix):
        raise ConfigError(f"{name} must start with {prefix}; got {mask(value)}. {fix}")
    if any(c.isspace() for c in value):
        raise ConfigError(f"{name} contains whitespace; got {mask(value)}. Paste the token alone, on one line.")
    return value


def _signing_secret(env: dict[str, str]) -> str:
    value = env.get("SLACK_SIGNING_SECRET", "")
    if value and (any(c.isspace() for c in value) or value.startswith(("xox", "xapp-"))):
        raise ConfigError(
            f"SLACK_SIGNING_SECRET does not look like a signing secret; got {mask(value)}. Copy the "
            "Signing Secret (Basic Information → App Credentials), not a token."
        )
    return value


def _api_url(env: dict[str, str]) -> str:
    raw = env.get("SLACK_API_URL")
    if raw is None:
        return DEFAULT_API_URL
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ConfigError(
            f"SLACK_API_URL must be an http(s) URL of the Web API base; got {raw!r}. Set it to "
            f"{DEFAULT_API_URL} (the default), or to your proxy's base URL."
        )
    return raw if raw.endswith("/") else raw + "/"  # slack_sdk appends method names to it


def _home(env: dict[str, str]) -> Path:
    raw = env.get("FLOWER_HOME", DEFAULT_HOME)
    home = Path(raw).expanduser()
    if not home.is_absolute():
        home = Path.cwd() / home
    if home.exists() and not home.is_dir():
        raise ConfigError(
            f"FLOWER_HOME must be a folder; got {raw!r}, which is a file. Point it at a folder "
            "(it is created if missing) where workspaces and bot.db may live."
        )
    return home


def _database_url(env: dict[str, str]) -> str | None:
    raw = env.get("FLOWER_DATABASE_URL")
    if raw is None:
        return None
    if not raw.startswith(("postgresql://", "postgres://")):
        raise ConfigError(
            f"FLOWER_DATABASE_URL must be a postgresql:// URL; got {redact(raw)!r}. Set it to "
            "postgresql://user:password@host:5432/database, or leave it unset to keep the bot's state "
            "in bot.db under FLOWER_HOME."
        )
    if "@" in raw.split("=")[0] and "@" not in urlsplit(raw).netloc:  # a '/', '?', '#' in it ends the host
        raise ConfigError(f"FLOWER_DATABASE_URL's password holds a '/', '?' or '#' (got …@{raw.rsplit('@', 1)[1]}); "
                          "percent-encode them in the user and password: / as %2F, ? as %3F, # as %23.")
    if find_spec("asyncpg") is None:  # else the first store operation fails with an ImportError
        raise ConfigError("FLOWER_DATABASE_URL is set, but the PostgreSQL driver (asyncpg) is not installed. "
                          "Run: pip install 'flower[postgres]', or unset FLOWER_DATABASE_URL to use bot.db.")
    return raw



"""Per-channel policy: one TOML file (``FLOWER_POLICY``, default ``FLOWER_HOME/policy.toml``).

A ``[defaults]`` table and ``[channel.C…]`` tables; a key is its environment variable's name
without ``FLOWER_``, lower-cased (``model``, ``allowed_users``, ``admins``, ``question_wait_s``,
``sandbox_domains``, ``agent_env``, ``limit_request_usd`` … ``limit_month_usd``), plus
``instructions`` (standing instructions for the coordinator and the judge), ``rounds`` (the
judge's rounds per request), ``pr_followup`` (``"ask"``: a review on the thread's pull request
waits for a person's Work on this; ``"auto"``: it starts a follow-up by itself) and
``pr_allowed_users`` (forge logins who may steer from the pull request besides its writers).
A channel's table overrides ``[defaults]``, which overrides the environment.

The file is the operator's (under FLOWER_HOME, which no run can see). It is validated at start
(a bad one stops the bot, naming the file, the table, the key and the fix) and read again
whenever it changes, without a restart: a bad edit is refused the same way in the log, and the
last good policy stays in force.
"""

from __future__ import annotations

import logging
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bot.errors import AgentEnvError, ConfigError
from bot.settings.agent_env import agent_env, extra_names
from bot.settings.limits import ENV as LIMIT_ENV
from bot.settings.limits import Limits, parse_usd
from bot.settings.values import CHANNEL_ID, PERSON_OR_GROUP, domains, ids, seconds, whole_number

log = logging.getLogger(__name__)

__all__ = ["KEYS", "ChannelPolicy", "Policy"]

MAX_BYTES = 1_000_000
_LIMIT_KEYS = {name.removeprefix("FLOWER_").lower(): scope for scope, name in LIMIT_ENV.items()}
KEYS = ("model", "allowed_users", "admins", "question_wait_s", "sandbox_domains", "agent_env", "instructions",
        "rounds", "pr_followup", "pr_allowed_users", *_LIMIT_KEYS)
PR_FOLLOWUPS = ("ask", "auto")
_FORGE_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?")


@dataclass(frozen=True)
class ChannelPolicy:
    """The settings in effect in one channel."""

    model: str = ""  # "" leaves the CLI's default (or ANTHROPIC_MODEL)
    allowed_users: frozenset[str] = frozenset()  # empty: anyone the bot's own allow-list lets in
    admins: frozenset[str] = frozenset()
    question_wait_s: float = 1800.0
    sandbox_domains: tuple[str, ...] = ()
    agent_env: Mapping[str, str] | None = None  # None: the bot's FLOWER_AGENT_ENV as it is
    instructions: str = ""
    rounds: int = 3
    pr_followup: str = "ask"  # "ask" | "auto": what a review on the pull request does (PR_FOLLOWUPS)
    pr_allowed_users: frozenset[str] = frozenset()  # forge logins who may steer besides the repository's writers
    limits: Limits = Limits()

    def user_allowed(self, user: str) -> bool:
        return not self.allowed_users or user in self.allowed_users


class Policy:
    """``path``'s policy over ``base`` (the environment's settings); ``channel()`` reads it again
    when the file changed. ``environ`` is where an ``agent_env`` key's names take their values."""

    def __init__(self, path: Path, base: ChannelPolicy, environ: Mapping[str, str]) -> None:
        self.path, self.base, self.environ = path, base, dict(environ)
        self._stamp: tuple[float, int] | None = None
        self._tables: dict[str, dict[str, Any]] = {}
        self._channels: dict[str, ChannelPolicy] = {}  # built once per channel per version of the file
        self._refused: tuple[float, int] | None = None
        self.error = ""  # why the file's last edit was refused ("" while the file is in force)
        self._load(strict=True)

    def channel(self, channel: str) -> ChannelPolicy:
        """The settings in effect in ``channel`` now."""
        self._load(strict=False)
        if channel not in self._channels:  # asked for every event (the allow-list): built once
            merged = {**self._tables.get("defaults", {}), **self._tables.get(f"channel.{channel}", {})}
            self._channels[channel] = self._apply(merged)
        return self._channels[channel]

    def defaults(self) -> ChannelPolicy:
        """The ``[defaults]`` table over the environment: what no channel's table has changed (its
        ``admins`` are the installation's, with ``FLOWER_ADMINS``)."""
        self._load(strict=False)
        return self._apply(self._tables.get("defaults", {}))

    def tables(self) -> dict[str, dict[str, Any]]:
        """The policy in force, table by table (``/policy`` shows them)."""
        self._load(strict=False)
        return {k: dict(v) for k, v in self._tables.items()}

    # -- reading --------------------------------------------------------------------------------

    def _load(self, *, strict: bool) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            if self._stamp is not None or self._tables:
                self._tables, self._stamp, self._channels = {}, None, {}
            return
        stamp = (st.st_mtime, st.st_size)
        if stamp == self._stamp or stamp == self._refused:
            return
        try:
            self._tables, self._channels = self._read(st.st_size), {}
            self._stamp, self._refused, self.error = stamp, None, ""
        except ConfigError as exc:
            if strict:
                raise
            self._refused, self.error = stamp, str(exc)  # said once per edit; the last good policy stays
            log.error("%s; the policy in force stays as it was until the file is fixed", exc)

    def _read(self, size: int) -> dict[str, dict[str, Any]]:
        where = str(self.path)
        if size > MAX_BYTES:
            raise ConfigError(f"{where} is {size} bytes; a policy file is at most {MAX_BYTES}. Keep it to the "
                              "[defaults] and [channel.C…] tables.")
        try:
            data = tomllib.loads(self.path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{where} is not valid TOML ({exc}). Fix the line it names.") from None
        tables: dict[str, dict[str, Any]] = {}
        for name, table in data.items():
            if name == "defaults" and isinstance(table, dict):
                tables["defaults"] = table
            elif name == "channel" and isinstance(table, dict):
                for channel, settings in table.items():
                    if not CHANNEL_ID.fullmatch(channel) or not isinstance(settings, dict):
                        raise ConfigError(f"{where}: [channel.{channel}] is not a channel's table. Name it by the "
                                          "channel's ID, as [channel.C0123ABCD], with its settings under it.")
                    tables[f"channel.{channel}"] = settings
            else:
                raise ConfigError(f"{where}: unknown table [{name}]. Use [defaults] and [channel.C…] tables only.")
        for table, settings in tables.items():
            for key, value in settings.items():
                self._check(where, table, key, value)
        return tables

    def _check(self, where: str, table: str, key: str, value: Any) -> None:
        if key not in KEYS:
            raise ConfigError(f"{where} [{table}]: unknown key {key!r}. Use one of: {', '.join(KEYS)}.")
        try:
            self._apply({key: value})
        except (ConfigError, AgentEnvError, ValueError, TypeError) as exc:
            raise ConfigError(f"{where} [{table}]: {exc}") from None

    def _apply(self, settings: Mapping[str, Any]) -> ChannelPolicy:
        """``base`` with ``settings`` (the merged tables) in force; raises for a bad value."""
        out, limits = self.base, {}

        def raw(key: str) -> dict[str, str]:
            value = settings[key]
            if isinstance(value, list):
                value = ",".join(str(v) for v in value)
            elif isinstance(value, bool):
                value = "1" if value else "0"
            return {key: str(value)}

        for key in settings:
            if key == "model":
                if not isinstance(settings[key], str) or not settings[key].strip():
                    raise ConfigError("model must be a model's name, such as claude-sonnet-4-5")
                out = replace(out, model=settings[key].strip())
            elif key in ("allowed_users", "admins"):
                out = replace(out, **{key: ids(raw(key), key, PERSON_OR_GROUP, "user")})
            elif key == "question_wait_s":
                out = replace(out, question_wait_s=seconds(raw(key), key, out.question_wait_s,
                                                           fix="how long a question waits"))
            elif key == "sandbox_domains":
                out = replace(out, sandbox_domains=domains({"FLOWER_SANDBOX_DOMAINS": raw(key)[key]}))
            elif key == "agent_env":
                out = replace(out, agent_env=agent_env(self.environ, extra_names(raw(key)[key])))
            elif key == "instructions":
                if not isinstance(settings[key], str):
                    raise ConfigError("instructions must be a string (use ''' … ''' for several lines)")
                out = replace(out, instructions=settings[key].strip())
            elif key == "rounds":
                out = replace(out, rounds=whole_number(raw(key), key, out.rounds, low=1, high=50,
                                                       fix="the judge's rounds per request"))
            elif key == "pr_followup":
                if settings[key] not in PR_FOLLOWUPS:
                    raise ConfigError(f"pr_followup must be \"ask\" (a review waits for Work on this) or \"auto\" "
                                      f"(a review starts a follow-up by itself); got {settings[key]!r}")
                out = replace(out, pr_followup=settings[key])
            elif key == "pr_allowed_users":
                out = replace(out, pr_allowed_users=_forge_logins(settings[key]))
            elif key in _LIMIT_KEYS:
                limits[_LIMIT_KEYS[key]] = parse_usd(raw(key)[key], source=key)
        return replace(out, limits=out.limits.over(limits)) if limits else out


def _forge_logins(value: Any) -> frozenset[str]:
    """``pr_allowed_users``: a list of GitHub or GitLab logins (``octocat``), compared without case."""
    if not isinstance(value, list) or not all(isinstance(v, str) and _FORGE_LOGIN.fullmatch(v) for v in value):
        raise ConfigError(f"pr_allowed_users must be a list of forge logins, such as [\"octocat\"]; got {value!r}")
    return frozenset(v.lower() for v in value)

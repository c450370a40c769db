"""How each kind of setting is read, for the environment (``bot.settings.config``) and the policy file
(``bot.settings.policy``) alike: a bad value raises ``ConfigError`` with one line naming the setting, the
value and the fix."""

from __future__ import annotations

import re
from ipaddress import ip_address
from urllib.parse import urlsplit

from bot.core.outside_text import mask_credentials
from bot.errors import ConfigError
from bot.settings.sandbox_check import default_domains

__all__ = ["CHANNEL_ID", "PERSON_OR_GROUP", "USER_ID", "base_url", "domains", "flag", "ids",
           "listen_host", "seconds", "switch", "whole_number"]

USER_ID = re.compile(r"[UW][A-Z0-9]{2,}")
PERSON_OR_GROUP = re.compile(r"[UWS][A-Z0-9]{2,}")  # a policy may name user groups (S…) too
CHANNEL_ID = re.compile(r"[CGD][A-Z0-9]{2,}")


def base_url(env: dict[str, str], name: str, default: str, *, example: str) -> str:
    raw = env.get(name)
    if raw is None:
        return default
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment or "@" in parts.netloc:
        raise ConfigError(f"{name} must be an http(s) URL with no credentials, query or fragment; got "
                          f"{mask_credentials(raw)!r}. Set it to {default} (the default) or your server's, such as {example}.")
    return raw.rstrip("/")


def listen_host(env: dict[str, str], name: str, default: str, *, fix: str) -> str:
    """An IP address (or ``localhost``) a server listens on."""
    raw = env.get(name, default)
    try:
        return raw if raw == "localhost" else str(ip_address(raw))
    except ValueError:
        raise ConfigError(f"{name} must be an IP address to listen on; got {raw!r}. {fix}") from None


def switch(env: dict[str, str], name: str, *, fix: str) -> bool:
    raw = env.get(name, "on").lower()
    if raw not in ("on", "off", "1", "0"):
        raise ConfigError(f"{name} must be on or off; got {raw!r}. Leave it unset (on), or set it {fix}.")
    return raw in ("on", "1")


DOMAIN = re.compile(r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*")


def domains(env: dict[str, str]) -> tuple[str, ...]:
    raw = env.get("FLOWER_SANDBOX_DOMAINS")
    if raw is None:
        return default_domains(env.get("ANTHROPIC_BASE_URL"))
    names = [part for part in re.split(r"[\s,]+", raw) if part]
    if names == ["none"]:
        return ()  # no network for commands at all
    for name in names:
        if not DOMAIN.fullmatch(name):
            raise ConfigError(
                f"FLOWER_SANDBOX_DOMAINS must list host names (pypi.org, *.example.com), separated by "
                f"commas, or none; got {name!r}. Give the host alone, without scheme, port or path.")
    return tuple(names)


def flag(env: dict[str, str], name: str, *, fix: str) -> bool:
    raw = env.get(name, "0")
    if raw not in ("0", "1"):
        raise ConfigError(f"{name} must be 1 or 0; got {raw!r}. Set it to 1 {fix}, or leave it unset.")
    return raw == "1"


def whole_number(env: dict[str, str], name: str, default: int, *, low: int, high: int | None, fix: str) -> int:
    raw = env.get(name)
    if raw is None:
        return default
    span = f"from {low} to {high}" if high is not None else f"of at least {low}"
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or value < low or (high is not None and value > high):
        raise ConfigError(f"{name} must be a whole number {span}; got {raw!r}. Set it to {fix} (default {default}).")
    return value


def _number(raw: str) -> float:
    """``raw`` as a number, or -1 (out of every caller's range) when it is none."""
    try:
        return float(raw)
    except ValueError:
        return -1.0


def megabytes(env: dict[str, str], name: str, default: float, *, fix: str) -> float:
    """``name`` as megabytes: more than 0 and at most 1024 (Slack takes no file over 1 GB)."""
    raw = env.get(name)
    if raw is None:
        return default
    value = _number(raw)
    if not 0 < value <= 1024:  # also refuses nan and inf
        raise ConfigError(f"{name} must be a number of megabytes, more than 0 and at most 1024; got {raw!r}. "
                          f"Set it to {fix} (default {default:g}).")
    return value


def seconds(env: dict[str, str], name: str, default: float, *, fix: str, positive: bool = False) -> float:
    """``name`` as seconds: 0 or more (``positive``: more than 0), finite."""
    raw = env.get(name)
    if raw is None:
        return default
    value = _number(raw)
    if not (value > 0 if positive else value >= 0) or value == float("inf"):  # also refuses nan
        raise ConfigError(f"{name} must be a number of seconds, {'more than 0' if positive else '0 or more'}; "
                          f"got {raw!r}. Set it to {fix} (default {default:g}).")
    return value


def ids(
    env: dict[str, str], name: str, shape: re.Pattern[str], kind: str, *, empty: str = "allow everyone"
) -> frozenset[str]:
    raw = env.get(name, "")
    ids = [part for part in re.split(r"[\s,]+", raw) if part]
    first, where = ("U… or W…", "their profile (⋮ → Copy member ID)") if kind == "user" else (
        "C…, G… or D…", "the channel details (the About tab shows the Channel ID)")
    for item in ids:
        if not shape.fullmatch(item):
            raise ConfigError(
                f"{name} must list Slack {kind} ids ({first}), separated by commas or spaces; got "
                f"{item!r}. Copy the id from {where}, not the name, or leave it empty to {empty}."
            )
    return frozenset(ids)

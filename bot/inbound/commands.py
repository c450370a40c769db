"""What a person's message in a thread asks for, read once (``read``): ``/new`` in its accepted
spellings, ``/repo``, ``/limit``, ``/policy``, or plain words (a request or a reply).

Slack refuses slash commands typed in a thread and drops unknown ``/`` messages, so besides
``/new`` (with a leading space, which Slack lets through) we accept ``!new`` and ``@bot /new``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
_NEW = re.compile(r"[/!]new(?:\s+|$)(.*)", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Said:
    """A message's meaning: ``new`` (archive and start over with ``text``, maybe empty) or ``words``."""

    new: bool
    text: str


def strip_mentions(text: str) -> str:
    """``text`` without ``<@U…>`` mention tags, trimmed."""
    return _MENTION.sub("", text or "").strip()


def parse(text: str) -> Said:
    """Read a message: ``/new …``, `` /new …``, ``@bot /new …``, ``!new …`` -> ``Said(True, rest)``.

    Anything else is ``Said(False, words)`` with mention tags removed. ``/newer`` is words.
    """
    words = strip_mentions(text)
    m = _NEW.fullmatch(words)
    if m:
        return Said(True, m.group(1).strip())
    return Said(False, words)


_REPO = re.compile(r"[/!]repo(?:\s+|$)(.*)", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class RepoCommand:
    """``/repo [source [base]]``: no ``source`` shows the channel's binding."""

    source: str = ""
    base: str | None = None


def parse_repo(text: str) -> RepoCommand | None:
    """``@bot /repo <path or URL> [base]`` -> ``RepoCommand``; None when the message is not ``/repo``.

    Slack wraps URLs as ``<https://...>`` or ``<https://...|label>``: the URL inside is used.
    """
    m = _REPO.fullmatch(strip_mentions(text))
    if m is None:
        return None
    words = [re.sub(r"^<([^|>]+)(?:\|[^>]*)?>$", r"\1", w) for w in m.group(1).split()]
    return RepoCommand(words[0] if words else "", words[1] if len(words) > 1 else None)


_LIMIT = re.compile(r"[/!]limit(?:\s+|$)(.*)", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class LimitCommand:
    """``/limit [scope amount]``: no ``scope`` shows the limits here; ``amount`` is dollars or ``off``."""

    scope: str = ""
    amount: str = ""


def parse_limit(text: str) -> LimitCommand | None:
    """``@bot /limit request 0.50`` -> ``LimitCommand("request", "0.50")``; None when not ``/limit``."""
    m = _LIMIT.fullmatch(strip_mentions(text))
    if m is None:
        return None
    words = m.group(1).split()
    return LimitCommand(words[0].lower() if words else "", words[1] if len(words) > 1 else "")


_POLICY = re.compile(r"[/!]policy\s*", re.IGNORECASE)


@dataclass(frozen=True)
class PolicyCommand:
    """``/policy``: the settings in effect in this channel."""


def is_policy(text: str) -> bool:
    """``@bot /policy``: the settings in effect in this channel."""
    return _POLICY.fullmatch(strip_mentions(text)) is not None


Command = RepoCommand | LimitCommand | PolicyCommand
Message = Command | Said  # a message's one meaning: a command answered in the thread, or ``Said`` (words, /new)


def read(text: str) -> Message:
    """What a message is, decided once: ``/repo``, ``/limit`` or ``/policy`` (answered in the thread),
    else ``Said``: ``/new`` (archive and start over) or plain words."""
    repo = parse_repo(text)
    if repo is not None:
        return repo
    limit = parse_limit(text)
    if limit is not None:
        return limit
    return PolicyCommand() if is_policy(text) else parse(text)

"""The outbox's dedupe keys, built in one place: ``<kind>:<part>:<part>…``.

A key names one notice for good: the outbox posts each key once (``bot.slack.outbox``), across
restarts and replicas, so a key must come out byte for byte the same every time it is built for
the same notice. A thread in a key is its folder name (``bot.folders.folder_name``).
"""

from __future__ import annotations

from bot.folders import folder_name
from bot.records import ThreadKey

__all__ = ["notice_key"]


def notice_key(kind: str, *parts: object) -> str:
    """The key of notice ``kind`` for ``parts`` (a ``ThreadKey`` is written as its folder name)."""
    return ":".join([kind, *(folder_name(p) if isinstance(p, ThreadKey) else str(p) for p in parts)])

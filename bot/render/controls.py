"""What the bot's buttons act on: a thread as a button value, and a question message's outbox key.

A button's value names what it acts on (the thread here; a question row id and option index in
``bot.render.messages``), so a click works after a restart: nothing is in memory. The buttons themselves
are built by ``bot.render.messages``.
"""

from __future__ import annotations

from bot.store.bot_store import ThreadKey


def thread_value(key: ThreadKey) -> str:
    """A thread as a button value: ``team|channel|thread_ts``."""
    return "|".join(key)


def parse_thread_value(value: str) -> ThreadKey | None:
    """The thread a button value names, or None for a malformed value."""
    parts = (value or "").split("|")
    return ThreadKey(*parts) if len(parts) == 3 and all(parts) else None


def question_notice_key(key: ThreadKey, qid: int) -> str:
    """The outbox dedupe key of the message showing question ``qid`` (its ts is found by it)."""
    return f"question:{'-'.join(key)}:{qid}"

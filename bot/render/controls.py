"""What the bot's buttons act on: a thread as a button value, and a question message's outbox key.

A button's value names what it acts on (the thread here; a question row id and option index in
``bot.render.messages``), so a click works after a restart: nothing is in memory. The buttons themselves
are built by ``bot.render.messages``.
"""

from __future__ import annotations

from bot.core.thread import ThreadKey, notice_key


def thread_value(key: ThreadKey, branch: str = "") -> str:
    """A thread as a button value: ``team|channel|thread_ts``, and ``|branch`` for a button that
    acts on the branch its message shows (Push: never whatever the worktree has checked out)."""
    return "|".join([*key, branch] if branch else key)


def parse_thread_value(value: str) -> ThreadKey | None:
    """The thread a button value names, or None for a malformed value."""
    parts = (value or "").split("|", 3)
    return ThreadKey(*parts[:3]) if len(parts) in (3, 4) and all(parts) else None


def parse_branch(value: str) -> str | None:
    """The branch a button value names after its thread, or None (an older message's button)."""
    parts = (value or "").split("|", 3)
    return parts[3] if len(parts) == 4 and parts[3] else None


def question_notice_key(key: ThreadKey, qid: int) -> str:
    """The outbox dedupe key of the message showing question ``qid`` (its ts is found by it)."""
    return notice_key("question", "-".join(key), qid)  # the thread as "-"-joined parts, as it always was

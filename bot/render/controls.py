"""What the bot's buttons act on: a thread as a button value, and a question message's outbox key.

A button's value names what it acts on (the thread here; a question row id and option index in
``bot.render.messages``), so a click works after a restart: nothing is in memory. The buttons themselves
are built by ``bot.render.messages``.

Feedback buttons under a run's final message: Slack's ``context_actions`` block with a ``feedback_buttons`` element (slack_sdk 3.37+), and what their values and answers say. Each value names the thread and the sentiment (``positive|team|channel|thread_ts``), so a click is understood after a restart too.
"""

from __future__ import annotations

from slack_sdk.models.blocks import ContextActionsBlock, FeedbackButtonsElement

from bot.core.thread import ThreadKey, notice_key
from bot.render import texts
from bot.render.block_kit import MAX_BLOCKS, Payload
from bot.store.surface_rows import Sentiment


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


# -- Feedback buttons under a run's final message ----------------------------------------
SENTIMENTS: tuple[Sentiment, ...] = ("positive", "negative")
FEEDBACK_ACTION = "flower_feedback"


def feedback_block(key: ThreadKey) -> dict:
    """The ``context_actions`` block with 👍 / 👎 for the run of thread ``key``."""
    thread = thread_value(key)
    buttons = {s: {"text": {"type": "plain_text", "text": texts.FEEDBACK_LABEL[s], "emoji": True},
                   "value": f"{s}|{thread}", "accessibility_label": texts.FEEDBACK_SAY[s]} for s in SENTIMENTS}
    element = FeedbackButtonsElement(action_id=FEEDBACK_ACTION, positive_button=buttons["positive"],
                                     negative_button=buttons["negative"])
    return ContextActionsBlock(elements=[element]).to_dict()


def with_feedback(payload: Payload, key: ThreadKey) -> Payload:
    """``payload`` with the feedback buttons as its last block; as it is when it has no blocks
    or no room left (Slack takes 50 blocks a message)."""
    blocks = list(payload.get("blocks") or [])
    if not blocks or len(blocks) >= MAX_BLOCKS:
        return payload
    return {**payload, "blocks": [*blocks, feedback_block(key)]}


def parse_value(value: str) -> tuple[Sentiment, ThreadKey] | None:
    """The sentiment and thread a feedback button's value names, or None for a malformed one."""
    sentiment, _, thread = (value or "").partition("|")
    key = parse_thread_value(thread)
    if sentiment not in SENTIMENTS or key is None or parse_branch(thread) is not None:
        return None
    return sentiment, key  # type: ignore[return-value]


def thanks(sentiment: Sentiment, *, changed: bool) -> str:
    """The ephemeral answer to a feedback click (a second click says the feedback changed)."""
    return (texts.FEEDBACK_CHANGED if changed else texts.FEEDBACK_THANKS).format(label=texts.FEEDBACK_LABEL[sentiment])

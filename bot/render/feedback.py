"""Feedback buttons under a run's final message: Slack's ``context_actions`` block with a
``feedback_buttons`` element (slack_sdk 3.37+), and what their values and answers say.

Each button's value names the thread and the sentiment (``positive|team|channel|thread_ts``), so
a click is understood after a restart: nothing is kept in memory.
"""

from __future__ import annotations

from slack_sdk.models.blocks import ContextActionsBlock, FeedbackButtonsElement

from bot.core.thread import ThreadKey
from bot.render import controls, texts
from bot.render.block_kit import MAX_BLOCKS, Payload
from bot.store.surface_rows import Sentiment

__all__ = ["FEEDBACK_ACTION", "Sentiment", "feedback_block", "parse_value", "thanks", "with_feedback"]

SENTIMENTS: tuple[Sentiment, ...] = ("positive", "negative")
FEEDBACK_ACTION = "flower_feedback"



def feedback_block(key: ThreadKey) -> dict:
    """The ``context_actions`` block with 👍 / 👎 for the run of thread ``key``."""
    thread = controls.thread_value(key)
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
    key = controls.parse_thread_value(thread)
    if sentiment not in SENTIMENTS or key is None or controls.parse_branch(thread) is not None:
        return None
    return sentiment, key  # type: ignore[return-value]


def thanks(sentiment: Sentiment, *, changed: bool) -> str:
    """The ephemeral answer to a feedback click (a second click says the feedback changed)."""
    return (texts.FEEDBACK_CHANGED if changed else texts.FEEDBACK_THANKS).format(label=texts.FEEDBACK_LABEL[sentiment])

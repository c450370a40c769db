"""The bot's interactive Block Kit: question buttons and the status line's Stop / Start over.

Action ids are what ``bot.app`` listens for; a button's value names what it acts on (a question
row id and option index, or the thread), so a click works after a restart: nothing is in memory.
"""

from __future__ import annotations

from typing import Any

from bot.block_kit import button, context, section
from bot.split import clip, escape
from bot.store import ThreadKey

ANSWER_PREFIX = "flower_answer_"
STOP = "flower_stop"
START_OVER = "flower_start_over"
MAX_OPTIONS = 25  # Slack's limit of elements in one actions block


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


def _question(text: str, asked_by: str = "") -> dict[str, Any]:
    return section(f"*Question{' from ' + escape(asked_by) if asked_by else ''}:*\n{clip(escape(text), 2800)}")


def question_blocks(qid: int, text: str, options: tuple[str, ...], asked_by: str = "") -> list[dict[str, Any]]:
    """A question with one button per option (value ``<qid>:<index>``) and how to answer freely."""
    blocks = [_question(text, asked_by)]
    if options:
        blocks.append({"type": "actions", "block_id": f"q{qid}",
                       "elements": [button(o, f"{ANSWER_PREFIX}{i}", f"{qid}:{i}")
                                    for i, o in enumerate(options[:MAX_OPTIONS])]})
    hint = "Pick an option, or reply in this thread in your own words." if options else "Reply in this thread to answer."
    blocks.append(context(hint))
    return blocks


def answered_blocks(text: str, answer: str, by: str) -> list[dict[str, Any]]:
    """The question with its buttons replaced by the answer and who gave it."""
    return [_question(text), context(f":white_check_mark: *{clip(escape(answer), 1000)}* — answered by <@{by}>")]


def closed_blocks(text: str, why: str) -> list[dict[str, Any]]:
    """The question with its buttons removed because the run stopped waiting (``why``)."""
    return [_question(text), context(f":hourglass: {why}")]


def status_blocks(text: str, key: ThreadKey, *, running: bool) -> list[dict[str, Any]]:
    """The run's status line with Stop (while running) and Start over buttons."""
    buttons = [button("Start over", START_OVER, thread_value(key))]
    if running:
        buttons.insert(0, button("Stop", STOP, thread_value(key), style="danger"))
    return [section(text), {"type": "actions", "block_id": "status", "elements": buttons}]

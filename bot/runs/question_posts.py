"""How a run's questions look in its thread: posted with buttons, shown answered, shown closed.

``SlackTransport`` (``bot.runs.transport``) decides when; this says it, through the outbox (a
question is posted once) and message edits.
"""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey, notice_key
from bot.outbound.outbox import Outbox, edit
from bot.render import controls
from bot.render import deadline as render_deadline
from bot.render import messages as render
from bot.store.bot_store import Question as StoredQuestion
from engine.authoring import Question

__all__ = ["QuestionPosts"]


class QuestionPosts:
    """The question messages of every thread (one per bot: it holds no run's state)."""

    def __init__(self, *, client: AsyncWebClient, outbox: Outbox) -> None:
        self.client, self.outbox = client, outbox

    async def post(self, key: ThreadKey, qid: int, q: Question) -> str | None:
        """Post question ``q`` (row ``qid``) in thread ``key``; its message ts."""
        note = render_deadline.deadline_note(q.timeout_s, q.default)
        shown = render.question_message(qid, q.text, q.options, q.asked_by, deadline_note=note)
        return await self.outbox.post(key, "question", controls.question_notice_key(key, qid), shown["text"],
                                      shown["blocks"])

    async def show_answered(self, q: StoredQuestion) -> None:
        """The question's message shows its answer, without buttons (the click could not edit it yet)."""
        shown = render.answered_message(q.text, q.answer or "", q.answered_by or "", asked_by=q.asked_by)
        await edit(self.client, q.thread.channel, q.message_ts or "", shown["text"], shown["blocks"])

    async def close(self, q: StoredQuestion) -> None:
        """The run stopped waiting (a deadline with a default, or its step moved on): the question
        loses its buttons and the thread hears what happens next."""
        closed, said = render_deadline.timed_out(q.deadline - q.asked_at if q.deadline else None, q.default)
        if q.message_ts:
            shown = render.closed_question_message(q.text, closed, asked_by=q.asked_by)
            await edit(self.client, q.thread.channel, q.message_ts, shown["text"], shown["blocks"])
        await self.outbox.send(q.thread, "timeout", notice_key("timeout", q.thread, q.id), said)

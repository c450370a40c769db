"""SlackTransport: the engine's questions asked in a Slack thread, answered by a button or a reply.

Every question is in ``bot.db`` before it is shown, and every answer before it is delivered, so
nothing a person said is lost or asked for twice: a resumed run (after a restart) asking the
same question (same ``Question.key``) gets the answer given meanwhile, or waits on the message
already posted, without posting again.

How the questions look in the thread (``QuestionPosts``): posted with buttons through the outbox (a question is posted once), shown answered, shown closed, by message edits; ``SlackTransport`` decides when.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey, notice_key
from bot.outbound.outbox import Outbox, edit
from bot.render import controls
from bot.render import deadline as render_deadline
from bot.render import messages as render
from bot.store.bot_store import BotStore
from bot.store.bot_store import Question as StoredQuestion
from engine.authoring import Answer, Question

log = logging.getLogger(__name__)

# Posts a question in its thread and returns the message ts: (thread, question row id, question).
PostQuestion = Callable[[ThreadKey, int, Question], Awaitable[str | None]]
# Shows a question as closed (answered or timed out): (stored question after the outcome).
CloseQuestion = Callable[[StoredQuestion], Awaitable[None]]


class Answers:
    """In-process waiters for questions, keyed by (thread, question key); one per question."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[ThreadKey, str], asyncio.Future[Answer]] = {}

    def wait(self, thread: ThreadKey, key: str) -> asyncio.Future[Answer]:
        """A future the next ``deliver`` for this question resolves."""
        fut = asyncio.get_running_loop().create_future()
        self._waiting[(ThreadKey(*thread), key)] = fut
        return fut

    def forget(self, thread: ThreadKey, key: str, fut: asyncio.Future[Answer]) -> None:
        """Stop waiting (the ask returned or was cancelled)."""
        if self._waiting.get((ThreadKey(*thread), key)) is fut:
            del self._waiting[(ThreadKey(*thread), key)]

    def deliver(self, thread: ThreadKey, key: str, answer: Answer) -> bool:
        """Hand ``answer`` to the run waiting on this question; False when nobody waits in this process."""
        fut = self._waiting.get((ThreadKey(*thread), key))
        if fut is None or fut.done():
            return False
        fut.set_result(answer)
        return True


def to_answer(q: StoredQuestion) -> Answer:
    """The engine's Answer for a stored, answered question."""
    return Answer("answered", q.answer or "", by=q.answered_by or "")


class SlackTransport:
    """A ``Transport`` for one thread: posts via ``post_question``, waits on ``answers``.

    The wait ends when the app records an answer (``BotStore.answer_question``) and calls
    ``Answers.deliver``. A timeout (the channel cancels the wait while the run goes on) closes
    the question in the store and shows it as closed; a cancel because the run itself stops
    (Stop, shutdown) leaves it open, so its buttons keep working for the resumed run.
    """

    def __init__(
        self,
        thread: ThreadKey,
        *,
        store: BotStore,
        answers: Answers,
        post_question: PostQuestion,
        close_question: CloseQuestion | None = None,
        show_answered: CloseQuestion | None = None,
        stopping: Callable[[], bool] = lambda: False,
        replay_before: float | None = None,
    ) -> None:
        self.thread = ThreadKey(*thread)
        self.store, self.answers = store, answers
        self.post_question, self.close_question, self.stopping = post_question, close_question, stopping
        self.show_answered, self.replay_before = show_answered, replay_before

    async def ask(self, q: Question) -> Answer:
        """Ask ``q`` in the thread (once across restarts) and wait for its answer.

        ``replay_before`` (a run resumed after a restart): an answer the run already took before
        that moment is given back for the same question instead of asking again. A kill between
        handing the answer to the CLI and the CLI recording it makes the resumed session ask the
        same question; the person answered it once and is not asked twice.
        """
        early = await self._taken(q.key) or await self._replayed(q.key)
        if early is not None:
            return early
        deadline = None if q.timeout_s is None else time.time() + q.timeout_s
        fut = self.answers.wait(self.thread, q.key)
        # Recording and posting the question is a task of its own, awaited even when the deadline
        # passes meanwhile: a question must be shown before it is closed (on a loaded machine a
        # short deadline passed before it was posted, and only "no answer in time" appeared), and
        # a deadline mid-post must not lose the message's ts (the closed question keeps no buttons).
        shown = asyncio.ensure_future(self._show(q, deadline))
        try:
            qid = await asyncio.shield(shown)
            early = await self._taken(q.key)  # answered between add_question and now
            if early is not None:
                return early
            await fut
            taken = await self._taken(q.key)
            return taken if taken is not None else fut.result()
        except asyncio.CancelledError:
            if not self.stopping():  # a timeout: the run goes on without this answer
                qid = await asyncio.shield(shown)
                closed = await asyncio.shield(self.store.consume_answer(qid))
                if closed is not None and self.close_question is not None:
                    await asyncio.shield(self.close_question(closed))
            raise
        finally:
            self.answers.forget(self.thread, q.key, fut)

    async def _show(self, q: Question, deadline: float | None) -> int:
        """Record ``q`` (once across restarts) and post it unless it is posted already; its id."""
        qid = await self.store.add_question(self.thread, q.key, q.text, q.options, asked_by=q.asked_by,
                                            default=q.default, deadline=deadline)
        stored = await self.store.get_question(qid)
        if stored is not None and stored.message_ts is None:
            ts = await self.post_question(self.thread, qid, q)
            if ts:
                await self.store.set_question_message(qid, ts)
                # a click before this line found no message to edit: the answer is shown from here
                # (one of the two always sees the other's write, so the buttons never stay)
                now = await self.store.get_question(qid)
                if now is not None and now.answer is not None and self.show_answered is not None:
                    await self.show_answered(now)
        return qid

    async def _replayed(self, key: str) -> Answer | None:
        if self.replay_before is None:
            return None
        prior = await self.store.get_question((self.thread, key))
        if prior is None or prior.answer is None or prior.consumed_at is None:
            return None
        return to_answer(prior) if prior.asked_at < self.replay_before else None

    async def _taken(self, key: str) -> Answer | None:
        """An answer given and not yet taken, now taken; None when there is none."""
        q = await self.store.answered_unconsumed(self.thread, key)
        if q is None:
            return None
        taken = await self.store.consume_answer(q.id)
        return to_answer(taken) if taken is not None and taken.answered else None


# -- How the questions look in the thread (``QuestionPosts``) ----------------------------------------
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

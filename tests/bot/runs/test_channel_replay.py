"""A resumed run that asks a question it already had answered gets the answer back, unasked."""

import asyncio
import time

from bot.core.thread import ThreadKey
from bot.runs.transport import Answers, SlackTransport
from bot.store.bot_store import BotStore
from engine._human.transports import Question

THREAD = ThreadKey("T0001", "C0GENERAL", "1700000000.000100")


async def test_an_answer_taken_before_a_restart_is_replayed_not_asked_again(tmp_path):
    store = BotStore(tmp_path / "bot.db")
    posted: list[str] = []
    was_posted = asyncio.Event()

    async def post(thread, qid, q):
        posted.append(q.text)
        was_posted.set()
        return f"1700000001.{qid:06d}"

    q = Question("用什么语言?", ("Python", "Go"))
    qid = await store.add_question(THREAD, q.key, q.text, list(q.options), asked_by="确认需求",
                                   default=None, deadline=None)
    assert await store.answer_question(qid, "Python", "U0BOB")
    assert await store.consume_answer(qid) is not None  # the killed run had taken it
    restart = time.time()

    resumed = SlackTransport(THREAD, store=store, answers=Answers(), post_question=post,
                             replay_before=restart)
    answer = await resumed.ask(q)
    assert (answer.state, answer.text, answer.by) == ("answered", "Python", "U0BOB")
    assert posted == []

    fresh = SlackTransport(THREAD, store=store, answers=Answers(), post_question=post)
    waiting = asyncio.ensure_future(fresh.ask(q))  # not a resumed run: a new question is asked
    await asyncio.wait_for(was_posted.wait(), 10)
    assert posted == ["用什么语言?"]
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    store.close()

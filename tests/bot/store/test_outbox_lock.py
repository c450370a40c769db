"""A notice Slack took while bot.db was locked past its busy timeout is marked later, never posted twice.

Real slack_sdk against the fake Slack, real SQLite (and real PostgreSQL): the post is held back by
a 429 while another connection takes bot.db's write lock (the bot's advisory lock), so the
outbox's ``mark_sent`` after the post is refused."""

from __future__ import annotations

import asyncio

from bot.core.thread import ThreadKey
from bot.main import web_client
from bot.outbound.outbox import Outbox
from bot.settings.config import load_config
from bot.store.bot_store import StoreError
from tests.bot.helpers.store import Backend

CHANNEL = "C0GENERAL"


async def _within(check, cap_s: float = 240.0) -> bool:
    """Poll ``check`` (nothing in Slack changes meanwhile, so the fake's waits would not wake)."""
    for _ in range(int(cap_s * 10)):
        if check():
            return True
        await asyncio.sleep(0.1)
    return False


async def test_a_post_whose_mark_was_refused_is_not_posted_again(slack_env, tmp_path, monkeypatch, caplog,
                                                                  backend: Backend):
    slack = slack_env
    monkeypatch.setenv("FLOWER_HOME", str(tmp_path / "home"))
    monkeypatch.setattr("bot.store.sqlite_base.BUSY_TIMEOUT_S", 0.3)
    store = backend.store()
    box = Outbox(store, web_client(load_config(dotenv=None)))
    box.start()
    key = ThreadKey("T0001", CHANNEL, slack.mention(CHANNEL, "hello")["ts"])
    locker = backend.locker()
    try:
        slack.rate_limit("chat.postMessage", times=1, retry_after=2)  # the post waits 2 s, then goes through
        await box.send(key, "note", "note:1", "a notice posted once")
        await slack.wait_for("chat.postMessage")  # the first try, answered 429
        await locker.hold()  # bot.db is locked when the retried post comes back
        await slack.wait_until(lambda: [c for c in slack.calls("chat.postMessage") if c.status == 200],
                               what="the post Slack took")
        assert await _within(lambda: any(r.exc_info and r.exc_info[0] is not None and issubclass(
            r.exc_info[0], StoreError) for r in caplog.records)), "bot.db never refused the mark"
        await locker.release()
        for _ in range(2400):  # the outbox looks again by itself; marked within a generous cap
            if not await store.pending_outbox():
                break
            await asyncio.sleep(0.1)
        assert not await store.pending_outbox()
        texts = [m["text"] for m in slack.messages_in(CHANNEL, key.thread_ts)[1:]]
        assert texts.count("a notice posted once") == 1, texts
    finally:
        await locker.release()
        await box.close()
        await store.aclose()

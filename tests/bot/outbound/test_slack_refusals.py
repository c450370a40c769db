"""Slack's refusals, each handled by what it means (issue 13, finding 4): the real slack_sdk
against the fake Slack.

A refused bot token stops posting at once and says so loudly, once; a channel the bot cannot post
in drops that thread's notices with one log line instead of five tries each; a message too long
is sent in parts (never again as it is), and refused Block Kit as its text alone. The order per
thread and posting each notice once still hold.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.split_text import split_text, utf16_len
from bot.core.thread import ThreadKey
from bot.main import web_client
from bot.outbound.outbox import NOTICE_EVENT, PART_LIMIT, Outbox
from bot.settings.config import load_config
from bot.store.bot_store import BotStore
from tests.bot.helpers.app import CLARIFY_ONLY, brief_only

CHANNEL = "C0GENERAL"


@pytest.fixture
async def outbox(slack_env, tmp_path, monkeypatch):
    """An outbox on the fake Slack, started; ``outbox.store`` is its bot.db."""
    monkeypatch.setenv("FLOWER_HOME", str(tmp_path / "home"))
    store = BotStore(tmp_path / "bot.db")
    box = Outbox(store, web_client(load_config(dotenv=None)))
    box.start()
    yield box
    await box.close()
    await store.aclose()


def thread_in(slack, channel=CHANNEL) -> ThreadKey:
    return ThreadKey("T0001", channel, slack.mention(channel, "hello")["ts"])


def replies(slack, key: ThreadKey) -> list[dict]:
    return slack.messages_in(key.channel, key.thread_ts)[1:]


def records(caplog, level, needle):
    return [r for r in caplog.records if r.levelno == level and needle in r.getMessage()]


async def test_a_refused_bot_token_stops_posting_says_so_once_and_keeps_every_notice(slack_env, outbox, caplog,
                                                                                  tmp_path):
    slack = slack_env
    key = thread_in(slack)
    slack.refuse_token(slack.bot_token, "token_revoked")
    assert await asyncio.wait_for(outbox.post(key, "note", "note:1", "notice 1"), 30) is None
    await outbox.send(key, "note", "note:2", "notice 2")
    assert await asyncio.wait_for(outbox.post(key, "note", "note:3", "notice 3"), 30) is None  # no waiting
    await asyncio.wait_for(asyncio.shield(outbox._task), 30)  # the sender has stopped for good

    # One refused call in all, never retried as if Slack were having a bad minute. Which one depends
    # on timing: the post, or the start's look for notices already in the thread when note:1 was
    # queued before the sender's first step (seen under load).
    refused = [c.method for c in slack.calls() if c.token == slack.bot_token and not c.ok]
    assert refused in (["chat.postMessage"], ["conversations.replies"]), refused
    loud = records(caplog, logging.ERROR, "SLACK_BOT_TOKEN")
    assert len(loud) == 1 and "token_revoked" in loud[0].getMessage() and "OAuth & Permissions" in loud[0].getMessage()
    assert isinstance(outbox.stopped, Exception)
    for n in (1, 2, 3):
        assert (await outbox.store.outbox_item(f"note:{n}")).state == "pending"  # kept for a working token

    slack.refuse_token(slack.bot_token, None)  # the token is fixed and the bot restarted: all of them, in order
    again = Outbox(outbox.store, web_client(load_config(dotenv=None)))
    again.start()
    try:
        await slack.wait_until(lambda: len(replies(slack, key)) == 3, what="the three notices posted")
    finally:
        await again.close()
    assert [m["text"] for m in replies(slack, key)] == ["notice 1", "notice 2", "notice 3"]


@pytest.mark.parametrize("how", ["not_in_channel", "is_archived", "channel_not_found"])
async def test_a_channel_the_bot_cannot_post_in_drops_that_threads_notices_with_one_line(
        slack_env, outbox, caplog, how):
    slack = slack_env
    if how == "channel_not_found":
        key = ThreadKey("T0001", "C0GONE", "1712345678.000100")  # a channel that was deleted
    else:
        key = thread_in(slack)
        slack.refuse_posts(CHANNEL, how)
    other = thread_in(slack, "C0RANDOM")
    for n in (1, 2, 3):  # each post() returns at once: a run waiting on it is not held up
        assert await asyncio.wait_for(outbox.post(key, "note", f"note:{n}", f"notice {n}"), 30) is None
    assert await asyncio.wait_for(outbox.post(other, "note", "other:1", "elsewhere"), 30)

    assert len(slack.calls("chat.postMessage", channel=key.channel)) == 1  # the later two were not even tried
    said = records(caplog, logging.WARNING, "cannot post in channel")
    assert len(said) == 1 and how in said[0].getMessage() and "Invite the bot" in said[0].getMessage()
    for n in (1, 2, 3):
        assert (await outbox.store.outbox_item(f"note:{n}")).state == "failed"
    assert [m["text"] for m in replies(slack, other)] == ["elsewhere"]


def long_text(paragraphs=25) -> str:
    return "\n\n".join(f"paragraph {n}: " + "word " * 400 for n in range(paragraphs))


async def test_a_message_too_long_goes_out_in_parts_in_order_never_again_as_it_is(slack_env, outbox):
    slack = slack_env
    key = thread_in(slack)
    text = long_text()
    assert utf16_len(text) > 40_000  # past Slack's limit: msg_too_long
    await outbox.send(key, "error", "long", text)
    ts = await asyncio.wait_for(outbox.post(key, "note", "after", "after it"), 60)
    assert ts

    shown = [m["text"] for m in replies(slack, key)]
    assert shown[-1] == "after it"
    parts = shown[:-1]
    assert len(parts) >= 11 and all(utf16_len(p) <= PART_LIMIT for p in parts)
    assert " ".join(" ".join(parts).split()) == " ".join(text.split())  # every word, in order
    refused = [c for c in slack.calls("chat.postMessage") if not c.ok]
    assert [c.response["error"] for c in refused] == ["msg_too_long"]  # refused once, never posted as is again
    item = await outbox.store.outbox_item("long")
    assert item.state == "sent" and item.sent_ts == replies(slack, key)[0]["ts"]


async def test_parts_posted_before_a_kill_are_not_posted_again(slack_env, tmp_path, monkeypatch):
    slack = slack_env
    key = thread_in(slack)
    text = long_text()
    store = BotStore(tmp_path / "bot.db")
    await store.enqueue(key, "error", "long", {"text": text})
    client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
    # what the killed process did: split the text, posted its first part, died
    box = Outbox(store, client)
    first_part = split_text(text, PART_LIMIT)[0]
    await client.chat_postMessage(channel=CHANNEL, thread_ts=key.thread_ts, text=first_part,
                                  metadata={"event_type": NOTICE_EVENT, "event_payload": {"key": "long#1"}})
    box.start()
    try:
        assert await asyncio.wait_for(box.post(key, "note", "after", "after it"), 60)
    finally:
        await box.close()
        await store.aclose()
    shown = [m["text"] for m in replies(slack, key)]
    assert shown.count(first_part) == 1 and shown[-1] == "after it"
    assert " ".join(" ".join(shown[:-1]).split()) == " ".join(text.split())


async def test_refused_blocks_are_posted_as_their_text_alone(slack_env, outbox, caplog):
    slack = slack_env
    key = thread_in(slack)
    slack.api_error("chat.postMessage", "invalid_blocks")
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "*the notice*"}}]
    assert await asyncio.wait_for(outbox.post(key, "note", "blocks", "the notice", blocks), 30)
    posted = replies(slack, key)
    assert [m["text"] for m in posted] == ["the notice"] and not posted[0].get("blocks")
    assert records(caplog, logging.WARNING, "refused the blocks")
    assert len(slack.calls("chat.postMessage")) == 2  # once with the blocks, once without


async def test_a_run_in_a_channel_the_bot_cannot_post_in_is_not_held_up_by_retries(make_bot, slack_env,
                                                                                  fake_model, caplog):
    """The acceptance reply and the status line fail with not_in_channel: tried once, dropped, and
    the run goes on to its end instead of waiting five tries (~25 s) per notice."""
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)
    brief_only(fake_model)
    slack.refuse_posts(CHANNEL, "not_in_channel")
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event)
    key = ThreadKey("T0001", CHANNEL, event["ts"])
    for _ in range(1200):  # the run's end is recorded in bot.db, not shown in Slack
        thread = await bot.store.get_thread(key)
        if thread is not None and thread.state == "done":
            break
        await asyncio.sleep(0.05)
    assert thread is not None and thread.state == "done"
    assert len(slack.calls("chat.postMessage", thread_ts=event["ts"])) == 1
    assert len(records(caplog, logging.WARNING, "cannot post in channel")) == 1

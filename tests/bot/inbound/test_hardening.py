"""Duplicates, HTTP request checks and hostile input: each gets one effect, a clear answer, or
nothing at all (issue 6)."""

from __future__ import annotations

import json
import time

import aiohttp
import pytest

from bot.core.thread import ThreadKey, workspace_dir
from bot.errors import ThreadError
from bot.main import start_bot
from bot.settings.config import load_config
from bot.testing.payloads import url_verification
from engine.testing.roles import CLARIFIER
from tests.bot.helpers.app import CHANNEL, CLARIFY_ONLY, asked_thread, brief_only, posted

SECRET = "s3cret-signing"


def started(slack) -> list:
    return [c for c in slack.calls("chat.postMessage") if "Started" in (c.body.get("text") or "")]


async def test_one_event_delivered_four_times_over_socket_mode_runs_once(make_bot, slack_env, fake_model):
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    brief_only(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    for attempt in range(4):  # Slack's first delivery and its three retries
        await slack.send_event(event, event_id="Ev0FOUR", retry_attempt=attempt,
                               retry_reason="" if attempt == 0 else "timeout")
    await posted(slack, event["ts"], "Done")
    assert len(started(slack)) == 1


@pytest.fixture
async def http_bot(slack_env, fake_model, tmp_path, monkeypatch):
    monkeypatch.delenv("SLACK_APP_TOKEN")
    for name, value in {"SLACK_SIGNING_SECRET": SECRET, "PORT": "0",
                        "FLOWER_HOME": str(tmp_path / "home")}.items():
        monkeypatch.setenv(name, value)
    running = await start_bot(load_config(dotenv=None), options=CLARIFY_ONLY)
    yield running, f"http://127.0.0.1:{running.port}/slack/events"
    await running.close()


async def test_http_retries_zero_to_three_run_once(http_bot, slack_env, fake_model):
    slack, (_, url) = slack_env, http_bot
    brief_only(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    payload = slack.event_payload(event, event_id="Ev0HTTP4")
    for retry in (None, 1, 2, 3):
        got = await slack.deliver_http(url, payload, signing_secret=SECRET, retry_num=retry)
        assert got.status == 200
    await posted(slack, event["ts"], "Done")
    assert len(started(slack)) == 1


async def test_http_checks_every_request(http_bot, slack_env, fake_model):
    slack, (_, url) = slack_env, http_bot
    ok = await slack.deliver_http(url, url_verification("chal-123"), signing_secret=SECRET)
    assert ok.status == 200 and "chal-123" in ok.body
    stale = await slack.deliver_http(url, slack.event_payload(slack.mention(CHANNEL, "stale")),
                                     signing_secret=SECRET, timestamp=int(time.time()) - 301)
    assert stale.status == 401
    tampered = await slack.deliver_http(url, slack.event_payload(slack.mention(CHANNEL, "tampered")),
                                        signing_secret=SECRET, tamper=True)
    assert tampered.status == 401
    wrong = await slack.deliver_http(url, slack.event_payload(slack.mention(CHANNEL, "wrong")),
                                     signing_secret="not-the-secret")
    assert wrong.status == 401
    async with aiohttp.ClientSession() as session:  # no signature headers at all
        async with session.post(url, json=slack.event_payload(slack.mention(CHANNEL, "bare"))) as r:
            assert r.status == 401
    assert not slack.calls("chat.postMessage") and not fake_model.message_requests


@pytest.mark.parametrize("request_text", [
    "写" * 40_000,
    "emoji 🌸🚀 and RTL שלום עולם and 中文 request",
    "```python\nprint('unbalanced fence'\n" * 3,
    "ping <@U0ALICE> and <#C0RANDOM> with <https://example.com|a link> & <b>",
])
async def test_hostile_requests_start_a_run_and_every_post_fits_slack(
        make_bot, slack_env, fake_model, request_text):
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    brief_only(fake_model)
    event = slack.mention(CHANNEL, request_text)
    await slack.send_event(event)
    await posted(slack, event["ts"], "Done")
    assert all(c.ok for c in slack.calls())  # the fake enforces Slack's limits: none refused
    assert len(started(slack)) == 1


async def test_edits_deletes_and_bot_messages_start_nothing(make_bot, slack_env, fake_model):
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    brief_only(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event)
    await posted(slack, event["ts"], "Done")
    mark = slack.mark()
    noise = [
        slack.message_changed(CHANNEL, event["ts"], "<@U0BOT> edited request"),
        slack.message_deleted(CHANNEL, event["ts"]),
        slack.bot_message(CHANNEL, "<@U0BOT> from another bot", thread_ts=event["ts"]),
    ]
    for item in noise:
        await slack.send_event(item)
    requests_before = len(fake_model.message_requests)
    done = slack.mention(CHANNEL, "a later, real request")
    await slack.send_event(done)
    await posted(slack, done["ts"], "Done", after=mark)
    posted_in_first = [c for c in slack.calls("chat.postMessage")[mark:] if c.body.get("thread_ts") == event["ts"]]
    assert posted_in_first == []
    assert len(fake_model.message_requests) > requests_before  # only the real request ran


async def test_a_mention_by_another_app_or_with_no_user_starts_nothing(make_bot, slack_env, fake_model):
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    brief_only(fake_model)
    from_app = slack.bot_mention(CHANNEL, "run rm -rf / for me")
    no_user = slack.mention(CHANNEL, "a mention that names nobody")
    no_user.pop("user")
    for item in (from_app, no_user):
        await slack.send_event(item)
    real = slack.mention(CHANNEL, "a real request")
    await slack.send_event(real)
    await posted(slack, real["ts"], "Done")
    answered = {c.body.get("thread_ts") or c.body.get("ts") for c in slack.calls("chat.postMessage")}
    assert from_app["ts"] not in answered and no_user["ts"] not in answered
    assert not [c for c in slack.calls("reactions.add") if c.body.get("timestamp") != real["ts"]]


async def test_a_file_shared_in_a_thread_goes_to_its_inbox_and_is_named_with_its_words(make_bot, slack_env,
                                                                                         fake_model):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)
    thread, _, _ = await asked_thread(slack, fake_model)

    await slack.send_event(slack.file_share(CHANNEL, text="Python", thread_ts=thread, filename="../spec.txt",
                                            content=b"use Python 3.11\n"))
    await posted(slack, thread, "Done")
    clar = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
    answer = next(t for _, t in clar[-1].tool_results if "Python" in t)  # the words with the file answered it
    assert ".flower/inbox/1-spec.txt" in answer
    ws = bot.jobs.workspace(ThreadKey("T0001", CHANNEL, thread))
    assert (ws / ".flower" / "inbox" / "1-spec.txt").read_bytes() == b"use Python 3.11\n"
    assert not (ws.parent / "spec.txt").exists()
    assert not [c for c in slack.calls("chat.postMessage") if str(ws) in json.dumps(c.body)]  # no host path
    top = slack.file_share(CHANNEL, text="<@U0BOT> 读一下这个", filename="top.txt")  # not in a thread: not ours
    mark = slack.mark()
    await slack.send_event(top)
    later = slack.mention(CHANNEL, "later")
    await slack.send_event(later)
    await posted(slack, later["ts"], "Started", after=mark)
    assert not [c for c in slack.calls("chat.postMessage")[mark:] if c.body.get("thread_ts") == top["ts"]]


@pytest.mark.parametrize("channel, ts", [
    ("../../etc", "1700000000.000100"),
    ("C0GENERAL", "../../../tmp/x"),
    ("C0/GEN", "1700000000.000100"),
    ("", "1700000000.000100"),
])
def test_crafted_ids_cannot_leave_flower_home(tmp_path, channel, ts):
    with pytest.raises(ThreadError):
        workspace_dir(tmp_path, ThreadKey("T0001", channel, ts))
    assert list(tmp_path.iterdir()) == []

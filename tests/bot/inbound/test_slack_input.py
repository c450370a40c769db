"""Input from outside, end to end (issue 13, finding 6): real slack-bolt against the fake Slack.

A signed body that is not what Slack sends is a 400 with one warning (not a 500 and a traceback),
an unsigned one a 401; malformed Socket Mode frames are acked and logged in one line each, and the
next good event still runs; an error text posted in a thread is escaped, and a repository URL's
credential appears nowhere, neither in Slack nor in the log.
"""

from __future__ import annotations

import json
import logging
from urllib.parse import quote

import pytest

from bot.main import start_bot
from bot.settings.config import load_config
from tests.bot.helpers.app import CHANNEL, CLARIFY_ONLY, brief_only, posted

SECRET = "s3cret-signing"


def ours(caplog) -> list[logging.LogRecord]:
    """What the bot, bolt and slack_sdk logged (not the fake's own server)."""
    return [r for r in caplog.records if r.name.startswith(("bot", "slack"))]


@pytest.fixture
async def http_url(slack_env, fake_model, tmp_path, monkeypatch):
    monkeypatch.delenv("SLACK_APP_TOKEN")
    for name, value in {"SLACK_SIGNING_SECRET": SECRET, "PORT": "0", "FLOWER_HOME": str(tmp_path / "home"),
                        "FLOWER_ALLOW_EVERYONE": "1"}.items():
        monkeypatch.setenv(name, value)
    running = await start_bot(load_config(dotenv=None), options=CLARIFY_ONLY)
    yield f"http://127.0.0.1:{running.port}/slack/events"
    await running.close()


FORM = "application/x-www-form-urlencoded"


@pytest.mark.parametrize("body, content_type", [
    (b"this is not json", "application/json"),
    (b'{"type": "event_callback", "event": {"type": "app_', "application/json"),  # cut short
    (b"[1, 2]", "application/json"),
    (b"payload=%7Bnot-json", FORM),
    (("payload=" + quote(json.dumps({"type": "block_actions", "actions": []}))).encode(), FORM),
    (json.dumps({"type": "event_callback", "event": {"type": "app_mention", "channel": "C0GENERAL",
                                                      "ts": "1.1", "text": 5}}).encode(), "application/json"),
])
async def test_a_signed_body_slack_never_sends_is_a_400_with_one_warning(http_url, slack_env, caplog, body,
                                                                         content_type):
    slack = slack_env
    got = await slack.deliver_http_raw(http_url, body, signing_secret=SECRET, content_type=content_type)
    assert got.status == 400 and "malformed request" in got.body
    logged = ours(caplog)
    assert [r.levelno for r in logged if "not what Slack sends" in r.getMessage()] == [logging.WARNING]
    assert not [r for r in logged if r.exc_info or r.levelno >= logging.ERROR]
    unsigned = await slack.deliver_http_raw(http_url, body, signing_secret="not-the-secret",
                                            content_type=content_type)
    assert unsigned.status == 401  # the signature is checked first, as bolt does for good bodies
    assert not slack.calls("chat.postMessage")


async def test_a_body_that_is_not_utf8_cannot_be_verified_so_it_is_a_401(http_url, slack_env, caplog):
    got = await slack_env.deliver_http_raw(http_url, b"\xff\xfe not utf-8", signing_secret=SECRET)
    assert got.status == 401
    assert not [r for r in ours(caplog) if r.exc_info or r.levelno >= logging.ERROR]


async def test_after_malformed_bodies_a_good_event_still_runs(http_url, slack_env, fake_model):
    slack = slack_env
    assert (await slack.deliver_http_raw(http_url, b"nope", signing_secret=SECRET)).status == 400
    brief_only(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    assert (await slack.deliver_http(http_url, slack.event_payload(event), signing_secret=SECRET)).status == 200
    await posted(slack, event["ts"], "Done")


BAD_FRAMES = [
    "garbage",
    "{not json",
    "[1, 2]",
    json.dumps({"type": "events_api", "payload": {}}),  # no envelope_id
    json.dumps({"type": "events_api", "envelope_id": "bad-1", "payload": "x"}),
    json.dumps({"type": "events_api", "envelope_id": "bad-2", "payload": {"type": "event_callback", "event": "x"}}),
    json.dumps({"type": "events_api", "envelope_id": "bad-3",
                "payload": {"type": "event_callback", "event": {"type": "app_mention"}}}),
    json.dumps({"type": "events_api", "envelope_id": "bad-4", "payload": {
        "type": "event_callback", "team_id": "T0001",
        "event": {"type": "app_mention", "channel": CHANNEL, "user": "U0ALICE", "ts": "1.1", "text": 5}}}),
    json.dumps({"type": "interactive", "envelope_id": "bad-5", "payload": {"type": "block_actions", "actions": []}}),
    json.dumps({"type": "interactive", "envelope_id": "bad-6", "payload": {"type": "block_actions",
                                                                            "actions": [{}]}}),
    json.dumps({"type": "interactive", "envelope_id": "bad-7", "payload": {"type": "block_actions",
                                                                            "actions": ["x"]}}),
]


async def test_malformed_socket_mode_frames_are_acked_and_logged_in_one_line_each(make_bot, slack_env,
                                                                                 fake_model, caplog):
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    conn = await slack.wait_connected()
    for frame in BAD_FRAMES:
        await slack.send_raw(frame)
    brief_only(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event)  # frames are read in order: every bad one was handled before this
    await posted(slack, event["ts"], "Done")

    logged = ours(caplog)
    ignored = [r for r in logged if "ignored a" in r.getMessage()]
    assert len(ignored) == len(BAD_FRAMES) and {r.levelno for r in ignored} == {logging.WARNING}
    assert not [r for r in logged if r.exc_info or r.levelno >= logging.ERROR], \
        [(r.name, r.getMessage()) for r in logged if r.exc_info or r.levelno >= logging.ERROR]
    acked = {f.get("envelope_id") for f in conn.frames}
    assert {f"bad-{n}" for n in range(1, 8)} <= acked  # Slack is not made to send them again
    assert len([c for c in slack.calls("chat.postMessage") if "Started" in (c.body.get("text") or "")]) == 1


async def test_an_error_in_the_thread_is_escaped_and_a_urls_credential_shows_nowhere(make_bot, slack_env,
                                                                                    fake_model, tmp_path, caplog):
    slack = slack_env
    caplog.set_level(logging.INFO)  # flower-bot's level
    await make_bot(FLOWER_ADMINS="U0ALICE")
    event = slack.mention(CHANNEL, "/repo https://alice:s3cr3t-tok@127.0.0.1:1/team/app.git")
    await slack.send_event(event)
    failed = await posted(slack, event["ts"], "could not clone")
    assert "https://alice:***@127.0.0.1:1/team/app.git" in failed.body["text"]

    event = slack.mention(CHANNEL, f"/repo {tmp_path}/x<!here>&y")
    await slack.send_event(event)
    failed = await posted(slack, event["ts"], "is not a git repository")
    assert failed.body["text"].startswith(":x: Not bound: ")
    assert "x&lt;!here&gt;&amp;y" in failed.body["text"] and "<!here>" not in failed.body["text"]

    assert "s3cr3t-tok" not in json.dumps([c.body for c in slack.calls()])  # what the bot sent to Slack
    assert "s3cr3t-tok" not in caplog.text  # the log at the bot's level (INFO), every logger

"""The fake Slack, proved with the real slack_sdk and slack-bolt (Web API, Socket Mode, HTTP mode)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler, AsyncServerErrorRetryHandler
from slack_sdk.http_retry.builtin_interval_calculators import FixedValueRetryIntervalCalculator
from slack_sdk.web.async_client import AsyncWebClient

from bot.testing import FakeSlack, FakeSlackError, FakeSlackTimeout, Workspace, signature
from bot.testing.limits import block_problems

SECRET = "s3cret-signing"


def client_for(slack: FakeSlack, token: str | None = None, **kwargs) -> AsyncWebClient:
    return AsyncWebClient(token=token or slack.bot_token, base_url=slack.api_url, **kwargs)


def bolt_app(slack: FakeSlack, **kwargs) -> AsyncApp:
    return AsyncApp(client=client_for(slack), **kwargs)


@asynccontextmanager
async def socket_mode(
    app: AsyncApp, slack: FakeSlack, *, ping_interval: float = 10
) -> AsyncIterator[AsyncSocketModeHandler]:
    handler = AsyncSocketModeHandler(app, slack.app_token, ping_interval=ping_interval)
    await handler.connect_async()
    try:
        await slack.wait_connected()
        yield handler
    finally:
        await handler.close_async()


@asynccontextmanager
async def http_mode(app: AsyncApp) -> AsyncIterator[str]:
    runner = web.AppRunner(app.web_app(path="/slack/events"), handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    host, port = runner.addresses[0][:2]
    try:
        yield f"http://{host}:{port}/slack/events"
    finally:
        await runner.cleanup()


def button_blocks(*action_ids: str) -> list[dict]:
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": "Proceed?"}},
        {
            "type": "actions",
            "block_id": "choice",
            "elements": [
                {"type": "button", "action_id": a, "text": {"type": "plain_text", "text": a}, "value": f"v-{a}"}
                for a in action_ids
            ],
        },
    ]


# --- Web API with the real AsyncWebClient --------------------------------------------------------


async def test_client_posts_updates_deletes_and_reacts_and_the_thread_reads_back(fake_slack):
    client = client_for(fake_slack)
    parent = await client.chat_postMessage(channel="C0GENERAL", text="working on it")
    fake_slack.user_message("C0GENERAL", "please also add tests", user="U0BOB", thread_ts=parent["ts"])
    reply = await client.chat_postMessage(channel="C0GENERAL", text="step 1", thread_ts=parent["ts"])
    gone = await client.chat_postMessage(channel="C0GENERAL", text="oops", thread_ts=parent["ts"])
    await client.chat_update(channel="C0GENERAL", ts=reply["ts"], text="step 1 done")
    await client.chat_delete(channel="C0GENERAL", ts=gone["ts"])
    await client.reactions_add(channel="C0GENERAL", timestamp=parent["ts"], name="eyes")

    assert float(parent["ts"]) < float(reply["ts"]) < float(gone["ts"])
    thread = (await client.conversations_replies(channel="C0GENERAL", ts=parent["ts"]))["messages"]
    assert [(m.get("user"), m["text"]) for m in thread] == [
        ("U0BOT", "working on it"),
        ("U0BOB", "please also add tests"),
        ("U0BOT", "step 1 done"),
    ]
    assert thread[0]["reply_count"] == 2 and thread[0]["reactions"][0]["name"] == "eyes"
    assert thread[2]["edited"]["user"] == "U0BOT"
    assert fake_slack.messages_in("C0GENERAL", parent["ts"]) == thread
    assert [m["text"] for m in fake_slack.messages_in("C0GENERAL")] == ["working on it"]

    posts = fake_slack.calls("chat.postMessage", thread_ts=parent["ts"])
    assert [c.body["text"] for c in posts] == ["step 1", "oops"]
    assert all(c.token == "xoxb-test" and c.headers["authorization"] == "Bearer xoxb-test" for c in posts)
    assert [c.method for c in fake_slack.calls()][-3:] == ["chat.delete", "reactions.add", "conversations.replies"]
    with pytest.raises(SlackApiError) as err:
        await client.reactions_add(channel="C0GENERAL", timestamp=parent["ts"], name="eyes")
    assert err.value.response["error"] == "already_reacted"


async def test_form_encoded_and_query_bodies_are_parsed_like_json_ones(fake_slack):
    client = client_for(fake_slack)
    blocks = button_blocks("yes")
    form_body = {"channel": "C0GENERAL", "text": "form", "blocks": json.dumps(blocks)}
    await client.api_call("chat.postMessage", data=form_body)
    await client.api_call("chat.postMessage", params={"channel": "C0RANDOM", "text": "query"})
    form, query = fake_slack.calls("chat.postMessage")
    assert isinstance(form.body["blocks"], str) and form.arg("blocks") == blocks
    assert query.body == {"channel": "C0RANDOM", "text": "query"}
    stored = fake_slack.messages_in("C0GENERAL")[0]["blocks"]
    assert stored[1]["block_id"] == "choice" and stored[0]["block_id"]  # Slack assigns missing block_ids


async def test_a_429_with_retry_after_is_retried_by_the_sdk_handler(fake_slack):
    fake_slack.rate_limit("chat.postMessage", times=1, retry_after=0)
    client = client_for(fake_slack, retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=2)])
    response = await client.chat_postMessage(channel="C0GENERAL", text="hello")
    assert response["ok"]
    attempts = fake_slack.calls("chat.postMessage")
    assert [c.status for c in attempts] == [429, 200]
    assert attempts[0].response == {"ok": False, "error": "ratelimited"}


async def test_without_a_retry_handler_the_429_surfaces_with_its_retry_after(fake_slack):
    fake_slack.rate_limit("chat.update", retry_after=7)
    with pytest.raises(SlackApiError) as err:
        await client_for(fake_slack).chat_update(channel="C0GENERAL", ts="1.0", text="x")
    assert err.value.response.status_code == 429
    assert err.value.response.headers["Retry-After"] == "7"


async def test_server_errors_and_api_errors_fail_n_times_then_succeed(fake_slack):
    fake_slack.server_error("chat.postMessage", times=2, status=503)
    fake_slack.api_error("reactions.add", "channel_not_found", times=1)
    no_wait = FixedValueRetryIntervalCalculator(fixed_internal=0)
    retry = AsyncServerErrorRetryHandler(max_retry_count=2, interval_calculator=no_wait)
    client = client_for(fake_slack, retry_handlers=[retry])
    posted = await client.chat_postMessage(channel="C0GENERAL", text="after two 503s")
    assert [c.status for c in fake_slack.calls("chat.postMessage")] == [503, 503, 200]
    with pytest.raises(SlackApiError) as err:
        await client.reactions_add(channel="C0GENERAL", timestamp=posted["ts"], name="eyes")
    assert err.value.response["error"] == "channel_not_found"
    assert (await client.reactions_add(channel="C0GENERAL", timestamp=posted["ts"], name="eyes"))["ok"]


@pytest.mark.parametrize(
    ("token", "method", "error"),
    [
        (None, "auth.test", "not_authed"),
        ("xoxb-wrong", "auth.test", "invalid_auth"),
        ("xapp-test", "chat.postMessage", "not_allowed_token_type"),
        ("xoxb-test", "apps.connections.open", "not_allowed_token_type"),
        ("xoxb-test", "chat.teleport", "unknown_method"),
    ],
)
async def test_tokens_are_checked_and_unknown_methods_refused(fake_slack, token, method, error):
    client = AsyncWebClient(token=token, base_url=fake_slack.api_url)
    with pytest.raises(SlackApiError) as err:
        await client.api_call(method, json={"channel": "C0GENERAL", "text": "x"})
    assert err.value.response["error"] == error
    assert fake_slack.calls(method)[0].token == token


async def test_a_refused_token_and_refused_channel_posts_stay_refused_until_lifted(fake_slack):
    client = client_for(fake_slack)
    fake_slack.refuse_token(fake_slack.bot_token, "token_revoked")
    for _ in range(2):
        with pytest.raises(SlackApiError) as err:
            await client.auth_test()
        assert err.value.response["error"] == "token_revoked"
    fake_slack.refuse_token(fake_slack.bot_token, None)
    assert (await client.auth_test())["ok"]
    fake_slack.refuse_posts("#general", "not_in_channel")
    with pytest.raises(SlackApiError) as err:
        await client.chat_postMessage(channel="C0GENERAL", text="x")
    assert err.value.response["error"] == "not_in_channel"
    assert (await client.chat_postMessage(channel="C0RANDOM", text="elsewhere"))["ok"]
    fake_slack.refuse_posts("C0GENERAL", None)
    assert (await client.chat_postMessage(channel="C0GENERAL", text="x"))["ok"]


async def test_apps_connections_open_gives_a_local_websocket_url(fake_slack):
    response = await client_for(fake_slack, token="xapp-test").apps_connections_open(app_token="xapp-test")
    assert response["url"].startswith(fake_slack.origin.replace("http://", "ws://") + "/link/?ticket=")


def _long_blocks(n: int) -> list[dict]:
    return [{"type": "divider"} for _ in range(n)]


def _section(text_len: int) -> list[dict]:
    return [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * text_len}}]


def _button(*, text_len: int = 3, action_len: int = 5, block_len: int = 5) -> list[dict]:
    button = {"type": "button", "text": {"type": "plain_text", "text": "b" * text_len}, "action_id": "a" * action_len}
    return [{"type": "actions", "block_id": "k" * block_len, "elements": [button]}]


@pytest.mark.parametrize(
    ("text", "blocks", "error"),
    [
        ("x" * 40_000, None, None),
        ("x" * 40_001, None, "msg_too_long"),
        ("t", _long_blocks(50), None),
        ("t", _long_blocks(51), "invalid_blocks"),
        ("t", _section(3000), None),
        ("t", _section(3001), "invalid_blocks"),
        ("t", _button(text_len=75), None),
        ("t", _button(text_len=76), "invalid_blocks"),
        ("t", _button(action_len=255, block_len=255), None),
        ("t", _button(action_len=256), "invalid_blocks"),
        ("t", _button(block_len=256), "invalid_blocks"),
        ("t", [{"type": "carousel"}], "invalid_blocks"),
        ("", None, "no_text"),
    ],
)
@pytest.mark.filterwarnings("ignore:The top-level `text` argument is missing")
async def test_slack_limits_are_enforced_at_their_exact_edges(fake_slack, text, blocks, error):
    client = client_for(fake_slack)
    if error is None:
        assert (await client.chat_postMessage(channel="C0GENERAL", text=text, blocks=blocks))["ok"]
        return
    with pytest.raises(SlackApiError) as err:
        await client.chat_postMessage(channel="C0GENERAL", text=text, blocks=blocks)
    assert err.value.response["error"] == error
    assert fake_slack.messages_in("C0GENERAL") == []


@pytest.mark.parametrize(
    ("blocks", "pointer"),
    [
        (_section(3001), "/blocks/0/text/text"),
        (_button(text_len=76), "/blocks/0/elements/0/text/text"),
        ([{"type": "divider", "block_id": "same"}, {"type": "divider", "block_id": "same"}], "/blocks/1/block_id"),
        ([{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}], "/blocks/0/text/text"),
        ([{"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11}], "/blocks/0/fields"),
        ([{"type": "section", "text": {"type": "mrkdwn", "text": ""}}], "/blocks/0/text/text"),
    ],
)
def test_block_problems_name_the_offending_location(blocks, pointer):
    problems = block_problems(blocks)
    assert any(f"[json-pointer:{pointer}]" in p for p in problems), problems


async def test_files_upload_v2_lands_in_the_thread_with_its_bytes(fake_slack):
    client = client_for(fake_slack)
    parent = await client.chat_postMessage(channel="C0GENERAL", text="report follows")
    done = await client.files_upload_v2(
        channel="C0GENERAL", thread_ts=parent["ts"], content="line 1\nline 2\n", filename="report.md", title="Report"
    )
    file_id = done["file"]["id"]
    assert fake_slack.store.uploads[file_id].content == b"line 1\nline 2\n"
    steps = [c.method for c in fake_slack.calls()][-3:]
    assert steps == ["files.getUploadURLExternal", "upload", "files.completeUploadExternal"]
    shared = fake_slack.messages_in("C0GENERAL", parent["ts"])[-1]
    assert shared["files"][0]["title"] == "Report" and shared["user"] == "U0BOT"


async def test_people_channels_history_and_permalinks(fake_slack):
    client = client_for(fake_slack)
    assert (await client.users_info(user="U0ALICE"))["user"]["name"] == "alice"
    assert (await client.conversations_info(channel="G0SECRET"))["channel"]["is_private"] is True
    for n in range(5):
        await client.chat_postMessage(channel="C0RANDOM", text=f"m{n}")
    first = await client.conversations_history(channel="C0RANDOM", limit=3)
    cursor = first["response_metadata"]["next_cursor"]
    second = await client.conversations_history(channel="C0RANDOM", limit=3, cursor=cursor)
    assert [m["text"] for m in first["messages"] + second["messages"]] == ["m4", "m3", "m2", "m1", "m0"]
    assert second["has_more"] is False
    dm = await client.chat_postMessage(channel="U0CAROL", text="hi carol")
    assert dm["channel"].startswith("D") and fake_slack.messages_in(dm["channel"])[0]["text"] == "hi carol"
    link = await client.chat_getPermalink(channel="C0RANDOM", message_ts=first["messages"][0]["ts"])
    assert link["permalink"].startswith("https://fake-team.slack.com/archives/C0RANDOM/p")
    for method, kwargs, error in [
        ("users_info", {"user": "U0NOBODY"}, "user_not_found"),
        ("conversations_info", {"channel": "C0NOPE"}, "channel_not_found"),
        ("chat_update", {"channel": "C0RANDOM", "ts": "1.000001", "text": "x"}, "message_not_found"),
    ]:
        with pytest.raises(SlackApiError) as err:
            await getattr(client, method)(**kwargs)
        assert err.value.response["error"] == error


async def test_wait_for_wakes_on_a_later_call_and_times_out_with_what_it_saw(fake_slack):
    client = client_for(fake_slack)
    await client.chat_postMessage(channel="C0GENERAL", text="before")
    mark = fake_slack.mark()
    waiter = asyncio.create_task(
        fake_slack.wait_for("chat.postMessage", lambda c: "later" in c.body["text"], after=mark)
    )
    await client.chat_postMessage(channel="C0GENERAL", text="later one")
    assert (await waiter).body["text"] == "later one"
    assert (await fake_slack.wait_for("chat.postMessage", text="before")).index == 0
    with pytest.raises(FakeSlackTimeout, match="last calls"):
        await fake_slack.wait_for("chat.delete", timeout=0.05)


async def test_a_custom_workspace_is_served(fake_slack):
    async with FakeSlack(Workspace(team_id="T9", bot_user_id="U9BOT", bot_id="B9", bot_token="xoxb-9")) as other:
        me = await AsyncWebClient(token="xoxb-9", base_url=other.api_url).auth_test()
        assert (me["team_id"], me["user_id"], me["bot_id"]) == ("T9", "U9BOT", "B9")
        assert other.api_url != fake_slack.api_url


# --- Socket Mode with the real bolt AsyncApp + AsyncSocketModeHandler ----------------------------


async def test_bolt_receives_a_mention_acks_it_and_say_reaches_the_web_api(fake_slack):
    app = bolt_app(fake_slack)

    @app.event("app_mention")
    async def on_mention(event, say):
        await say(text=f"echo: {event['text']}", thread_ts=event["ts"])

    async with socket_mode(app, fake_slack):
        event = fake_slack.mention("C0GENERAL", "build me a thing")
        envelope_id = await fake_slack.send_event(event)
        ack = await fake_slack.wait_ack(envelope_id)
        reply = await fake_slack.wait_for("chat.postMessage", thread_ts=event["ts"])

    assert ack.payload is None and ack.latency_s >= 0
    assert reply.body["text"] == "echo: <@U0BOT> build me a thing" and reply.body["channel"] == "C0GENERAL"
    assert fake_slack.calls("apps.connections.open")[0].token == "xapp-test"
    assert fake_slack.calls("auth.test"), "bolt's authorization middleware asks auth.test who the bot is"
    thread = fake_slack.messages_in("C0GENERAL", event["ts"])
    assert [m["user"] for m in thread] == ["U0ALICE", "U0BOT"]
    hello = fake_slack.envelopes[0].payload["event"]
    assert hello["type"] == "app_mention" and fake_slack.envelopes[0].type == "events_api"


async def test_a_button_click_reaches_the_action_listener(fake_slack):
    app = bolt_app(fake_slack)
    seen: list[dict] = []

    @app.action("approve")
    async def on_approve(ack, body, action, client):
        await ack()
        seen.append(action)
        await client.chat_update(channel=body["channel"]["id"], ts=body["container"]["message_ts"], text="approved")

    async with socket_mode(app, fake_slack):
        posted = await client_for(fake_slack).chat_postMessage(
            channel="C0GENERAL", text="Proceed?", blocks=button_blocks("approve", "reject")
        )
        envelope_id = await fake_slack.click("C0GENERAL", posted["ts"], "approve", user="U0BOB")
        await fake_slack.wait_ack(envelope_id)
        update = await fake_slack.wait_for("chat.update", ts=posted["ts"])

    assert seen[0]["value"] == "v-approve" and seen[0]["block_id"] == "choice"
    assert update.body["text"] == "approved" and fake_slack.message("C0GENERAL", posted["ts"])["text"] == "approved"
    payload = fake_slack.envelopes[-1].payload
    assert payload["user"]["id"] == "U0BOB" and payload["response_url"].startswith(fake_slack.origin)
    with pytest.raises(FakeSlackError, match="approve"):
        fake_slack.click_payload("C0GENERAL", posted["ts"], "maybe")


async def test_respond_through_the_response_url_replaces_the_original(fake_slack):
    app = bolt_app(fake_slack)

    @app.action("reject")
    async def on_reject(ack, respond):
        await ack()
        await respond(text="rejected", replace_original=True)

    async with socket_mode(app, fake_slack):
        posted = await client_for(fake_slack).chat_postMessage(
            channel="C0GENERAL", text="?", blocks=button_blocks("reject")
        )
        await fake_slack.click("C0GENERAL", posted["ts"], "reject")
        call = await fake_slack.wait_for("response_url")

    assert call.body["replace_original"] is True
    assert fake_slack.message("C0GENERAL", posted["ts"])["text"] == "rejected"


async def test_a_slash_command_ack_carries_its_response_payload(fake_slack):
    app = bolt_app(fake_slack)

    @app.command("/flower")
    async def on_command(ack, command):
        await ack(text=f"status of {command['text']}")

    async with socket_mode(app, fake_slack):
        envelope_id = await fake_slack.slash_command("/flower", "everything", channel="C0GENERAL")
        ack = await fake_slack.wait_ack(envelope_id)

    assert ack.payload == {"text": "status of everything"}


async def test_bolt_drops_its_own_messages_and_sees_retries_as_headers(fake_slack):
    app = bolt_app(fake_slack)
    seen: list[tuple[str, str | None, str | None]] = []

    @app.event("message")
    async def on_message(event, request):
        seen.append((event.get("text"), event.get("subtype"), request.headers.get("x-slack-retry-num", [None])[0]))

    @app.event("app_mention")
    async def on_mention(event):
        seen.append((event["text"], "app_mention", None))

    async with socket_mode(app, fake_slack):
        posted = await client_for(fake_slack).chat_postMessage(channel="C0GENERAL", text="from the bot")
        own = await fake_slack.send_event(fake_slack.own_message("C0GENERAL", posted["ts"]))
        edit = await fake_slack.send_event(fake_slack.message_changed("C0GENERAL", posted["ts"], "edited by bot"))
        await fake_slack.wait_ack(own)
        await fake_slack.wait_ack(edit)
        assert seen == []  # the self-event filter acked both without running a listener

        first = await fake_slack.send_event(fake_slack.user_message("C0GENERAL", "hi", thread_ts=posted["ts"]))
        await fake_slack.wait_until(lambda: len(seen) == 1, what="the first delivery reached the listener")
        await fake_slack.redeliver(first)
        await fake_slack.wait_until(lambda: len(seen) == 2, what="the retry reached the listener")

        mention, message = fake_slack.thread_mention("C0GENERAL", posted["ts"], "status?")
        await fake_slack.send_events(mention, message)
        await fake_slack.wait_until(lambda: len(seen) == 4, what="both halves of the thread mention arrived")

    assert seen[:2] == [("hi", None, "0"), ("hi", None, "1")]  # a first delivery carries retry-num 0
    first_payload, retry_payload = (e.payload for e in fake_slack.envelopes[2:4])
    assert first_payload["event_id"] == retry_payload["event_id"]
    assert fake_slack.envelopes[3].retry_attempt == 1
    pair = [e.payload for e in fake_slack.envelopes[4:6]]
    assert pair[0]["event"]["ts"] == pair[1]["event"]["ts"] and pair[0]["event_id"] != pair[1]["event_id"]
    assert sorted(s[1] or "message" for s in seen[2:]) == ["app_mention", "message"]


@pytest.mark.parametrize("reason", ["warning", "refresh_requested", "link_disabled"])
async def test_a_disconnect_frame_makes_the_client_reconnect_and_events_still_arrive(fake_slack, reason):
    app = bolt_app(fake_slack)
    texts: list[str] = []

    @app.event("app_mention")
    async def on_mention(event):
        texts.append(event["text"])

    async with socket_mode(app, fake_slack):
        old = await fake_slack.disconnect(reason)
        new = await fake_slack.wait_connected(2)
        envelope_id = await fake_slack.send_event(fake_slack.mention("C0GENERAL", "after reconnect"))
        await fake_slack.wait_ack(envelope_id)
        await fake_slack.wait_until(lambda: texts, what="the event after the reconnect reached the listener")

    assert new.index == old + 1 and fake_slack.envelopes[-1].connection == new.index
    assert len(fake_slack.calls("apps.connections.open")) == 2
    assert texts == ["<@U0BOT> after reconnect"]


@pytest.mark.parametrize("how", ["cut", "close_frame", "no_pongs"])
async def test_a_lost_connection_is_detected_and_replaced(fake_slack, how):
    app = bolt_app(fake_slack)
    texts: list[str] = []

    @app.event("app_mention")
    async def on_mention(event):
        texts.append(event["text"])

    async with socket_mode(app, fake_slack, ping_interval=0.3):
        if how == "no_pongs":
            await fake_slack.stop_answering_pings()
        else:
            await fake_slack.drop_connection(clean=how == "close_frame")
        await fake_slack.wait_connected(2)
        await fake_slack.send_event(fake_slack.mention("C0GENERAL", "still there?"))
        await fake_slack.wait_until(lambda: texts, what="the event after the reconnect reached the listener")

    assert fake_slack.connections[0].closed
    if how == "no_pongs":
        assert fake_slack.connections[0].pings >= 1 and not fake_slack.connections[0].answer_pings


# --- HTTP mode: bolt's aiohttp server and its request verification --------------------------------


async def test_bolt_http_mode_accepts_signed_deliveries_and_rejects_forged_ones(fake_slack):
    app = bolt_app(fake_slack, signing_secret=SECRET)
    retries: list[str | None] = []

    @app.event("app_mention")
    async def on_mention(event, say, request):
        retries.append(request.headers.get("x-slack-retry-num", [None])[0])
        await say(text="on it", thread_ts=event["ts"])

    @app.action("approve")
    async def on_approve(ack, action, client, body):
        await ack()
        message_ts = body["container"]["message_ts"]
        await client.chat_update(channel=body["channel"]["id"], ts=message_ts, text=action["value"])

    async with http_mode(app) as url:
        challenge = await fake_slack.deliver_http(url, {"type": "url_verification", "challenge": "c-123", "token": "t"},
                                                  signing_secret=SECRET)  # fmt: skip
        event = fake_slack.mention("C0GENERAL", "over http")
        payload = fake_slack.event_payload(event)
        good = await fake_slack.deliver_http(url, payload, signing_secret=SECRET)
        await fake_slack.wait_for("chat.postMessage", thread_ts=event["ts"])
        retry = await fake_slack.deliver_http(url, payload, signing_secret=SECRET, retry_num=1)
        await fake_slack.wait_until(lambda: len(retries) == 2, what="the retried delivery reached the listener")
        tampered = await fake_slack.deliver_http(url, payload, signing_secret=SECRET, tamper=True)
        stale = await fake_slack.deliver_http(url, payload, signing_secret=SECRET, timestamp=int(time.time()) - 600)
        wrong = await fake_slack.deliver_http(url, payload, signing_secret="not-the-secret")

        posted = await client_for(fake_slack).chat_postMessage(
            channel="C0GENERAL", text="?", blocks=button_blocks("approve")
        )
        click = await fake_slack.deliver_http(url, fake_slack.click_payload("C0GENERAL", posted["ts"], "approve"),
                                              signing_secret=SECRET)  # fmt: skip
        await fake_slack.wait_for("chat.update", ts=posted["ts"])

    assert (challenge.status, challenge.json()) == (200, {"challenge": "c-123"})
    assert (good.status, retry.status, click.status) == (200, 200, 200)
    assert (tampered.status, stale.status, wrong.status) == (401, 401, 401)
    assert retries == [None, "1"]
    assert fake_slack.message("C0GENERAL", posted["ts"])["text"] == "v-approve"


def test_the_signature_is_slacks_documented_example():
    # The example request from Slack's "Verifying requests from Slack" page.
    body = (
        b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&"
        b"channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&"
        b"response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&"
        b"trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
    )
    assert signature("8f742231b10e8888abcd99yyyzzz85a5", "1531420618", body) == (
        "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
    )


# --- event builders: the shapes Slack sends, and their effect on the fake's history ---------------


def test_event_builders_match_slacks_shapes_and_update_history():
    slack = FakeSlack()  # builders need no server
    top = slack.mention("#general", "start")
    shape = (top["type"], top["channel"], top["user"], top["text"])
    assert shape == ("app_mention", "C0GENERAL", "U0ALICE", "<@U0BOT> start")
    assert "thread_ts" not in top and "channel_type" not in top
    reply = slack.user_message("C0GENERAL", "more detail", user="U0BOB", thread_ts=top["ts"])
    assert (reply["type"], reply["thread_ts"], reply["channel_type"], reply.get("subtype")) == (
        "message", top["ts"], "channel", None
    )  # fmt: skip
    nested = slack.user_message("C0GENERAL", "reply to a reply", thread_ts=reply["ts"])
    assert nested["thread_ts"] == top["ts"]  # Slack files a reply to a reply under the parent
    other = slack.bot_message("C0GENERAL", "beep", thread_ts=top["ts"])
    assert (other["subtype"], other["bot_id"], "user" in other) == ("bot_message", "B0OTHER", False)
    shared = slack.file_share("C0GENERAL", thread_ts=top["ts"], filename="log.txt", content=b"abc")
    assert shared["subtype"] == "file_share" and shared["files"][0]["name"] == "log.txt"
    assert slack.store.uploads[shared["files"][0]["id"]].content == b"abc"
    changed = slack.message_changed("C0GENERAL", reply["ts"], "better detail")
    assert (changed["subtype"], changed["hidden"]) == ("message_changed", True)
    assert changed["message"]["text"] == "better detail"
    assert changed["previous_message"]["text"] == "more detail" and changed["message"]["edited"]["user"] == "U0BOB"
    deleted = slack.message_deleted("C0GENERAL", nested["ts"])
    assert (deleted["subtype"], deleted["deleted_ts"]) == ("message_deleted", nested["ts"])
    dm = slack.user_message("U0CAROL", "psst", user="U0CAROL")
    assert dm["channel"].startswith("D") and dm["channel_type"] == "im"
    private = slack.mention("G0SECRET", "hidden")
    assert private["channel"] == "G0SECRET"

    thread = slack.messages_in("C0GENERAL", top["ts"])
    assert [m["text"] for m in thread] == ["<@U0BOT> start", "better detail", "beep", ""]
    assert thread[0]["reply_count"] == 3
    mention, message = slack.thread_mention("C0GENERAL", top["ts"], "<@U0BOT> status?")
    assert (mention["type"], message["type"], mention["ts"]) == ("app_mention", "message", message["ts"])
    assert mention["text"] == "<@U0BOT> status?"  # the tag is not doubled
    assert len(slack.messages_in("C0GENERAL", top["ts"])) == 5  # stored once
    with pytest.raises(FakeSlackError, match="C0GENERAL"):
        slack.mention("C0NOWHERE", "hi")
    with pytest.raises(FakeSlackError, match="U0ALICE"):
        slack.user_message("C0GENERAL", "hi", user="U0GHOST")
    with pytest.raises(FakeSlackError, match="not posted by the bot"):
        slack.own_message("C0GENERAL", top["ts"])


async def test_raw_frames_raw_bodies_and_refused_connects_are_delivered_as_they_are(fake_slack):
    seen: list[str] = []
    app = bolt_app(fake_slack)
    handler = AsyncSocketModeHandler(app, fake_slack.app_token, ping_interval=0.05)

    async def heard(message) -> None:
        seen.append(message.data)

    handler.client.on_message_listeners.append(heard)
    fake_slack.refuse_connects(1)
    await handler.connect_async()  # slack_sdk retries the refused websocket with the same URL
    try:
        await fake_slack.wait_connected()
        await fake_slack.send_raw("{not json")
        await fake_slack.wait_until(lambda: "{not json" in seen, what="the raw frame received")
    finally:
        await handler.close_async()
    async with http_mode(bolt_app(fake_slack, signing_secret=SECRET)) as url:
        got = await fake_slack.deliver_http_raw(url, b"{}", signing_secret=SECRET)
        assert got.status == 404  # signed, so bolt looked for a listener (there is none for {})
        forged = await fake_slack.deliver_http_raw(url, b"{}", signing_secret="other")
        assert forged.status == 401

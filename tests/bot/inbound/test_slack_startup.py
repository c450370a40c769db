"""What Slack can tell at start is asked at start, and a refused token stops the bot with one line
(issue 13, finding 4).

The real ``python -m bot`` against the fake Slack: a refused SLACK_BOT_TOKEN (``auth.test``) or
SLACK_APP_TOKEN (``apps.connections.open``, at start or on a later reconnect) ends the process
with the config exit code and one line naming the variable, instead of a traceback every 10 s
forever. Failures that can pass (a 5xx, no answer) are waited out, one line each.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import SlackAuthError
from bot.inbound import socket as socket_mode
from bot.inbound.socket import SocketHandler
from bot.main import EXIT_CONFIG, start_bot
from bot.settings.config import load_config
from tests.bot.helpers.app import CHANNEL, CLARIFY_ONLY, brief_only, posted


async def exit_code(bot_process, timeout=60.0) -> int:
    return await asyncio.wait_for(asyncio.to_thread(bot_process.proc.wait), timeout)


def lines_naming(logs: str, needle: str) -> list[str]:
    return [line for line in logs.splitlines() if needle in line]


def assert_one_clean_line(bot_process, slack, variable: str) -> None:
    logs = bot_process.logs()
    said = lines_naming(logs, variable)
    assert len(said) == 1 and said[0].startswith("flower-bot: Slack refused"), logs
    assert "Traceback" not in logs and " ERROR " not in logs, logs
    assert slack.bot_token not in logs and slack.app_token not in logs


@pytest.mark.parametrize("error", ["invalid_auth", "token_revoked", "account_inactive"])
async def test_a_refused_bot_token_stops_the_bot_at_start_with_one_line(bot_process, slack_env, error):
    slack = slack_env
    slack.refuse_token(slack.bot_token, error)
    bot_process.start()
    assert await exit_code(bot_process) == EXIT_CONFIG, bot_process.logs()
    assert_one_clean_line(bot_process, slack, "SLACK_BOT_TOKEN")
    assert error in bot_process.logs() and "OAuth & Permissions" in bot_process.logs()
    assert [c.method for c in slack.calls()] == ["auth.test"]  # nothing else was started


async def test_a_refused_app_token_stops_the_bot_at_start_with_one_line(bot_process, slack_env):
    slack = slack_env
    slack.refuse_token(slack.app_token, "invalid_auth")
    bot_process.start()
    assert await exit_code(bot_process) == EXIT_CONFIG, bot_process.logs()
    assert_one_clean_line(bot_process, slack, "SLACK_APP_TOKEN")
    assert "connections:write" in bot_process.logs()
    assert len(slack.calls("apps.connections.open")) == 1  # not retried every 10 s forever


async def test_an_app_token_revoked_while_running_stops_the_bot_at_the_next_reconnect(bot_process, slack_env,
                                                                                     fake_model):
    slack = slack_env
    bot_process.start()
    await slack.wait_connected(1)
    slack.refuse_token(slack.app_token, "invalid_auth")
    await slack.disconnect("refresh_requested")  # Slack rotates the socket: the bot must open a new one
    assert await exit_code(bot_process) == EXIT_CONFIG, bot_process.logs()
    assert_one_clean_line(bot_process, slack, "SLACK_APP_TOKEN")
    assert len(slack.calls("apps.connections.open")) == 2


async def test_a_refused_bot_token_stops_start_bot_before_anything_is_made(slack_env, tmp_path, monkeypatch):
    slack = slack_env
    monkeypatch.setenv("FLOWER_HOME", str(tmp_path / "home"))
    slack.refuse_token(slack.bot_token, "token_revoked")
    try:
        running = await start_bot(load_config(dotenv=None))
    except SlackAuthError as exc:
        assert exc.variable == "SLACK_BOT_TOKEN" and exc.code == "token_revoked"
    else:
        await running.close()  # not left running into the fake's teardown
        pytest.fail("start_bot started although Slack refused the bot token")
    assert not (tmp_path / "home" / "bot.db").exists() and not slack.connections


async def test_transient_socket_mode_failures_are_waited_out_one_line_each(make_bot, slack_env, fake_model,
                                                                          caplog, monkeypatch):
    slack = slack_env
    monkeypatch.setattr(socket_mode, "FIRST_RETRY_S", 0.01)
    slack.server_error("apps.connections.open", times=2, status=502)  # past slack_sdk's own 5xx retries
    slack.no_answer("apps.connections.open", times=1)  # the network dropped
    caplog.set_level(logging.INFO)
    await make_bot(CLARIFY_ONLY)
    waits = [r for r in caplog.records if "cannot open a Socket Mode connection" in r.getMessage()]
    assert len(waits) == 3 and all(r.levelno == logging.WARNING for r in waits)
    assert "\n" not in "".join(r.getMessage() for r in waits)
    ours = [r for r in caplog.records if r.name.startswith(("bot", "slack"))]  # not the fake's own server
    assert not [r for r in ours if r.exc_info or r.levelno >= logging.ERROR]  # no traceback
    brief_only(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event)
    await posted(slack, event["ts"], "Started")


async def test_a_slack_that_cannot_be_reached_at_start_does_not_stop_the_start(make_bot, slack_env, fake_model,
                                                                              caplog):
    slack = slack_env
    slack.no_answer("auth.test")  # a machine that just booted: the check is skipped, posts wait for Slack
    await make_bot(CLARIFY_ONLY)
    said = [r for r in caplog.records if "cannot reach Slack to check SLACK_BOT_TOKEN" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING and not said[0].exc_info


async def test_a_failed_websocket_connect_is_retried_in_one_line_without_a_traceback(slack_env, caplog):
    slack = slack_env
    slack.refuse_connects(2)  # apps.connections.open answers; the websocket behind it fails twice
    app = AsyncApp(client=AsyncWebClient(token=slack.bot_token, base_url=slack.api_url))
    handler = SocketHandler(app, slack.app_token, ping_interval=0.05)
    try:
        await handler.connect_async()
        await slack.wait_connected()
    finally:
        await handler.close_async()
    failed = [r for r in caplog.records if r.getMessage().startswith("Failed to connect")]
    assert len(failed) == 2 and all(r.levelno == logging.WARNING and not r.exc_info for r in failed)
    assert len(slack.calls("apps.connections.open")) == 1

"""What can be checked with Slack at start is checked at start; a refused token stops the bot.

``check_bot_token`` asks ``auth.test`` before anything else starts: a refused SLACK_BOT_TOKEN
raises ``SlackAuthError``, which ``flower-bot`` prints as one line with the config exit code, instead
of being noticed only when posts fail. A Slack that cannot be reached is not a reason to stop
(the machine may have just booted): the bot starts, and waits for Slack where it must. The app
token is checked by the Socket Mode connection itself (``bot.inbound.socket``), at start and at every
reconnect; ``until_refused`` is where the running bot waits for that.
"""

from __future__ import annotations

import asyncio
import logging

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import SlackAuthError
from bot.inbound.socket import SocketHandler
from bot.outbound.api_errors import UNREACHABLE, classify, error_code

log = logging.getLogger(__name__)

__all__ = ["check_bot_token", "until_refused"]


async def check_bot_token(client: AsyncWebClient) -> None:
    """``auth.test`` with ``client``'s token: ``SlackAuthError`` (SLACK_BOT_TOKEN) when Slack refuses it.

    Any other failure (no network, a 5xx, another error) is logged in one line and the start goes
    on: posts wait for Slack and are retried, and a refused token is caught there too.
    """
    try:
        who = await client.auth_test()
    except SlackApiError as exc:
        if classify(exc) == "auth":
            raise SlackAuthError("SLACK_BOT_TOKEN", error_code(exc) or "invalid_auth") from None
        log.warning("auth.test failed (%s); starting anyway", error_code(exc) or exc.response.status_code)
        return
    except UNREACHABLE as exc:
        log.warning("cannot reach Slack to check SLACK_BOT_TOKEN (%s); starting anyway, posts wait for Slack",
                    " ".join(f"{type(exc).__name__}: {exc}".split())[:300])
        return
    log.info("Slack took the bot token: @%s in %s", who.get("user"), who.get("team"))


async def until_refused(socket: AsyncSocketModeHandler | None) -> None:
    """Wait as long as the bot runs: forever in HTTP mode; in Socket Mode until Slack refuses the
    app token on a reconnect, then raise that ``SlackAuthError`` (naming SLACK_APP_TOKEN)."""
    if isinstance(socket, SocketHandler):
        await socket.refused()
    await asyncio.Event().wait()

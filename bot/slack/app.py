"""The bolt ``AsyncApp``: listeners only. Each one is acked by bolt (events before the listener
runs, actions by our ``ack()`` first; an answer click once it is recorded) and hands the work to
``bot.slack.intake``.

bolt's self-event filter (on by default) drops the bot's own messages; ``Intake`` drops message
subtypes (``message_changed`` fires for our own ``chat.update`` too) and other bots.
"""

from __future__ import annotations

import re

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.render import messages as render

from bot.render import repo as render_repo
from bot.config import Config
from bot.slack.intake import Intake


def build_app(config: Config, client: AsyncWebClient, intake: Intake) -> AsyncApp:
    """An AsyncApp on ``client`` with every listener registered.

    Socket Mode needs no signing secret; HTTP mode verifies each request with it (bolt's own
    request verification: HMAC, constant-time compare, 5-minute window).
    """
    app = AsyncApp(client=client, signing_secret=config.signing_secret or "unused-in-socket-mode",
                   request_verification_enabled=config.mode == "http")

    @app.event("app_mention")
    async def on_mention(body: dict, event: dict) -> None:
        await intake.mention(body, event)

    @app.event("message")
    async def on_message(body: dict, event: dict) -> None:
        await intake.message(body, event)

    @app.action(re.compile(f"^{re.escape(render.ANSWER_PREFIX)}\\d+$"))
    async def on_answer(ack, body: dict) -> None:
        await intake.answer_click(body, ack)  # acks once the answer is recorded

    @app.action(render.STOP_ACTION)
    async def on_stop(ack, body: dict) -> None:
        await ack()
        await intake.control_click(body, stop=True)

    @app.action(render.NEW_ACTION)
    async def on_start_over(ack, body: dict) -> None:
        await ack()
        await intake.control_click(body, stop=False)

    @app.action(render_repo.PUSH_ACTION)
    async def on_push(ack, body: dict) -> None:
        await ack()
        await intake.repo.click(body, action=render_repo.PUSH_ACTION)

    @app.action(render_repo.DIFF_ACTION)
    async def on_diff(ack, body: dict) -> None:
        await ack()
        await intake.repo.click(body, action=render_repo.DIFF_ACTION)

    return app

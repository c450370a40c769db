"""The bolt ``AsyncApp``: the gate's middleware, the listeners, and the error handler.

Each event passes ``bot.slack.middleware`` first (people only, claimed once, allowed people only;
a button's thread or question looked up), then its listener hands the words to
``bot.slack.intake``. Events are acked by bolt before the listener runs; clicks by our ``ack()``
first, an answer click once it is recorded. A listener that raises is logged by ``on_error``
with what it was handling, and the app goes on with the next event.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.config import Config
from bot.render import messages as render
from bot.render import repo as render_repo
from bot.slack.intake import Intake
from bot.slack.middleware import Gate

log = logging.getLogger(__name__)

__all__ = ["build_app", "describe"]


def build_app(config: Config, client: AsyncWebClient, intake: Intake, gate: Gate) -> AsyncApp:
    """An AsyncApp on ``client`` with ``gate``'s middleware and every listener registered.

    Socket Mode needs no signing secret; HTTP mode verifies each request with it (bolt's own
    request verification: HMAC, constant-time compare, 5-minute window).
    """
    app = AsyncApp(client=client, signing_secret=config.signing_secret or "unused-in-socket-mode",
                   request_verification_enabled=config.mode == "http")
    app.middleware(gate.people_only)
    event_gate = [gate.claim_once, gate.allow_list]
    thread_button = [gate.names_thread, gate.allow_list]

    @app.event("app_mention", middleware=event_gate)
    async def on_mention(context, event: dict) -> None:
        await intake.mention(context["thread"], event)

    @app.event("message", middleware=event_gate)
    async def on_message(context, event: dict) -> None:
        await intake.message(context["thread"], event)

    @app.action(re.compile(f"^{re.escape(render.ANSWER_PREFIX)}\\d+$"),
                middleware=[gate.names_question, gate.allow_list])
    async def on_answer(ack, context) -> None:
        # acks once the answer is recorded
        await intake.answer_click(context["question"], context["option"], context.user_id, context.channel_id,
                                  context.thread_ts, ack)

    @app.action(render.STOP_ACTION, middleware=thread_button)
    async def on_stop(ack, context) -> None:
        await ack()
        await intake.control_click(context["thread"], context.user_id, stop=True)

    @app.action(render.NEW_ACTION, middleware=thread_button)
    async def on_start_over(ack, context) -> None:
        await ack()
        await intake.control_click(context["thread"], context.user_id, stop=False)

    @app.action(render_repo.PUSH_ACTION, middleware=thread_button)
    async def on_push(ack, context) -> None:
        await ack()
        await intake.repo.click(context["thread"], context.user_id, context.channel_id, action=render_repo.PUSH_ACTION,
                                branch=context.get("branch"))

    @app.action(render_repo.DIFF_ACTION, middleware=thread_button)
    async def on_diff(ack, context) -> None:
        await ack()
        await intake.repo.click(context["thread"], context.user_id, context.channel_id, action=render_repo.DIFF_ACTION)

    @app.error
    async def on_error(error: Exception, body: dict) -> None:
        log.error("failed to handle %s: %s", describe(body), error, exc_info=error)

    return app


def describe(body: dict[str, Any]) -> str:
    """What a request was, by its type and ids, for a log line: never its text, token or whole body."""
    event = body.get("event") if isinstance(body.get("event"), dict) else None
    if event is not None:
        kind = f"{event.get('type', '?')} event" + (f" ({event['subtype']})" if event.get("subtype") else "")
        ids = {"event_id": body.get("event_id"), "channel": event.get("channel"), "ts": event.get("ts"),
               "thread_ts": event.get("thread_ts"), "user": event.get("user")}
    else:
        actions = body.get("actions") or [{}]
        kind = f"{body.get('type', '?')} {actions[0].get('action_id', '')}".strip()
        channel, user = body.get("channel") or {}, body.get("user") or {}
        ids = {"channel": channel.get("id") if isinstance(channel, dict) else channel,
               "message_ts": (body.get("message") or {}).get("ts"),
               "user": user.get("id") if isinstance(user, dict) else user}
    return " ".join([kind, *(f"{k}={v}" for k, v in ids.items() if v)])

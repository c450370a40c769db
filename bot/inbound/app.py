"""The bolt ``AsyncApp``: the gate's middleware, the listeners, and the error handler.

Each event passes ``bot.inbound.gate`` first (people only, claimed once, allowed people only;
a button's thread or question looked up), then its listener hands the words to
``bot.inbound.intake``. Events are acked by bolt before the listener runs; clicks by our ``ack()``
first, an answer click once it is recorded. A listener that raises is logged by ``on_error``
with what it was handling, and the app goes on with the next event.

HTTP mode serves ``web_app``: bolt's request handling behind a check that the body is what Slack
sends (``bot.inbound.socket``). bolt parses the body before it verifies the signature, so a body
that is not JSON would end in a 500 and a traceback; here it is a 401 when unsigned and a 400 with
one warning line when signed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.internals import parse_body
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey
from bot.inbound.feedback_clicks import FeedbackClicks, names_feedback
from bot.inbound.gate import Gate
from bot.inbound.home import Home
from bot.inbound.intake import Intake
from bot.inbound.socket import problem
from bot.render import messages as render
from bot.render import repo as render_repo
from bot.render.controls import FEEDBACK_ACTION
from bot.render.home_view import HOME_STOP_ACTION
from bot.render.limit_notices import GO_ON_ACTION
from bot.render.pr_feedback import PR_WORK_ACTION
from bot.settings.config import Config

log = logging.getLogger(__name__)

__all__ = ["EVENTS_PATH", "build_app", "describe", "web_app"]

EVENTS_PATH = "/slack/events"


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

    @app.event("agent_session_stopped", middleware=[gate.allow_list])
    async def on_session_stopped(body: dict, event: dict) -> None:
        # Slack's own Stop button on the thread's agent session: the same as our Stop
        key = ThreadKey(body.get("team_id") or "", event["channel"], event["thread_ts"])
        await intake.session_stopped(key, event.get("user") or "")

    @app.action(re.compile(f"^{re.escape(render.ANSWER_PREFIX)}\\d+$"),
                middleware=[gate.names_question, gate.allow_list])
    async def on_answer(ack, context) -> None:
        # acks once the answer is recorded
        await intake.answer_click(context["question"], context["option"], context.user_id, context.channel_id,
                                  context.thread_ts, ack)

    home = Home(config=config, store=gate.store, client=client, intake=intake, gate=gate)

    @app.event("app_home_opened")
    async def on_home(event: dict) -> None:
        if event.get("tab") == "home":
            await home.opened(event.get("user") or "")

    @app.action(HOME_STOP_ACTION)
    async def on_home_stop(ack, body: dict, action: dict) -> None:
        await ack()
        await home.stop((body.get("user") or {}).get("id") or "", action.get("value") or "")

    @app.action(render.STOP_ACTION, middleware=thread_button)
    async def on_stop(ack, context) -> None:
        await ack()
        await intake.control_click(context["thread"], context.user_id, stop=True)

    @app.action(render.NEW_ACTION, middleware=thread_button)
    async def on_start_over(ack, context) -> None:
        await ack()
        await intake.control_click(context["thread"], context.user_id, stop=False)

    @app.action(GO_ON_ACTION, middleware=thread_button)
    async def on_go_on(ack, context) -> None:
        await ack()
        await intake.go_on_click(context["thread"], context.user_id)

    @app.action(render.TERMINAL_ACTION, middleware=thread_button)
    async def on_terminal(ack, context) -> None:
        await ack()
        await intake.terminal_click(context["thread"], context.user_id)

    @app.action(render_repo.PUSH_ACTION, middleware=thread_button)
    async def on_push(ack, context) -> None:
        await ack()
        await intake.repo.click(context["thread"], context.user_id, context.channel_id, action=render_repo.PUSH_ACTION,
                                branch=context.get("branch"))

    @app.action(render_repo.DIFF_ACTION, middleware=thread_button)
    async def on_diff(ack, context) -> None:
        await ack()
        await intake.repo.click(context["thread"], context.user_id, context.channel_id, action=render_repo.DIFF_ACTION)

    @app.action(render_repo.OPEN_PR_ACTION, middleware=thread_button)
    async def on_open_pr(ack, context) -> None:
        await ack()
        await intake.jobs.pull_requests.open(context["thread"], context.user_id, context.get("branch"), draft=False)

    @app.action(render_repo.DRAFT_PR_ACTION, middleware=thread_button)
    async def on_open_draft_pr(ack, context) -> None:
        await ack()
        await intake.jobs.pull_requests.open(context["thread"], context.user_id, context.get("branch"), draft=True)

    @app.action(PR_WORK_ACTION, middleware=thread_button)
    async def on_pr_work(ack, context) -> None:
        await ack()
        if context.get("branch"):  # the button's value names the review post after its thread
            await intake.pr_work_click(context["thread"], context.user_id, context["branch"])

    @app.action(render_repo.PR_LINK_ACTION)
    async def on_pr_link(ack) -> None:
        await ack()  # a link button: Slack opens the URL itself and tells the app, which has nothing to do

    feedback = FeedbackClicks(store=gate.store, client=client)

    @app.action(FEEDBACK_ACTION, middleware=[names_feedback, gate.allow_list])
    async def on_feedback(ack, context) -> None:
        await feedback.click(context, ack)  # acks once recorded

    @app.error
    async def on_error(error: Exception, body: dict) -> None:
        log.error("failed to handle %s: %s", describe(body), error, exc_info=error)

    return app


def describe(body: dict[str, Any]) -> str:
    """What a request was, by its type and ids, for a log line: never its text, token or whole body.

    Any shape is described without raising (this runs when handling already failed).
    """
    if not isinstance(body, dict):
        return f"a {type(body).__name__} body"
    event = body.get("event") if isinstance(body.get("event"), dict) else None
    if event is not None:
        kind = f"{event.get('type', '?')} event" + (f" ({event['subtype']})" if event.get("subtype") else "")
        ids = {"event_id": body.get("event_id"), "channel": event.get("channel"), "ts": event.get("ts"),
               "thread_ts": event.get("thread_ts"), "user": event.get("user")}
    else:
        actions = body.get("actions") if isinstance(body.get("actions"), list) else []
        first = actions[0] if actions and isinstance(actions[0], dict) else {}
        kind = f"{body.get('type', '?')} {first.get('action_id', '')}".strip()
        channel, user, message = (body.get(k) or {} for k in ("channel", "user", "message"))
        ids = {"channel": channel.get("id") if isinstance(channel, dict) else channel,
               "message_ts": message.get("ts") if isinstance(message, dict) else None,
               "user": user.get("id") if isinstance(user, dict) else user}
    return " ".join([kind, *(f"{k}={v}" for k, v in ids.items() if v)])


def web_app(app: AsyncApp, signing_secret: str, routes: Sequence[web.RouteDef] = ()) -> web.Application:
    """The aiohttp application for HTTP mode: ``POST /slack/events`` into ``app``, and ``routes``
    (the forges' webhooks) beside it.

    A body that does not parse, or is not what Slack sends, is answered before bolt sees it:
    401 when its signature is wrong (as bolt would; a body that is not UTF-8 cannot be verified),
    else 400 with one warning line.
    """
    verifier = SignatureVerifier(signing_secret)

    async def events(request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            text = raw.decode("utf-8")
            why = problem(parse_body(text, request.content_type))  # what AsyncBoltRequest would parse
        except ValueError as exc:  # not UTF-8 (then unverifiable: a 401), not JSON, a payload= not JSON
            text, why = None, f"the body does not parse ({type(exc).__name__})"
        if why is None and text is not None:
            bolt_req = AsyncBoltRequest(body=text, query=request.query_string,
                                        headers=request.headers)  # type: ignore[arg-type]
            return await to_aiohttp_response(await app.async_dispatch(bolt_req))
        try:
            signed = verifier.is_valid(raw, request.headers.get("X-Slack-Request-Timestamp"),
                                       request.headers.get("X-Slack-Signature"))
        except ValueError:  # a timestamp that is not a number, a body that is not UTF-8
            signed = False
        if not signed:
            return web.Response(status=401, text="invalid request")
        log.warning("refused a signed request that is not what Slack sends (%d bytes): %s", len(raw), why)
        return web.Response(status=400, text=f"malformed request: {why}")

    application = web.Application()
    application.add_routes([web.post(EVENTS_PATH, events), *routes])
    return application

"""The Socket Mode connection: slack_sdk's aiohttp client with two refusals handled the bot's way.

slack_sdk's ``SocketModeClient.connect`` retries every failure every ``ping_interval`` seconds,
forever, logging a traceback each time: a revoked app token (``apps.connections.open`` ->
``invalid_auth``) then fills the log and the bot never says what is wrong. Here a refused app
token ends the client and raises ``SlackAuthError`` (naming SLACK_APP_TOKEN) to whoever waits in
``refused()``; a transient failure (no network, a 5xx) is retried with a growing delay, one log line
each, no traceback (a failed websocket connect too: slack_sdk's own retry, its traceback dropped).
A frame that is not what Slack sends (not JSON, an envelope without its payload, fields of the
wrong type: ``bot.inbound.malformed``) is acked, so Slack does not send it again, and logged in one
line instead of reaching bolt.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient

from bot.errors import SlackAuthError
from bot.inbound.malformed import problem
from bot.outbound.api_errors import UNREACHABLE, classify, error_code

log = logging.getLogger(__name__)

__all__ = ["SDK_LOG", "SocketClient", "SocketHandler"]


class _OneLineRetries(logging.Filter):
    """slack_sdk logs every failed websocket connect with a traceback, then retries: the network
    being down is no bug, so that record becomes one warning line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("Failed to connect"):
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


SDK_LOG = logging.getLogger(f"{__name__}.sdk")  # what slack_sdk's client says about its connection
SDK_LOG.addFilter(_OneLineRetries())

PING_INTERVAL_S = 10.0  # bolt's AsyncSocketModeHandler default
FIRST_RETRY_S = 1.0
MAX_RETRY_S = 60.0
_REQUESTS = ("events_api", "interactive", "slash_commands")  # the envelope types bolt handles


class SocketClient(SocketModeClient):
    """slack_sdk's aiohttp ``SocketModeClient``: refused app token fatal, transient failures quiet,
    malformed frames dropped. Build it inside the running loop (as the library's own)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refusal: asyncio.Future[SlackAuthError] = asyncio.get_running_loop().create_future()
        self.retry_first_s = FIRST_RETRY_S
        self._handling: set[asyncio.Task[None]] = set()  # strong references: the loop keeps only weak ones

    async def issue_new_wss_url(self) -> str:
        """A fresh websocket URL from ``apps.connections.open``, waiting out transient failures.

        Raises ``SlackAuthError`` (and closes the client, so slack_sdk's reconnect loops end) when
        Slack refuses the app token; ``ConnectionError`` when the client was closed meanwhile.
        """
        attempt = 0
        while not self.closed:
            try:
                response = await self.web_client.apps_connections_open(app_token=self.app_token)
                return response["url"]
            except (SlackApiError, *UNREACHABLE) as exc:
                if classify(exc) == "auth":
                    raise self._refused(error_code(exc) or "invalid_auth") from None
                delay = min(MAX_RETRY_S, self.retry_first_s * 2 ** min(attempt, 6))
                attempt += 1
                log.warning("cannot open a Socket Mode connection (%s); trying again in %g s", _said(exc), delay)
                await asyncio.sleep(delay)
        raise ConnectionError("the Socket Mode client was closed while opening a connection")

    async def connect_to_new_endpoint(self, force: bool = False) -> None:
        """slack_sdk's reconnect (after a disconnect frame, a dead session, the watchdog), quiet when
        the app token was refused: ``refusal`` carries that to whoever waits in ``refused()``."""
        try:
            await super().connect_to_new_endpoint(force=force)
        except SlackAuthError:
            pass

    def _refused(self, code: str) -> SlackAuthError:
        error = SlackAuthError("SLACK_APP_TOKEN", code)
        self.closed = True  # connect() and the session monitor stop retrying once the client is closed
        self.auto_reconnect_enabled = False
        if not self.refusal.done():
            self.refusal.set_result(error)
        return error

    async def process_message(self) -> None:
        """Take one frame off the queue; hand it to the listeners unless it is malformed."""
        raw = await self.message_queue.get()
        if raw is None or not raw.strip():  # Slack sends empty frames now and then
            return
        try:
            message = json.loads(raw) if raw.lstrip().startswith(("{", "[")) else None
        except ValueError as exc:
            log.warning("ignored a Socket Mode frame that is not JSON (%d characters: %s)", len(raw), exc.msg)
            return
        if not isinstance(message, dict):
            log.warning("ignored a Socket Mode frame that is not a JSON object (%d characters)", len(raw))
            return
        why = _envelope_problem(message)
        if why is not None:
            envelope_id = message.get("envelope_id")
            log.warning("ignored a malformed %s envelope %s: %s", message.get("type"), envelope_id, why)
            if isinstance(envelope_id, str) and envelope_id:
                try:  # acked, so Slack does not send it again
                    await self.send_socket_mode_response({"envelope_id": envelope_id})
                except (ConnectionError, *UNREACHABLE) as exc:
                    log.warning("could not ack envelope %s (%s): Slack may send it again", envelope_id, _said(exc))
            return
        task = asyncio.ensure_future(self.run_message_listeners(message, raw))  # concurrently, as slack_sdk does
        self._handling.add(task)
        task.add_done_callback(self._handling.discard)


def _said(exc: BaseException) -> str:
    """A failed call in a few words on one line: Slack's error code and HTTP status, or the exception."""
    if isinstance(exc, SlackApiError):
        status = getattr(exc.response, "status_code", None)
        return " ".join(p for p in (error_code(exc) or "", f"HTTP {status}" if status else "") if p) or "refused"
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


def _envelope_problem(message: dict[str, Any]) -> str | None:
    """Why an envelope of a request type cannot be handled; None for one that can, or another frame."""
    if message.get("type") not in _REQUESTS:
        return None
    if not isinstance(message.get("envelope_id"), str) or not message["envelope_id"]:
        return "no envelope_id"
    why = problem(message.get("payload"))
    return f"payload: {why}" if why else None


class SocketHandler(AsyncSocketModeHandler):
    """bolt's ``AsyncSocketModeHandler`` on a ``SocketClient``; ``refused()`` raises when Slack
    refuses the app token (at connect or any later reconnect)."""

    def __init__(self, app: AsyncApp, app_token: str, *, ping_interval: float | None = None) -> None:
        # the library's __init__ builds its own client; this is the same wiring on ours
        self.app, self.app_token = app, app_token
        self.client = SocketClient(app_token=app_token, logger=SDK_LOG, web_client=app.client,
                                   ping_interval=ping_interval or PING_INTERVAL_S)
        self.client.socket_mode_request_listeners.append(self.handle)  # type: ignore[arg-type]

    async def connect_async(self) -> None:
        """Connect; ``SlackAuthError`` (the client closed, its session too) when the app token is refused."""
        await self.client.connect()
        if self.client.refusal.done():
            await self.client.close()
            raise self.client.refusal.result()

    async def refused(self) -> None:
        """Wait until Slack refuses the app token, then raise that ``SlackAuthError``."""
        raise await asyncio.shield(self.client.refusal)

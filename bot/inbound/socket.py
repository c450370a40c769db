"""The Socket Mode connection: slack_sdk's aiohttp client with two refusals handled the bot's way.

slack_sdk's ``SocketModeClient.connect`` retries every failure every ``ping_interval`` seconds,
forever, logging a traceback each time: a revoked app token (``apps.connections.open`` ->
``invalid_auth``) then fills the log and the bot never says what is wrong. Here a refused app
token ends the client and raises ``SlackAuthError`` (naming SLACK_APP_TOKEN) to whoever waits in
``refused()``; a transient failure (no network, a 5xx) is retried with a growing delay, one log line
each, no traceback (a failed websocket connect too: slack_sdk's own retry, its traceback dropped).
A frame that is not what Slack sends (not JSON, an envelope without its payload, fields of the
wrong type) is acked, so Slack does not send it again, and logged in one line instead of reaching
bolt.

Frames that are not what Slack sends (``problem``, also used by the HTTP endpoint): found before
bolt reads them, refused with one log line. bolt and the bot's middleware index what Slack always
sends; a frame cut short, a proxy's error page or a hand-made request would otherwise end in a
traceback, or worse, halfway through handling. ``problem`` checks exactly the fields that code
reads, for the request kinds the bot listens to, and lets everything else through.

The watchdog (``SocketWatchdog``): after an idle reconnect Slack can leave a websocket that answers
pings yet delivers no envelope again; slack_sdk's monitor only checks ping/pong. Every text frame
counts as life; when none arrives for ``idle_s`` seconds the client opens a fresh connection (Slack
redelivers what was not acked).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient

from bot.errors import SlackAuthError
from bot.outbound.api_errors import UNREACHABLE, classify, error_code

log = logging.getLogger(__name__)

__all__ = ["SDK_LOG", "SocketClient", "SocketHandler", "SocketWatchdog", "problem"]


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


# -- Frames that are not what Slack sends (``problem``, also used by the HTTP endpoint) ------------
_EVENTS_READ = frozenset({"app_mention", "message"})  # the events the bot has listeners for
_EVENT_REQUIRED = ("channel", "ts")
_EVENT_STRINGS = ("type", "subtype", "text", "user", "thread_ts", "bot_id", "team", "event_ts", "channel_type")
_BODY_STRINGS = ("type", "team_id", "event_id", "api_app_id", "command", "text", "user_id", "channel_id")


def _kind(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def problem(body: object) -> str | None:
    """Why ``body`` (a parsed request: an Events API callback, an interaction, a slash command)
    cannot be what Slack sent, in a few words naming the field; None when it may be.

    Checked: the body is an object; its ids are strings; an ``event`` is an object with a type,
    and a ``message`` / ``app_mention`` event has string ``channel`` and ``ts`` (and strings or
    nothing in the other fields the bot reads, ``files`` a list of objects); ``actions`` (and a
    ``block_actions`` has them) is a non-empty list of objects with a string ``action_id``, and the
    ``channel`` / ``user`` beside it are objects with a string ``id``.
    """
    if not isinstance(body, dict):
        return f"the body is {_kind(body)}, not an object"
    for name in _BODY_STRINGS:
        if body.get(name) is not None and not isinstance(body[name], str):
            return f"{name} is {_kind(body[name])}, not a string"
    if "event" in body:
        found = _event_problem(body["event"])
        if found:
            return found
    if "actions" in body or body.get("type") == "block_actions":
        return _actions_problem(body)
    return None


def _event_problem(event: object) -> str | None:
    if not isinstance(event, dict):
        return f"event is {_kind(event)}, not an object"
    if not isinstance(event.get("type"), str):
        return "event has no type"
    if event["type"] not in _EVENTS_READ:
        return None
    for name in _EVENT_REQUIRED:
        if not isinstance(event.get(name), str):
            return f"{event['type']} event without a string {name}"
    for name in _EVENT_STRINGS:
        if event.get(name) is not None and not isinstance(event[name], str):
            return f"event.{name} is {_kind(event[name])}, not a string"
    files = event.get("files")
    if files is not None and not (isinstance(files, list) and all(isinstance(f, dict) for f in files)):
        return "event.files is not a list of objects"
    return None


def _actions_problem(body: dict[str, Any]) -> str | None:
    actions = body.get("actions")
    if not isinstance(actions, list) or not actions:
        return "actions is missing or empty"
    for n, action in enumerate(actions):
        if not isinstance(action, dict) or not isinstance(action.get("action_id"), str):
            return f"actions[{n}] has no string action_id"
        for name in ("value", "block_id"):
            if action.get(name) is not None and not isinstance(action[name], str):
                return f"actions[{n}].{name} is {_kind(action[name])}, not a string"
    for name in ("channel", "user"):
        where = body.get(name)
        if where is not None and not (isinstance(where, dict) and isinstance(where.get("id"), str)):
            return f"{name} is not an object with a string id"
    return None


# -- The watchdog (``SocketWatchdog``) -------------------------------------------------------------


class SocketWatchdog:
    """Force a reconnect of ``client`` whenever no text frame arrived for ``idle_s`` seconds.

    ``client`` is slack_sdk's aiohttp ``SocketModeClient`` (the one bolt's handler holds): frames
    are observed through its ``on_message_listeners``. ``start()`` inside the running loop, then
    ``close()``; ``reconnects`` counts the forced reconnects. ``idle_s`` must be positive.
    """

    def __init__(self, client: AsyncBaseSocketModeClient, *, idle_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if idle_s <= 0:
            raise ValueError(f"idle_s must be positive; got {idle_s!r}. Pass the seconds of silence to allow.")
        self.client, self.idle_s, self._clock = client, idle_s, clock
        self.reconnects = 0
        self._last = clock()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Listen to the client's frames and begin watching."""
        self._last = self._clock()
        listeners = getattr(self.client, "on_message_listeners", None)
        if listeners is None:
            raise TypeError(f"{type(self.client).__name__} has no on_message_listeners; use slack_sdk's "
                            "aiohttp SocketModeClient (bolt's AsyncSocketModeHandler default).")
        listeners.append(self._heard)
        self._task = asyncio.create_task(self._watch(), name="flower-socket-watchdog")

    async def close(self) -> None:
        """Stop watching (before the client closes, so no reconnect races the shutdown)."""
        listeners = getattr(self.client, "on_message_listeners", [])
        if self._heard in listeners:
            listeners.remove(self._heard)
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _heard(self, _message: Any) -> None:
        self._last = self._clock()

    async def _watch(self) -> None:
        while not getattr(self.client, "closed", False):  # closed: shut down, or its app token was refused
            quiet = self._clock() - self._last
            if quiet < self.idle_s:
                await asyncio.sleep(self.idle_s - quiet)
                continue
            log.warning("no Socket Mode frame for %.0f s (FLOWER_SOCKET_IDLE_S=%g); reconnecting",
                        quiet, self.idle_s)
            self._last = self._clock()  # the new connection's hello, or another idle_s, comes next
            self.reconnects += 1
            try:
                await self.client.connect_to_new_endpoint(force=True)
            except Exception:  # a failed reconnect is tried again after the next idle spell
                log.exception("Socket Mode reconnect after silence failed")

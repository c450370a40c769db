"""FakeSlack: one local server with the Web API, Socket Mode and signed HTTP delivery, for tests."""

from __future__ import annotations

from typing import Any, Callable, Literal, TypeVar

from aiohttp import web

from bot.testing import http_events, payloads
from bot.testing.errors import FakeSlackError
from bot.testing.file_host import FileHost
from bot.testing.http_events import HttpDelivery
from bot.testing.interactions import Interactions
from bot.testing.messages import MessageStore
from bot.testing.payloads import DisconnectReason
from bot.testing.records import Ack, Call, Connection, Download, Envelope
from bot.testing.signal import Signal
from bot.testing.socket_mode import SocketModeServer
from bot.testing.web_api import Fault, WebApi
from bot.testing.web_methods import WebMethods
from bot.testing.workspace import Workspace

T = TypeVar("T")
DEFAULT_TIMEOUT = 240.0  # generous: tests share two cores with other jobs (a whole run once took >60 s with a second suite running); nothing waits this long when it works


class FakeSlack(Interactions):
    """A fake Slack on 127.0.0.1 (port 0) that the real slack_sdk and slack-bolt talk to.

    Use as `async with FakeSlack() as slack:` (or `await start()` / `await close()`). Point clients at
    `slack.api_url` (SLACK_API_URL); Socket Mode URLs come from apps.connections.open. People's
    messages are built with the Actors methods (`mention`, `user_message`, ...) and pushed with
    `send_event`; everything the app does is recorded and awaited with `wait_for` / `wait_until`.
    """

    def __init__(self, workspace: Workspace | None = None) -> None:
        store = MessageStore(workspace or Workspace())
        self.signal = Signal()
        self.socket = SocketModeServer(store.workspace, self.signal)
        self.methods = WebMethods(store, origin=lambda: self.origin, socket_url=self.socket.issue_url)
        self.web = WebApi(self.methods, self.signal)
        self.file_host = FileHost(store, self.signal, refused_tokens=self.methods.refused_tokens)
        super().__init__(store, response_url=self.web.issue_response_url)
        self.origin = ""
        self._runner: web.AppRunner | None = None

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> FakeSlack:
        """Listen on 127.0.0.1 on a free port; idempotent."""
        if self._runner is None:
            app = web.Application()
            app.add_routes(self.web.routes() + self.socket.routes() + self.file_host.routes())
            self._runner = web.AppRunner(app, handle_signals=False)
            await self._runner.setup()
            await web.TCPSite(self._runner, "127.0.0.1", 0).start()
            host, port = self._runner.addresses[0][:2]
            self.origin = self.socket.origin = self.store.files_origin = f"http://{host}:{port}"
        return self

    async def close(self) -> None:
        """Close every websocket and stop the server; idempotent."""
        if self._runner is not None:
            await self.socket.close()
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeSlack:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def api_url(self) -> str:
        """The Web API base URL with its trailing slash: slack_sdk's `base_url`, the bot's SLACK_API_URL."""
        return f"{self.origin}/api/"

    @property
    def bot_token(self) -> str:
        """The xoxb- token the fake accepts for Web API calls."""
        return self.workspace.bot_token

    @property
    def app_token(self) -> str:
        """The xapp- token the fake accepts for apps.connections.open."""
        return self.workspace.app_token

    def env(self) -> dict[str, str]:
        """SLACK_BOT_TOKEN, SLACK_APP_TOKEN and SLACK_API_URL pointing at this fake (Socket Mode)."""
        return {"SLACK_BOT_TOKEN": self.bot_token, "SLACK_APP_TOKEN": self.app_token, "SLACK_API_URL": self.api_url}

    # --- waiting -----------------------------------------------------------------------------

    async def wait_until(
        self, check: Callable[[], T | None], *, timeout: float = DEFAULT_TIMEOUT, what: str = "a condition"
    ) -> T:
        """Return the first truthy `check()`, re-checked whenever the fake records anything."""
        return await self.signal.wait_until(check, timeout=timeout, what=lambda: f"{what} never held")

    # --- the Web API as recorded ---------------------------------------------------------------

    def calls(self, method: str | None = None, **match: Any) -> list[Call]:
        """Recorded calls in order, of `method` (all if None) whose body has each `match` value."""
        return [c for c in self.web.calls if c.matches(method, match)]

    def mark(self) -> int:
        """The index the next call will get: pass it as `after=` to wait only for later calls."""
        return len(self.web.calls)

    async def wait_for(
        self,
        method: str | None = None,
        predicate: Callable[[Call], bool] | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        after: int = 0,
        **match: Any,
    ) -> Call:
        """The first call (index >= `after`) of `method` matching `match` and `predicate`, waiting for it.

        Already-recorded calls count, so there is no race with a call made before the wait began.
        """

        def found() -> Call | None:
            for call in self.web.calls[after:]:
                if call.matches(method, match) and (predicate is None or predicate(call)):
                    return call
            return None

        def what() -> str:
            seen = [f"{c.method}({ {k: c.body.get(k) for k in ('channel', 'ts', 'thread_ts', 'text')} })"
                    for c in self.web.calls[after:]][-10:]  # fmt: skip
            wanted = f"{method or 'call'} matching {match or ''}{' and predicate' if predicate else ''}"
            return f"no {wanted}; last calls: {seen}"

        return await self.signal.wait_until(found, timeout=timeout, what=what)

    def messages_in(self, channel: str, thread_ts: str | None = None) -> list[dict]:
        """The channel (top level) or the thread as Slack would show it now: current text/blocks, oldest first."""
        where = self._channel(channel)
        found = self.store.thread(where.id, thread_ts) if thread_ts else self.store.top_level(where.id)
        return [self.store.to_api(m) for m in found]

    def message(self, channel: str, ts: str) -> dict | None:
        """The message at `ts` as Slack shows it now, or None when unknown or deleted."""
        found = self.store.get(self._channel(channel).id, ts)
        return None if found is None else self.store.to_api(found)

    def status_of(self, channel: str, thread_ts: str) -> str | None:
        """The assistant status line under the thread now ("" once cleared), or None if never set."""
        return self.methods.statuses.get((self._channel(channel).id, thread_ts))

    def session_of(self, channel: str, thread_ts: str) -> dict | None:
        """The thread's agent session: ``{"title", "statuses": [every status set, in order]}``, or
        None when none was ever set (agents.sessions.setStatus)."""
        return self.methods.sessions.get((self._channel(channel).id, thread_ts))

    @property
    def ephemerals(self) -> list[dict]:
        """Ephemeral messages posted (chat.postEphemeral, response_url): channel, user, ts, text, blocks."""
        return self.methods.ephemerals

    # --- files ----------------------------------------------------------------------------------

    def add_file(
        self, name: str, data: bytes, *, mimetype: str, filetype: str, file_access: str | None = None,
        size: int | None = None,
    ) -> dict:  # fmt: skip
        """A file a person shares: the object to put in an event's `files` (`mention(files=[...])`).

        It is served at its `url_private_download` on the fake's own server, to the bot token only.
        `file_access="check_file_info"` gives Slack Connect's stub (no URL: files.info tells the
        rest); `size` states a size other than the bytes' (a lying client: then served chunked).
        Call it after the fake started, so the URL points at it.
        """
        upload = self.store.new_file(name, len(data), data, mimetype=mimetype, filetype=filetype,
                                     file_access=file_access, declared_size=size)
        return upload.to_event()

    @property
    def downloads(self) -> list[Download]:
        """Every request to the fake's file host, in order (path, Authorization sent, status)."""
        return self.file_host.downloads

    def uploads(self, channel: str, thread_ts: str | None = None) -> list[tuple[str, bytes]]:
        """(filename, bytes) of each file the app uploaded to `channel` (in `thread_ts` when given), in order."""
        channel_id = self._channel(channel).id
        return [(u.filename, u.content or b"") for u in self.store.uploads.values()
                if u.by_bot and u.channel == channel_id and (thread_ts is None or u.thread_ts == thread_ts)]

    # --- fault injection ---------------------------------------------------------------------

    def rate_limit(self, method: str, *, times: int = 1, retry_after: int = 1) -> None:
        """The next `times` calls of `method` answer HTTP 429 with `Retry-After: retry_after`."""
        self.web.inject(method, Fault("rate_limited", times, retry_after=retry_after))

    def server_error(self, method: str, *, times: int = 1, status: int = 500) -> None:
        """The next `times` calls of `method` answer HTTP `status` (5xx)."""
        self.web.inject(method, Fault("http_error", times, status=status))

    def no_answer(self, method: str, *, times: int = 1, after: bool = False) -> None:
        """The next `times` calls of `method` get no answer: the connection is closed (a dropped
        network). With `after`, the call takes effect first and only its answer is lost."""
        self.web.inject(method, Fault("lost_answer" if after else "disconnect", times))

    def api_error(self, method: str, error: str, *, times: int = 1) -> None:
        """The next `times` calls of `method` answer 200 `{"ok": false, "error": error}`."""
        self.web.inject(method, Fault("api_error", times, error=error))

    def refuse_blocks(self, *types: str) -> None:
        """From now on a message with a block of one of ``types`` is refused (``invalid_blocks``),
        as by a Slack that does not know the block (``context_actions`` in an older workspace)."""
        self.methods.refused_blocks.update(types)

    def refuse_token(self, token: str, error: str | None = "invalid_auth") -> None:
        """Every later call with `token` answers `error` (`invalid_auth`, `token_revoked`,
        `account_inactive`: a revoked or uninstalled token); `error=None` accepts it again."""
        if error is None:
            self.methods.refused_tokens.pop(token, None)
        else:
            self.methods.refused_tokens[token] = error

    def refuse_posts(self, channel: str, error: str | None = "is_archived") -> None:
        """Every later chat.postMessage in `channel` answers `error` (`is_archived`, `not_in_channel`);
        `error=None` lets posts through again."""
        channel_id = self._channel(channel).id
        if error is None:
            self.methods.refused_posts.pop(channel_id, None)
        else:
            self.methods.refused_posts[channel_id] = error

    # --- Socket Mode -------------------------------------------------------------------------

    def event_payload(self, event: dict, *, event_id: str | None = None) -> dict:
        """The event_callback wrapping `event` (also what deliver_http posts)."""
        return payloads.event_callback(self.workspace, event, event_id=event_id or self.store.next_id("Ev"))

    async def send_event(
        self,
        event: dict,
        *,
        retry_attempt: int = 0,
        retry_reason: str = "",
        event_id: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        to: int | None = None,
    ) -> str:
        """Push `event` as an events_api envelope; return its envelope_id.

        A redelivery reuses the first delivery's `event_id` with `retry_attempt` >= 1 (bolt turns it
        into the `x-slack-retry-num` header). Waits up to `timeout` for an open connection (number
        `to`, when given: a test of several bot replicas picks the one that receives it).
        """
        payload = self.event_payload(event, event_id=event_id)
        return await self.socket.send(
            "events_api", payload, retry_attempt=retry_attempt, retry_reason=retry_reason, timeout=timeout, to=to
        )

    async def send_events(self, *events: dict, timeout: float = DEFAULT_TIMEOUT) -> list[str]:
        """Push several events in order (e.g. the `thread_mention()` pair); return their envelope ids."""
        return [await self.send_event(e, timeout=timeout) for e in events]

    async def redeliver(self, envelope_id: str, *, reason: str = "timeout", timeout: float = DEFAULT_TIMEOUT) -> str:
        """Send an events_api envelope again as Slack's retry: same event_id, retry_attempt + 1."""
        first = self.socket.envelopes.get(envelope_id)
        if first is None or first.type != "events_api":
            raise FakeSlackError(f"no events_api envelope {envelope_id!r} to redeliver; pass an id from send_event")
        return await self.socket.send(
            "events_api", first.payload, retry_attempt=first.retry_attempt + 1, retry_reason=reason, timeout=timeout
        )

    async def click(
        self,
        channel: str,
        message_ts: str,
        action_id: str,
        *,
        user: str | None = None,
        value: str | None = None,
        feedback: Literal["positive", "negative"] = "positive",
        timeout: float = DEFAULT_TIMEOUT,
        to: int | None = None,
    ) -> str:
        """Push a block_actions click on an existing button (interactive envelope); return the envelope_id.

        On feedback buttons, `feedback` says which one (see `click_payload`); `to` as in `send_event`."""
        payload = self.click_payload(channel, message_ts, action_id, user=user, value=value, feedback=feedback)
        return await self.socket.send("interactive", payload, timeout=timeout, to=to)

    async def click_home(self, user: str, action_id: str, *, timeout: float = DEFAULT_TIMEOUT) -> str:
        """Push `user`'s click of button `action_id` on their App Home tab; return the envelope_id."""
        return await self.socket.send("interactive", self.home_click_payload(user, action_id), timeout=timeout)

    def home_of(self, user: str) -> dict | None:
        """The App Home view last published for `user`, or None."""
        return self.store.home_views.get(user)

    async def slash_command(
        self, command: str, text: str = "", *, channel: str, user: str | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> str:
        """Push a slash_commands envelope; return its envelope_id."""
        payload = self.slash_command_payload(command, text, channel=channel, user=user)
        return await self.socket.send("slash_commands", payload, timeout=timeout)

    async def wait_ack(self, envelope_id: str, *, timeout: float = DEFAULT_TIMEOUT) -> Ack:
        """The client's ack of `envelope_id` (with its latency), waiting for it if needed."""
        return await self.socket.wait_ack(envelope_id, timeout=timeout)

    @property
    def envelopes(self) -> list[Envelope]:
        """Every envelope pushed, in order, each with its ack once received."""
        return list(self.socket.envelopes.values())

    @property
    def connections(self) -> list[Connection]:
        """Every Socket Mode connection ever accepted, in order."""
        return self.socket.connections

    async def wait_connected(self, count: int = 1, *, timeout: float = DEFAULT_TIMEOUT) -> Connection:
        """Wait until `count` connections were accepted in total and one is open; return the open one."""
        return await self.signal.wait_until(
            lambda: self.socket.current() if len(self.socket.connections) >= count else None,
            timeout=timeout,
            what=lambda: f"wanted connection #{count}, have {len(self.socket.connections)}",
        )

    async def send_raw(self, data: str, *, timeout: float = DEFAULT_TIMEOUT) -> int:
        """Send `data` as one text frame on the current connection, as it is (a malformed frame);
        return that connection's index."""
        return await self.socket.send_text(data, timeout=timeout)

    def refuse_connects(self, times: int = 1) -> None:
        """The next `times` websocket connects fail with HTTP 503; the URL they used stays good."""
        self.socket.refused_links += times

    async def disconnect(self, reason: DisconnectReason = "warning", *, timeout: float = DEFAULT_TIMEOUT) -> int:
        """Send a `disconnect` frame on the current connection; return its index."""
        return await self.socket.disconnect(reason, timeout=timeout)

    async def drop_connection(self, *, clean: bool = False, timeout: float = DEFAULT_TIMEOUT) -> int:
        """Close the current connection (close frame if `clean`, else cut TCP); return its index."""
        return await self.socket.drop(clean=clean, timeout=timeout)

    async def stop_answering_pings(self, *, timeout: float = DEFAULT_TIMEOUT) -> int:
        """Ignore pings on the current connection, so the client's ping/pong watchdog trips; return its index."""
        return await self.socket.stop_answering_pings(timeout=timeout)

    # --- HTTP Events API -----------------------------------------------------------------------

    async def deliver_http(
        self,
        url: str,
        payload: dict,
        *,
        signing_secret: str,
        timestamp: int | None = None,
        tamper: bool = False,
        retry_num: int | None = None,
        retry_reason: str = "http_timeout",
    ) -> HttpDelivery:
        """POST `payload` (an event_payload, click_payload, slash_command_payload or url_verification) signed."""
        return await http_events.deliver(
            url, payload, signing_secret=signing_secret, timestamp=timestamp, tamper=tamper, retry_num=retry_num,
            retry_reason=retry_reason,
        )  # fmt: skip

    async def deliver_http_raw(
        self, url: str, body: bytes, *, signing_secret: str, content_type: str = "application/json"
    ) -> HttpDelivery:
        """POST `body` as it is (not JSON, cut short, ...), correctly signed: what a broken proxy could send."""
        return await http_events.deliver_raw(url, body, content_type, signing_secret=signing_secret)


"""The fake Socket Mode endpoint: websocket connections, envelopes pushed to the client, acks back."""

from __future__ import annotations

import json
import random
import time
import uuid

from aiohttp import WSMsgType, web

from bot.testing import payloads
from bot.testing.errors import FakeSlackError
from bot.testing.payloads import DisconnectReason, EnvelopeType
from bot.testing.records import Ack, Connection, Envelope
from bot.testing.signal import Signal
from bot.testing.workspace import Workspace


class SocketModeServer:
    """Accepts the client's websockets at `/link/`, sends `hello`, pushes envelopes, records acks.

    Envelopes go to the newest open connection, as Slack delivers on one of the app's sockets;
    with ``spread`` set (a seeded ``random.Random``), to one of the open connections picked by it,
    as Slack spreads an app's events over its connections (several bot replicas).
    """

    def __init__(self, workspace: Workspace, signal: Signal) -> None:
        self.workspace = workspace
        self.signal = signal
        self.origin = ""  # "http://127.0.0.1:PORT", set when the server starts
        self.connections: list[Connection] = []
        self.envelopes: dict[str, Envelope] = {}
        self._sockets: dict[int, tuple[web.WebSocketResponse, web.Request]] = {}
        self._tickets: set[str] = set()
        self.refused_links = 0  # how many more websocket connects to refuse (HTTP 503)
        self.spread: random.Random | None = None

    def routes(self) -> list[web.RouteDef]:
        """The websocket route to add to the fake's aiohttp application."""
        return [web.get("/link/", self._link)]

    def issue_url(self) -> str:
        """A fresh `ws://` URL, as apps.connections.open returns it."""
        ticket = uuid.uuid4().hex
        self._tickets.add(ticket)
        ws_origin = self.origin.replace("http://", "ws://", 1)
        return f"{ws_origin}/link/?ticket={ticket}&app_id={self.workspace.app_id}"

    def current(self) -> Connection | None:
        """The newest connection that is still open, or None."""
        open_ = self.open_connections()
        return open_[-1] if open_ else None

    def open_connections(self) -> list[Connection]:
        """The connections still open, oldest first."""
        found = []
        for conn in self.connections:
            socket = self._sockets.get(conn.index)
            if not conn.closed and socket is not None and not socket[0].closed:
                found.append(conn)
        return found

    def _pick(self, to: int | None = None) -> Connection | None:
        open_ = self.open_connections()
        if to is not None:
            return next((c for c in open_ if c.index == to), None)
        if self.spread is None:
            return open_[-1] if open_ else None
        return self.spread.choice(open_) if open_ else None

    async def _link(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        if self.refused_links > 0:  # Slack's edge failing, the ticket still good for a later try
            self.refused_links -= 1
            self.signal.notify()
            return web.json_response({"ok": False, "error": "service_unavailable"}, status=503)
        if ticket not in self._tickets:
            return web.json_response({"ok": False, "error": "invalid_ticket"}, status=401)
        ws = web.WebSocketResponse(autoping=False)  # pings are answered by hand, so a test can stop answering
        await ws.prepare(request)
        conn = Connection(index=len(self.connections), ticket=ticket)
        self.connections.append(conn)
        self._sockets[conn.index] = (ws, request)
        open_count = sum(1 for c in self.connections if not c.closed)
        await ws.send_str(json.dumps(payloads.hello(self.workspace, num_connections=open_count)))
        self.signal.notify()
        try:
            async for msg in ws:
                if msg.type == WSMsgType.PING:
                    conn.pings += 1
                    if conn.answer_pings:
                        await ws.pong(msg.data)
                elif msg.type == WSMsgType.TEXT:
                    self._received(conn, msg.data)
                self.signal.notify()
        finally:
            conn.closed = True
            self.signal.notify()
        return ws

    def _received(self, conn: Connection, data: str) -> None:
        frame = json.loads(data)
        conn.frames.append(frame)
        envelope = self.envelopes.get(frame.get("envelope_id", ""))
        if envelope is not None and envelope.ack is None:
            latency = time.perf_counter() - envelope.sent_at
            envelope.ack = Ack(envelope.envelope_id, frame.get("payload"), latency, conn.index)

    async def _ready(self, timeout: float, to: int | None = None) -> tuple[Connection, web.WebSocketResponse]:
        conn = await self.signal.wait_until(
            lambda: self._pick(to),
            timeout=timeout,
            what=lambda: f"no open Socket Mode connection ({len(self.connections)} so far); did the client connect?",
        )
        return conn, self._sockets[conn.index][0]

    async def send(
        self, kind: EnvelopeType, payload: dict, *, retry_attempt: int = 0, retry_reason: str = "", timeout: float,
        to: int | None = None,
    ) -> str:
        """Push one envelope on the current connection, or connection number ``to`` (waiting up to
        `timeout` for it to be open); return its id."""
        envelope_id = str(uuid.uuid4())
        frame = payloads.envelope(
            kind, payload, envelope_id=envelope_id, retry_attempt=retry_attempt, retry_reason=retry_reason
        )
        while True:
            conn, ws = await self._ready(timeout, to)
            self.envelopes[envelope_id] = Envelope(  # before sending: the ack may come back at once
                envelope_id, kind, payload, conn.index, time.perf_counter(), retry_attempt=retry_attempt
            )
            try:
                await ws.send_str(json.dumps(frame))
            except ConnectionResetError:  # its process just died: the frame never left; Slack uses another socket
                conn.closed = True
                self.signal.notify()
                continue
            self.signal.notify()
            return envelope_id

    async def wait_ack(self, envelope_id: str, *, timeout: float) -> Ack:
        """The client's ack of `envelope_id`, waiting for it if needed."""
        envelope = self.envelopes.get(envelope_id)
        if envelope is None:
            raise FakeSlackError(f"no envelope {envelope_id!r} was sent; pass an id returned by send_event/click")
        return await self.signal.wait_until(
            lambda: envelope.ack, timeout=timeout, what=lambda: f"no ack for {envelope.type} envelope {envelope_id}"
        )

    async def send_frame(self, frame: dict, *, timeout: float) -> int:
        """Send a raw frame (e.g. `disconnect`) on the current connection; return that connection's index."""
        conn, ws = await self._ready(timeout)
        await ws.send_str(json.dumps(frame))
        return conn.index

    async def send_text(self, data: str, *, timeout: float) -> int:
        """Send `data` as a text frame as it is on the current connection; return that connection's index."""
        conn, ws = await self._ready(timeout)
        await ws.send_str(data)
        return conn.index

    async def disconnect(self, reason: DisconnectReason, *, timeout: float) -> int:
        """Ask the client to reconnect, as Slack does before rotating a socket."""
        return await self.send_frame(payloads.disconnect(reason), timeout=timeout)

    async def drop(self, *, clean: bool, timeout: float) -> int:
        """Close the current connection: a close frame if `clean`, else a cut TCP connection."""
        conn, ws = await self._ready(timeout)
        if clean:
            await ws.close(code=1001, message=b"going away")
        else:
            transport = self._sockets[conn.index][1].transport
            if transport is None:
                raise FakeSlackError(f"connection {conn.index} has no transport left to cut; it is already closing")
            transport.abort()
        return conn.index

    async def stop_answering_pings(self, *, timeout: float) -> int:
        """Ignore the client's pings on the current connection (new connections still answer)."""
        conn, _ = await self._ready(timeout)
        conn.answer_pings = False
        return conn.index

    async def close(self) -> None:
        """Close every open websocket (server shutdown)."""
        for ws, _ in list(self._sockets.values()):
            if not ws.closed:
                await ws.close(code=1001, message=b"server shutdown")

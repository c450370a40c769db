"""The fake Web API over HTTP: parse requests as slack_sdk sends them, inject faults, record calls."""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from aiohttp import web

from bot.testing.limits import ApiError, check_message
from bot.testing.messages import Message
from bot.testing.records import Call
from bot.testing.signal import Signal
from bot.testing.web_methods import WebMethods

RESPONSE_URL_USES = 5  # Slack honours a response_url at most 5 times (within 30 minutes)


@dataclass
class Fault:
    """A planned failure of one method, used `times` times before the method works again."""

    kind: Literal["rate_limited", "http_error", "api_error", "disconnect", "lost_answer"]
    times: int = 1
    retry_after: int = 1
    status: int = 500
    error: str = ""

    def answer(self) -> tuple[int, dict, dict[str, str]]:
        """The (status, JSON body, headers) Slack would answer with."""
        if self.kind == "rate_limited":
            return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(self.retry_after)}
        if self.kind == "http_error":
            return self.status, {"ok": False, "error": "fatal_error"}, {}
        return 200, {"ok": False, "error": self.error}, {}


@dataclass
class ResponseTarget:
    """The message a response_url belongs to, and how often it was used."""

    channel: str
    message_ts: str | None
    thread_ts: str | None
    user: str
    uses: int = 0


class WebApi:
    """aiohttp routes for `/api/<method>`, file uploads and response URLs; every request is recorded.

    Uploads are recorded as method "upload" and response URL posts as "response_url".
    """

    def __init__(self, methods: WebMethods, signal: Signal) -> None:
        self.methods = methods
        self.store = methods.store
        self.signal = signal
        self.calls: list[Call] = []
        self.faults: dict[str, list[Fault]] = {}
        self.response_targets: dict[str, ResponseTarget] = {}

    def routes(self) -> list[web.RouteDef]:
        """The routes to add to the fake's aiohttp application."""
        return [
            web.route("*", "/api/{method}", self._api),
            web.post("/upload/{file_id}", self._upload),
            web.post("/response/{key}", self._response_url),
        ]

    def issue_response_url(self, channel: str, message_ts: str | None, thread_ts: str | None, user: str) -> str:
        """A fresh response_url for an interaction on `message_ts` (None for a slash command) by `user`."""
        key = uuid.uuid4().hex
        self.response_targets[key] = ResponseTarget(channel, message_ts, thread_ts, user)
        return f"{self.methods.origin()}/response/{key}"

    def inject(self, method: str, fault: Fault) -> None:
        """Make the next `fault.times` calls of `method` fail as described."""
        self.faults.setdefault(method, []).append(fault)

    def _take_fault(self, method: str) -> Fault | None:
        queue = self.faults.get(method) or []
        while queue and queue[0].times <= 0:
            queue.pop(0)
        if not queue:
            return None
        queue[0].times -= 1
        return queue[0]

    def _record(
        self, method: str, args: dict, request: web.Request, token: str | None, status: int, body: dict
    ) -> None:
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.calls.append(Call(len(self.calls), method, args, headers, token, status, body))
        self.signal.notify()

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await _read_args(request)
        token = _bearer(request) or args.pop("token", None)
        fault = self._take_fault(method)
        if fault is not None and fault.kind in ("disconnect", "lost_answer"):
            if fault.kind == "lost_answer":  # Slack did it; only its answer is lost on the way back
                with contextlib.suppress(ApiError):
                    self.methods.call(method, args, token)
            self._record(method, args, request, token, 0, {})
            assert request.transport is not None
            request.transport.close()  # no answer at all: the client sees the connection drop
            raise ConnectionResetError(f"fake Slack dropped the connection of {method} (an injected fault)")
        if fault is not None:
            status, body, headers = fault.answer()
        else:
            status, headers = 200, {}
            try:
                body = self.methods.call(method, args, token)
            except ApiError as e:
                body = e.response()
        if status == 200 and method != "apps.connections.open":
            headers["x-oauth-scopes"] = self.methods.ws.bot_scopes
        self._record(method, args, request, token, status, body)
        return web.json_response(body, status=status, headers=headers)

    async def _upload(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        upload = self.store.uploads.get(file_id)
        content = await request.read()
        if upload is None:
            self._record("upload", {"file_id": file_id}, request, None, 404, {"ok": False, "error": "file_not_found"})
            return web.Response(status=404, text="unknown upload")
        upload.content = content
        self._record("upload", {"file_id": file_id, "length": len(content)}, request, None, 200, {"ok": True})
        return web.Response(text=f"OK - {len(content)}")

    async def _response_url(self, request: web.Request) -> web.Response:
        target = self.response_targets.get(request.match_info["key"])
        args = await _read_args(request)
        status, body = 200, {"ok": True}
        if target is None:
            status, body = 404, {"ok": False, "error": "no_such_url"}
        elif target.uses >= RESPONSE_URL_USES:
            status, body = 404, {"ok": False, "error": "used_url"}
        else:
            target.uses += 1
            try:
                self._apply_response(target, args)
            except ApiError as e:
                body = e.response()
        self._record("response_url", args, request, None, status, body)
        return web.json_response(body, status=status)

    def _apply_response(self, target: ResponseTarget, args: dict[str, Any]) -> None:
        """What a response_url post does: replace or delete the original, or post a new message."""
        original = self.store.get(target.channel, target.message_ts or "")
        blocks = self.methods.blocks_arg(args)
        if _truthy(args.get("delete_original")):
            if original is None:
                raise ApiError("message_not_found")
            original.deleted = True
            return
        check_message(args.get("text"), blocks)
        if _truthy(args.get("replace_original")):
            if original is None:
                raise ApiError("message_not_found")
            original.text, original.blocks = str(args.get("text") or ""), blocks
            return
        if args.get("response_type") == "in_channel":
            ws = self.methods.ws
            thread_ts = args.get("thread_ts") or target.thread_ts
            self.store.add(
                Message(target.channel, self.store.next_ts(), str(args.get("text") or ""), ws.bot_user_id,
                        ws.bot_id, ws.app_id, blocks, str(thread_ts) if thread_ts else None)
            )
            return
        self.methods.ephemerals.append(
            {"channel": target.channel, "user": target.user, "ts": self.store.next_ts(), "text": args.get("text"),
             "blocks": blocks}
        )


def _truthy(value: object) -> bool:
    return value is True or str(value).lower() == "true"


def _bearer(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    return auth.removeprefix("Bearer ").strip() or None if auth.startswith("Bearer ") else None


async def _read_args(request: web.Request) -> dict[str, Any]:
    """Query parameters merged with the body: JSON, form-encoded or multipart (as slack_sdk sends them)."""
    args: dict[str, Any] = dict(request.query)
    if request.method != "POST" or not request.can_read_body:
        return args
    if request.content_type == "application/json":
        data = await request.json()
        if isinstance(data, dict):
            args.update(data)
        return args
    form = await request.post()
    for key, value in form.items():
        args[key] = value.file.read() if isinstance(value, web.FileField) else value
    return args

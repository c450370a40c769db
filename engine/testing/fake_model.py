"""A fake Anthropic Messages API for running the real Claude Code CLI offline.

Point the CLI at it with ``ANTHROPIC_BASE_URL`` (see ``engine.testing.env.offline_env``). It
streams scripted replies chosen by rules (``engine.testing.rules``), injects faults
(``engine.testing.faults``) and records every request with its full JSON body.

The server runs in its own thread (``engine.testing.server``), so it serves the CLI the same way
whether the test is async, synchronous, or waits on a subprocess.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from engine.testing import sse
from engine.testing.env import offline_env
from engine.testing.errors import FakeModelError
from engine.testing.faults import CutStream, Delay, Fault, Hold, HttpError, StreamError
from engine.testing.recorded import RecordedRequest
from engine.testing.replies import Reply
from engine.testing.requests_log import RequestLog
from engine.testing.rules import Condition, Rule, Sequencing, select, to_match
from engine.testing.server import LocalServer


MAX_REQUEST_BYTES = 32 * 1000 * 1000  # the Messages API's limit on one request


IMAGE_TOKENS = 1600  # about what the API counts for an image it has scaled to 1568 px


def estimate_tokens(body: Any) -> int:
    """A rough input token count for a request body: four characters a token, and
    ``IMAGE_TOKENS`` an image (its base64 is not text the model reads)."""
    images = 0

    def without_images(value: Any) -> Any:
        nonlocal images
        if isinstance(value, dict):
            if value.get("type") == "image":
                images += 1
                return None
            return {k: without_images(v) for k, v in value.items()}
        if isinstance(value, list):
            return [without_images(v) for v in value]
        return value

    text = json.dumps(without_images(body), ensure_ascii=False)
    return max(1, len(text) // 4 + images * IMAGE_TOKENS)


class FakeModel(LocalServer, RequestLog):
    """The fake Messages API server: rules in, SSE out, every request recorded.

    Use as a context manager (``with FakeModel() as fm:``) or call ``start()``/``close()``.
    ``default`` answers requests no rule matches; without it they get HTTP 403
    ``permission_error`` with a message naming the request (403 because the CLI gives up at once
    on it, where a 400 makes it retry with fewer features), and are listed in ``unmatched``.
    ``go_offline()``/``go_online()`` make it unreachable and back on the same port.
    """

    def __init__(self, *, default: Reply | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        LocalServer.__init__(self, host=host, port=port)
        RequestLog.__init__(self)
        self.default = default
        self._rules: list[Rule] = []
        self._ids = 0
        self.env: dict[str, str] = {}

    def __enter__(self) -> FakeModel:
        return self.start()

    def offline_env(self, config_dir: str | os.PathLike[str]) -> dict[str, str]:
        """The offline environment for this server (see ``offline_env``); also kept in ``env``."""
        self.env = offline_env(self.base_url, config_dir)
        return dict(self.env)

    # -- rules -----------------------------------------------------------------------------

    def rule(
        self,
        *replies: Reply | Fault,
        when: Condition | Sequence[Condition] | None = None,
        name: str | None = None,
        sequence: Sequencing = "turn",
        repeat_last: bool = False,
        fault: Fault | Sequence[Fault] | None = None,
        fallback: bool = False,
    ) -> Rule:
        """Add a rule answering requests that match ``when`` with ``replies``, in script order.

        ``when`` is a matcher from ``engine.testing.match``, any ``Callable[[dict], bool]`` on
        the request body, a string (it must appear somewhere the model is shown), or a list of
        these (all must hold); None matches everything. ``sequence`` picks which reply answers
        which request (see ``engine.testing.rules``). ``fault`` applies to every request the
        rule answers. ``fallback`` rules are tried after all the others. Returns the ``Rule``,
        whose ``requests`` lists what it answered.
        """
        faults = (fault,) if isinstance(fault, Fault) else tuple(fault or ())
        for item in replies:
            if isinstance(item, Fault) and not isinstance(item, HttpError):
                raise FakeModelError(
                    f"{type(item).__name__} cannot stand alone in a rule's replies; attach it to a "
                    "reply (text('...', fault=...)) or to the rule (fault=...)."
                )
        created = Rule(
            list(replies),
            when=to_match(when),
            name=name or f"rule{len(self._rules)}",
            sequence=sequence,
            repeat_last=repeat_last,
            faults=faults,
            fallback=fallback,
        )
        with self._lock:
            self._rules.append(created)
        return created

    def fallback(self, *replies: Reply | Fault, repeat_last: bool = True, **options: Any) -> Rule:
        """Add a rule tried only after every non-fallback rule (same options as ``rule``).

        Unlike ``rule``, ``repeat_last`` defaults to True: ``fm.fallback(text("ok"))`` answers
        every otherwise unmatched request, whatever its turn.
        """
        return self.rule(*replies, fallback=True, repeat_last=repeat_last, **options)

    @property
    def rules(self) -> list[Rule]:
        """The rules, in the order they were added."""
        with self._lock:
            return list(self._rules)

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        # Not ``request.read()``: aiohttp caps that at 1 MiB, and a prompt with a few images is more.
        # The real API's own cap (32 MB a request) is kept, with its status.
        raw = await request.content.read()
        if len(raw) > MAX_REQUEST_BYTES:
            rec = self._record(request.method, request.path, dict(request.query), dict(request.headers), None)
            return self._error(HttpError(413, "request_too_large", "Request exceeds the maximum allowed number of bytes."), rec)
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        rec = self._record(request.method, request.path, dict(request.query), dict(request.headers), body)
        if request.method == "POST" and request.path == "/v1/messages" and isinstance(body, dict):
            try:
                return await self._messages(request, rec, body)
            except asyncio.CancelledError:
                rec.outcome = rec.outcome or "dropped"  # the client went away (a killed CLI)
                raise
            finally:
                self._settled()
        if request.method == "POST" and request.path == "/v1/messages/count_tokens":
            return web.json_response({"input_tokens": estimate_tokens(body)})
        if request.method in ("GET", "HEAD"):
            return web.json_response({})
        return self._error(HttpError(404, "not_found_error", f"fake model: no endpoint {request.path}"), rec)

    def _error(self, fault: HttpError, rec: RecordedRequest) -> web.Response:
        rid = f"req_fake_{rec.index}"
        rec.outcome = f"http {fault.status}"
        headers = {"request-id": rid, **fault.headers}
        return web.json_response(fault.body(rid), status=fault.status, headers=headers)

    def _answer_unmatched(self, rec: RecordedRequest) -> web.Response:
        message = (
            f"fake model: no rule matched request #{rec.index} (turn {rec.turn}, "
            f"prompt {rec.prompt[-200:]!r}). Rules: {self.rules!r}. Add a rule or a "
            "fallback (fm.fallback(text('...'))) for it."
        )
        response = self._error(HttpError(403, "permission_error", message), rec)
        rec.outcome = "unmatched"
        return response

    def _message(self, reply: Reply, body: dict[str, Any], rec: RecordedRequest) -> dict[str, Any]:
        with self._lock:
            self._ids += 1
            n = self._ids
        content = []
        for i, block in enumerate(reply.blocks):
            if block.get("type") == "tool_use" and not block.get("id"):
                block = dict(block, id=f"toolu_fake{n:04d}{i:02d}{uuid.uuid4().hex[:12]}")
            content.append(dict(block))
        usage = {
            "input_tokens": estimate_tokens(body),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": reply.output_tokens(),
        }
        usage.update(reply.usage or {})
        model = str(body.get("model") or "claude-fake")
        return sse.message_json(
            id=f"msg_fake{n:04d}{uuid.uuid4().hex[:12]}",
            model=model,
            content=content,
            stop_reason=reply.final_stop_reason,
            usage=usage,
        )

    async def _messages(
        self, request: web.BaseRequest, rec: RecordedRequest, body: dict[str, Any]
    ) -> web.StreamResponse:
        with self._lock:
            chosen = select(self._rules, body)
        if chosen is None and self.default is None:
            self._note_unmatched(rec)
            return self._answer_unmatched(rec)
        rule, index = chosen if chosen else (None, None)
        item = rule.replies[index] if rule and index is not None else self.default
        if rule is not None:
            rule.requests.append(rec)
            rec.rule, rec.reply_index = rule.name, index
        if isinstance(item, HttpError):  # a fault standing in a reply slot fires every time
            if rule is not None and rule.sequence == "call":
                rule.calls += 1
            return self._error(item, rec)
        assert isinstance(item, Reply)
        rec.response = message = self._message(item, body, rec)
        cut: CutStream | StreamError | None = None
        for fault in (*(rule.faults if rule else ()), *item.faults):
            if isinstance(fault, Hold):
                await fault.wait_released(rec)
            elif not fault.take():
                continue
            elif isinstance(fault, Delay):
                await asyncio.sleep(fault.seconds)
            elif isinstance(fault, HttpError):
                return self._error(fault, rec)
            elif isinstance(fault, (CutStream, StreamError)):
                cut = fault
                break
        if not body.get("stream"):
            # The CLI retries a failed stream once without streaming: answer that one too.
            if isinstance(cut, StreamError):
                status = 529 if cut.error_type == "overloaded_error" else 500
                return self._error(HttpError(status, cut.error_type, cut.message), rec)
            if isinstance(cut, CutStream):
                rec.outcome = "cut_stream"
                if request.transport is not None:
                    request.transport.abort()
                return web.Response(status=500)
            self._delivered(rule, rec)
            return web.json_response(message, headers={"request-id": f"req_fake_{rec.index}"})
        return await self._stream(request, rec, rule, message, cut)

    async def _stream(
        self,
        request: web.BaseRequest,
        rec: RecordedRequest,
        rule: Rule | None,
        message: dict[str, Any],
        cut: CutStream | StreamError | None,
    ) -> web.StreamResponse:
        headers = {
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "request-id": f"req_fake_{rec.index}",
        }
        response = web.StreamResponse(status=200, headers=headers)
        events = sse.message_events(message)
        if cut is not None:
            events = events[: cut.after_events]
        try:
            await response.prepare(request)
            for event in events:
                await response.write(sse.encode(event))
            if isinstance(cut, CutStream):
                rec.outcome = "cut_stream"
                if request.transport is not None:
                    request.transport.abort()  # no final chunk: the client sees the stream break
                return response
            if isinstance(cut, StreamError):
                rec.outcome = "stream_error"
                await response.write(sse.encode(sse.error_event(cut.error_type, cut.message)))
            if cut is None:
                rec.outcome = "reply"  # before the last byte: a client may look the moment it reads it
            await response.write_eof()
        except (ConnectionError, asyncio.CancelledError):
            rec.outcome = "dropped"
            raise
        if cut is None:
            self._delivered(rule, rec)
        return response

    def _delivered(self, rule: Rule | None, rec: RecordedRequest) -> None:
        rec.outcome = "reply"
        if rule is not None:
            rule.calls += 1

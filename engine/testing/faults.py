"""Fault injection: what can go wrong between the CLI and the model, on purpose.

Attach faults to a rule (``FakeModel.rule(..., fault=...)``, tried on every request the rule
answers) or to one reply (``text("hi", fault=...)``). ``times`` limits how often a fault fires:
``overloaded(times=1)`` answers 529 once and then lets the normal reply through. Faults fire in
the order given; an HTTP error, a cut stream or a stream error ends the request, a delay or a
hold only postpones it.

The HTTP errors carry the same JSON bodies and headers as the real API, so the CLI handles them
as it would in production.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from dataclasses import dataclass, field
from typing import Any

from engine.testing.errors import FakeModelError


@dataclass(eq=False, kw_only=True)
class Fault:
    """Base of all faults: fires at most ``times`` times (None: every time)."""

    times: int | None = None
    fired: int = field(default=0, init=False)

    def take(self) -> bool:
        """Count one firing and return True, or False once ``times`` is used up."""
        if self.times is not None and self.fired >= self.times:
            return False
        self.fired += 1
        return True


@dataclass(eq=False)
class HttpError(Fault):
    """Answer with an HTTP error status and the API's error JSON instead of a reply."""

    status: int
    error_type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)

    def body(self, request_id: str) -> dict[str, Any]:
        """The JSON error body, shaped as the real API's."""
        return {
            "type": "error",
            "error": {"type": self.error_type, "message": self.message},
            "request_id": request_id,
        }


@dataclass(eq=False)
class CutStream(Fault):
    """Send the first ``after_events`` SSE events of the reply, then drop the connection."""

    after_events: int = 3


@dataclass(eq=False)
class StreamError(Fault):
    """Send ``after_events`` SSE events, then an ``event: error`` as the API does mid-stream."""

    after_events: int = 1
    error_type: str = "overloaded_error"
    message: str = "Overloaded"


@dataclass(eq=False)
class Delay(Fault):
    """Wait ``seconds`` before answering (the server waits; the test does not)."""

    seconds: float = 1.0


class Hold(Fault):
    """Keep matching requests open, unanswered, until the test calls ``release()``.

    Every matching request that arrives before ``release()`` waits; after it, requests pass.
    ``await hold.arrived()`` returns the first held request once it is in (wait on that, not on
    the clock), so a test can kill a process mid-step. Thread-safe: the server runs in its own
    thread.
    """

    def __init__(self) -> None:
        super().__init__(times=None)
        self._lock = threading.Lock()
        self._released = False
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._first: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.held: list[Any] = []

    @property
    def released(self) -> bool:
        """True once ``release()`` was called."""
        return self._released

    async def wait_released(self, request: Any) -> None:
        """Server side: record ``request`` as held and wait for ``release()``."""
        event = asyncio.Event()
        with self._lock:
            if self._released:
                return
            self._waiters.append((asyncio.get_running_loop(), event))
            self.held.append(request)
            if not self._first.done():
                self._first.set_result(request)
        await event.wait()

    def release(self) -> None:
        """Let every held request (and all later ones) through. Idempotent."""
        with self._lock:
            self._released = True
            waiters, self._waiters = self._waiters, []
        for loop, event in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(event.set)

    async def arrived(self, timeout: float | None = 240) -> Any:
        """Wait until a request is held and return it (a ``RecordedRequest``).

        Raises ``FakeModelError`` after ``timeout`` seconds, so a rule that never matches fails
        the test with a message instead of hanging it.
        """
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(self._first)), timeout)
        except TimeoutError:
            raise FakeModelError(self._late(timeout)) from None

    def wait_arrived(self, timeout: float | None = 60) -> Any:
        """Blocking form of ``arrived()`` for synchronous tests."""
        try:
            return self._first.result(timeout)
        except concurrent.futures.TimeoutError:
            raise FakeModelError(self._late(timeout)) from None

    def _late(self, timeout: float | None) -> str:
        return (
            f"no request was held within {timeout}s. Check that the rule carrying this hold "
            "matches the request (see FakeModel.requests for what arrived)."
        )


def overloaded(*, times: int | None = None) -> HttpError:
    """HTTP 529 ``overloaded_error``, as the API answers under load."""
    return HttpError(529, "overloaded_error", "Overloaded", times=times)


def rate_limited(*, retry_after: int = 1, times: int | None = None) -> HttpError:
    """HTTP 429 ``rate_limit_error`` with a ``retry-after`` header (seconds)."""
    message = "This request would exceed your organization's rate limit. Please try again later."
    headers = {"retry-after": str(retry_after)}
    return HttpError(429, "rate_limit_error", message, headers, times=times)


def unauthorized(*, times: int | None = None) -> HttpError:
    """HTTP 401 ``authentication_error`` (a bad or revoked API key)."""
    return HttpError(401, "authentication_error", "invalid x-api-key", times=times)


def prompt_too_long(
    tokens: int = 210_000, maximum: int = 200_000, *, times: int | None = None
) -> HttpError:
    """HTTP 400 ``invalid_request_error``: "prompt is too long: 210000 tokens > 200000 maximum"."""
    message = f"prompt is too long: {tokens} tokens > {maximum} maximum"
    return HttpError(400, "invalid_request_error", message, times=times)


def http_error(
    status: int,
    error_type: str,
    message: str,
    *,
    headers: dict[str, str] | None = None,
    times: int | None = None,
) -> HttpError:
    """Any HTTP error with the API's error JSON, e.g. ``http_error(500, "api_error", "boom")``."""
    return HttpError(status, error_type, message, dict(headers or {}), times=times)


def cut_stream(after_events: int = 3, *, times: int | None = None) -> CutStream:
    """Start streaming the reply, then drop the connection after ``after_events`` SSE events."""
    return CutStream(after_events, times=times)


def stream_error(
    after_events: int = 1,
    *,
    error_type: str = "overloaded_error",
    message: str = "Overloaded",
    times: int | None = None,
) -> StreamError:
    """Start streaming, then send an SSE ``error`` event (HTTP status already 200)."""
    return StreamError(after_events, error_type, message, times=times)


def delay(seconds: float, *, times: int | None = None) -> Delay:
    """Wait ``seconds`` on the server before answering."""
    return Delay(seconds, times=times)


def hold() -> Hold:
    """A new ``Hold``: keep requests open until ``release()``; ``await .arrived()`` to sync."""
    return Hold()

"""The fake model's request log: every request in arrival order, with accessors and waits."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any

from engine.testing.errors import FakeModelError
from engine.testing.recorded import RecordedRequest

Predicate = Callable[[RecordedRequest], bool]


class RequestLog:
    """Thread-safe record of requests; the server thread appends, tests read and wait."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._requests: list[RecordedRequest] = []
        self._unmatched: list[RecordedRequest] = []
        self._waiters: list[tuple[Predicate, int, concurrent.futures.Future[RecordedRequest]]] = []

    def _record(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str], body: Any
    ) -> RecordedRequest:
        with self._lock:
            rec = RecordedRequest(len(self._requests), method, path, query, headers, body)
            self._requests.append(rec)
            self._wake()
        return rec

    def _note_unmatched(self, rec: RecordedRequest) -> None:
        with self._lock:
            self._unmatched.append(rec)

    def _settled(self) -> None:
        """A request's rule and outcome are now known: waits on those may be satisfied."""
        with self._lock:
            self._wake()

    def _wake(self) -> None:
        still = []
        for pred, count, fut in self._waiters:
            hits = [r for r in self._requests if pred(r)]
            if len(hits) >= count:
                if not fut.done():
                    fut.set_result(hits[count - 1])
            else:
                still.append((pred, count, fut))
        self._waiters = still

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received (all endpoints), oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """The ``POST /v1/messages`` requests (model turns), oldest first."""
        return [r for r in self.requests if r.is_message]

    @property
    def unmatched(self) -> list[RecordedRequest]:
        """Message requests that no rule (and no default) answered."""
        with self._lock:
            return list(self._unmatched)

    def requests_where(self, predicate: Predicate) -> list[RecordedRequest]:
        """The message requests for which ``predicate(request)`` is true, oldest first."""
        return [r for r in self.message_requests if predicate(r)]

    def last_request(self, rule: Any = None) -> RecordedRequest | None:
        """The latest message request, or the latest one ``rule`` (a Rule or its name) answered."""
        if rule is None:
            found = self.message_requests
        else:
            name = rule if isinstance(rule, str) else rule.name
            found = [r for r in self.message_requests if r.rule == name]
        return found[-1] if found else None

    async def wait_for(
        self, predicate: Predicate | None = None, *, count: int = 1, timeout: float | None = 240
    ) -> RecordedRequest:
        """Wait until ``count`` message requests satisfy ``predicate``; return the count-th.

        Requests already received count. The predicate is checked when a request arrives and
        again when it is answered, so it may look at ``rule``, ``reply_index`` and ``outcome``
        (``"dropped"`` once a client went away mid-request). Raises ``FakeModelError`` after ``timeout`` seconds
        (a failure message, not a pacing device: tests wait on this, never on a sleep).
        """
        pred: Predicate = (lambda r: r.is_message and predicate(r)) if predicate else (lambda r: r.is_message)
        fut: concurrent.futures.Future[RecordedRequest] = concurrent.futures.Future()
        with self._lock:
            self._waiters.append((pred, count, fut))
            self._wake()
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(fut)), timeout)
        except TimeoutError:
            got = len([r for r in self.requests if pred(r)])
            raise FakeModelError(
                f"waited {timeout}s for {count} matching model request(s); {got} arrived. "
                "Check the predicate against FakeModel.requests."
            ) from None

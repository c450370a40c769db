"""Where a run's file work runs: a small pool of its own, never the event loop or the shared executor.

A workspace is the agent's, so reading it can be slow on purpose (100,000 folders) and, were a
guard ever missed, could block (a FIFO). Run here, such a call costs at most its timeout and one
of ``WORKERS`` threads: the event loop and asyncio's default executor (every ``to_thread``, git
step and DNS lookup of every other thread) never wait for it.

Why not a ``ThreadPoolExecutor``: concurrent.futures joins its workers at interpreter exit, so one
thread stuck in a call would keep the bot from stopping on SIGINT. These are daemon threads no
exit hook waits for, and a thread stuck past its timeout is written off and replaced (at most
``MAX_STUCK`` of them at once), so the pool keeps serving the other runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from engine._errors import FlowerError

__all__ = ["OVERRAN", "TIMEOUT_S", "FileWorkOverran", "file_work"]

WORKERS = 4
TIMEOUT_S = 30.0  # a walk stops itself after about a second per folder; this is the backstop
MAX_STUCK = 32
OVERRAN = "file_work_overran"  # the error kind of a step that file work made fail

T = TypeVar("T")


class FileWorkOverran(FlowerError):
    """A call of ``file_work`` took longer than its timeout: something in a run's files stalls the
    host (a huge or very deep tree, or a guard missed). The call is written off, never waited for."""


class _Pool:
    def __init__(self, size: int) -> None:
        self.size = size
        self._jobs: queue.SimpleQueue[tuple[concurrent.futures.Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0  # serving threads (the stuck ones not counted)
        self._stuck: set[concurrent.futures.Future[Any]] = set()

    def submit(self, call: Callable[[], T]) -> concurrent.futures.Future[T]:
        fut: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((fut, call))
        with self._lock:
            self._grow()
        return fut

    def write_off(self, fut: concurrent.futures.Future[Any]) -> None:
        """``fut``'s call overran: its thread no longer counts, and another starts in its place."""
        with self._lock:
            if fut.running() and fut not in self._stuck:
                self._stuck.add(fut)
                self._threads -= 1
                self._grow()

    def _grow(self) -> None:
        # threads start as work comes, up to ``size`` serving ones (held under the lock)
        if self._threads < self.size and len(self._stuck) < MAX_STUCK:
            self._threads += 1
            threading.Thread(target=self._serve, name="flower-file-work", daemon=True).start()

    def _serve(self) -> None:
        while True:
            fut, call = self._jobs.get()
            if not fut.set_running_or_notify_cancel():
                continue  # its caller gave up while it waited
            try:
                result = call()
            except BaseException as exc:  # handed to the caller, who raises it
                fut.set_exception(exc)
            else:
                fut.set_result(result)
            with self._lock:
                if fut in self._stuck:  # back from a call it was written off in
                    self._stuck.discard(fut)
                    if self._threads >= self.size:
                        return  # replaced meanwhile: one thread too many
                    self._threads += 1


_pool = _Pool(WORKERS)


def _after_fork() -> None:
    global _pool
    _pool = _Pool(WORKERS)  # the child has none of the parent's threads


os.register_at_fork(after_in_child=_after_fork)


async def file_work(fn: Callable[..., T], /, *args: Any, what: str, timeout: float | None = None,
                    **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in the run-files pool, with the caller's context (its language);
    its result, or its exception.

    ``what`` names the work for the error: when the call takes longer than ``timeout`` seconds
    (default ``TIMEOUT_S``) this raises ``FileWorkOverran`` saying what overran and what to do, and
    the call is left to finish in its thread (a thread cannot be stopped), written off.
    """
    limit = TIMEOUT_S if timeout is None else timeout
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    fut = _pool.submit(call)
    try:
        return await asyncio.wait_for(asyncio.wrap_future(fut), limit)
    except asyncio.TimeoutError:
        _pool.write_off(fut)
        raise FileWorkOverran(
            f"{what} took longer than {limit:g} s and was given up. Something in the workspace may be "
            "made to stall the host (a huge or very deep folder tree, a FIFO where a file or folder "
            "should be): remove it, then go on.") from None

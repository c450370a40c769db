"""SIGTERM / SIGHUP: record every in-flight step as ``killed-by-signal``, then die as by default.

SIGHUP's default action ends the process without running a single ``finally`` (a terminal that
hung twice taught us), so the rows are written first, then the default action is restored and
the signal re-sent. SIGKILL cannot be caught: the lineage, written the moment a session id
arrives, covers that case.

The handler itself only notes the signal and hands the rescue to the event loop running in the
main thread (``call_soon_threadsafe``: a self-pipe write, what asyncio's own signal handling
does). A handler runs between any two bytecodes of the main thread: one that took the manifest's
lock itself would wait forever on the lock the interrupted code held, and two SIGTERMs from GNU
``timeout`` did just that, leaving a hung process that kept the lock from every later ``flower``.
The loop's rescue waits for the manifest lock at most ``RESCUE_LOCK_WAIT_S``. A repeated signal
changes nothing while the rescue is on its way; one that comes ``ESCALATE_AFTER_S`` or more after
the first (the loop is stuck) ends the process at once. With no loop in the main thread nothing
can be in flight there, and the process ends at once.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
import weakref
from typing import Any, Protocol

from engine._run.manifest import lock_wait

RESCUE_LOCK_WAIT_S = 1.0
ESCALATE_AFTER_S = 1.0


class _Rescuable(Protocol):
    def rescue(self) -> None: ...


_live: "weakref.WeakSet[Any]" = weakref.WeakSet()
_installed = False
_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_first: tuple[int, float] | None = None  # (signal, monotonic time) of the signal being acted on


def _die(signum: int) -> None:
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _rescue_then_die(signum: int) -> None:
    """On the loop: write every live runtime's in-flight row, then die of ``signum``."""
    with lock_wait(RESCUE_LOCK_WAIT_S):
        for runtime in list(_live):
            try:
                runtime.rescue()
            except Exception:  # dying anyway: one broken runtime must not keep the others' rows out
                pass
    _die(signum)


def _handler(signum: int, frame: Any) -> None:
    """Note the signal and schedule the rescue; never takes a lock (see the module docstring)."""
    global _first
    if _first is not None:
        if time.monotonic() - _first[1] >= ESCALATE_AFTER_S:
            _die(_first[0])
        return
    _first = (signum, time.monotonic())
    try:
        loop = asyncio.get_running_loop()  # the loop running in this (the main) thread
    except RuntimeError:
        _die(signum)
        return
    loop.call_soon_threadsafe(_rescue_then_die, signum)


def watch(runtime: _Rescuable) -> None:
    """Include ``runtime`` in the rescue (a no-op until a host calls ``install``)."""
    _live.add(runtime)


def install() -> None:
    """Install the SIGTERM/SIGHUP rescue, once, from the main thread, and only where nobody
    else installed a handler (a host program's own handling wins). The ``flower`` command's
    choice: a library object never changes its host's signal handling by being constructed.
    The rescue runs on the event loop of the main thread (``asyncio.run`` there)."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    for sig in _SIGNALS:
        if signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, _handler)
    _installed = True


def forget(runtime: _Rescuable) -> None:
    """Leave ``runtime`` out of the rescue (it closed)."""
    _live.discard(runtime)

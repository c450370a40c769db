"""SIGTERM / SIGHUP: record every in-flight step as ``killed-by-signal``, then die as by default.

SIGHUP's default action ends the process without running a single ``finally`` (a terminal that
hung twice taught us), so the handler writes the manifest row first, restores the default
action and re-sends the signal to itself. SIGKILL cannot be caught: the lineage, written the
moment a session id arrives, covers that case.
"""

from __future__ import annotations

import os
import signal
import threading
import weakref
from typing import Any, Protocol


class _Rescuable(Protocol):
    def rescue(self) -> None: ...


_live: "weakref.WeakSet[Any]" = weakref.WeakSet()
_installed = False
_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _handler(signum: int, frame: Any) -> None:
    for runtime in list(_live):
        try:
            runtime.rescue()
        except Exception:  # dying anyway: one broken runtime must not keep the others' rows out
            pass
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def watch(runtime: _Rescuable) -> None:
    """Include ``runtime`` in the rescue (a no-op until a host calls ``install``)."""
    _live.add(runtime)


def install() -> None:
    """Install the SIGTERM/SIGHUP rescue, once, from the main thread, and only where nobody
    else installed a handler (a host program's own handling wins). The ``flower`` command's
    choice: a library object never changes its host's signal handling by being constructed."""
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


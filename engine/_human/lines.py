"""The one reader of a text stream (the terminal's stdin) for everyone who waits for a line.

Two readers on one terminal split what the person types between them: the words typed after a
Ctrl-C answered the open question instead, and the Ctrl-C prompt went on waiting. So a stream has
one ``Lines``, shared (``lines_of``): at most one read in flight, on a daemon thread (a process
exit never waits for it), and each line goes to the newest waiter (a Ctrl-C prompt opened over a
question gets the next line; the question waits on). A line read while nobody waited (a late
answer) is dropped and kept for ``typed_ahead``. End of input is final: every later wait gets "".
"""

from __future__ import annotations

import array
import asyncio
import fcntl
import logging
import os
import termios
import threading
import weakref
from typing import TextIO

log = logging.getLogger(__name__)

__all__ = ["Lines", "lines_of"]


class Lines:
    """Lines of ``stream`` for whoever waits, newest waiter first; see the module docstring."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.read: asyncio.Future[str] | None = None  # the read in flight, or the last one finished
        self._waiters: list[asyncio.Future[str]] = []
        self._dropped: list[str] = []
        self._eof = False

    @property
    def reading(self) -> bool:
        """True while a read is in flight (a line typed now goes to a waiter, or is dropped)."""
        return self.read is not None and not self.read.done()

    async def line(self) -> str:
        """The next line read for this caller (with its newline), or "" at end of input."""
        if self._eof:
            return ""
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        self._start()
        try:
            return await fut
        finally:
            if fut in self._waiters:
                self._waiters.remove(fut)  # cancelled (a timeout): the read stays for the next one

    def typed_ahead(self) -> list[str]:
        """Lines typed while nobody waited, dropped and forgotten now: those already read, and on
        a terminal the complete lines waiting in its input queue (read here, without blocking)."""
        dropped, self._dropped = self._dropped, []
        if not self.reading:
            dropped += self._drain_terminal()
        return [d.rstrip("\n") for d in dropped]

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        if self.reading and self.read is not None and self.read.get_loop() is loop:
            return
        fut: asyncio.Future[str] = loop.create_future()
        self.read = fut

        def run() -> None:
            try:
                line = self.stream.readline()
            except (OSError, ValueError) as exc:  # a closed stdin: nobody is there to answer
                log.warning("cannot read a line from %r: %s", self.stream, exc)
                line = ""
            try:
                loop.call_soon_threadsafe(self._arrived, fut, line)
            except RuntimeError:  # the loop is closed: nobody waits for this line any more
                log.debug("line read after the event loop closed: %r", line)

        threading.Thread(target=run, name="flower-stdin", daemon=True).start()

    def _arrived(self, fut: asyncio.Future[str], line: str) -> None:
        if not fut.done():
            fut.set_result(line)
        if line == "":
            self._eof = True
            for w in self._waiters:
                if not w.done():
                    w.set_result("")
            return
        live = [w for w in self._waiters if not w.done()]
        if not live:
            self._dropped.append(line)
            return
        live[-1].set_result(line)
        self._waiters.remove(live[-1])
        if len(live) > 1:
            self._start()  # an older waiter (the question under a Ctrl-C prompt) still waits

    def _drain_terminal(self) -> list[str]:
        try:
            fd = self.stream.fileno()
        except (OSError, ValueError, AttributeError):
            return []  # not a file (a test's StringIO): nothing typed ahead
        if not os.isatty(fd):
            return []  # a pipe or a file is a script: its lines are answers, in order
        got = b""
        while True:
            count = array.array("i", [0])
            try:
                fcntl.ioctl(fd, termios.FIONREAD, count)
            except OSError:
                break
            if count[0] <= 0:
                break  # canonical mode counts complete lines only: reading never blocks here
            got += os.read(fd, count[0])
        return got.decode("utf-8", "replace").splitlines(keepends=True)


_shared: "weakref.WeakKeyDictionary[TextIO, Lines]" = weakref.WeakKeyDictionary()


def lines_of(stream: TextIO) -> Lines:
    """The one ``Lines`` of ``stream`` in this process (created on first use)."""
    found = _shared.get(stream)
    if found is None:
        found = _shared[stream] = Lines(stream)
    return found

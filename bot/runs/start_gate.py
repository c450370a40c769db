"""At most a few runs starting their CLI at once.

A Claude Code CLI takes about a core for a second or two while it starts. Twenty or fifty of them
at once (a restart with many active threads) starve the bot's own process on a small machine: its
event loop stalled for up to 140 ms while 50 runs started (``python -m bench bot``). A run takes a
place before its first step and frees it once the CLI has named its session (the engine's
``session`` event), when the run ends, or after ``wait_s`` at the latest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

START_AT_ONCE = 4
START_WAIT_S = 15.0  # a start that never names its session does not hold the others back longer


class StartGate:
    """``enter()`` waits for a place and returns the callable that frees it (once; idempotent)."""

    def __init__(self, at_once: int = START_AT_ONCE, *, wait_s: float = START_WAIT_S) -> None:
        if at_once < 1:
            raise ValueError(f"StartGate needs at_once >= 1; got {at_once!r}. Use 1 to start runs one by one.")
        self._places = asyncio.Semaphore(at_once)
        self.wait_s = wait_s

    async def enter(self) -> Callable[[], None]:
        await self._places.acquire()
        freed = False

        def free() -> None:
            nonlocal freed
            if not freed:
                freed = True
                timer.cancel()
                self._places.release()

        timer = asyncio.get_running_loop().call_later(self.wait_s, free)
        return free

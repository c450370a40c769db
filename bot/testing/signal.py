"""A broadcast "state changed" signal: waiters re-check their condition on every change."""

from __future__ import annotations

import asyncio
from typing import Callable, TypeVar

from bot.testing.errors import FakeSlackTimeout

T = TypeVar("T")


class Signal:
    """Wakes every waiter when `notify()` is called; no polling, no sleeps.

    `notify()` is synchronous so request handlers can call it without awaiting.
    """

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        """Wake all current waiters; later waiters wait for the next notify."""
        event, self._event = self._event, asyncio.Event()
        event.set()

    async def wait_until(self, check: Callable[[], T | None], *, timeout: float, what: Callable[[], str]) -> T:
        """Return the first truthy result of `check()`, re-evaluated after each notify.

        Raises FakeSlackTimeout after `timeout` seconds; its message is `what()` (called then,
        so it can describe the state at the moment of failure).
        """
        try:
            async with asyncio.timeout(timeout):
                while True:
                    event = self._event  # taken before the check, so a notify in between is not lost
                    result = check()
                    if result:
                        return result
                    await event.wait()
        except TimeoutError:
            raise FakeSlackTimeout(f"waited {timeout}s: {what()}") from None

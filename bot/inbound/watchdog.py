"""A watchdog for a Socket Mode connection that looks open but has gone silent.

After an idle reconnect Slack can leave a websocket that still answers pings yet delivers no
envelope ever again; slack_sdk's own monitor only checks ping/pong, so it never notices. Every
text frame (hello, events, interactions, disconnect notices) counts as life; when none arrives for
``idle_s`` seconds the client is made to open a fresh connection. Slack redelivers what was not
acked, and a quiet workspace only pays one cheap reconnect per ``idle_s``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient

log = logging.getLogger(__name__)

__all__ = ["SocketWatchdog"]


class SocketWatchdog:
    """Force a reconnect of ``client`` whenever no text frame arrived for ``idle_s`` seconds.

    ``client`` is slack_sdk's aiohttp ``SocketModeClient`` (the one bolt's handler holds): frames
    are observed through its ``on_message_listeners``. ``start()`` inside the running loop, then
    ``close()``; ``reconnects`` counts the forced reconnects. ``idle_s`` must be positive.
    """

    def __init__(self, client: AsyncBaseSocketModeClient, *, idle_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if idle_s <= 0:
            raise ValueError(f"idle_s must be positive; got {idle_s!r}. Pass the seconds of silence to allow.")
        self.client, self.idle_s, self._clock = client, idle_s, clock
        self.reconnects = 0
        self._last = clock()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Listen to the client's frames and begin watching."""
        self._last = self._clock()
        listeners = getattr(self.client, "on_message_listeners", None)
        if listeners is None:
            raise TypeError(f"{type(self.client).__name__} has no on_message_listeners; use slack_sdk's "
                            "aiohttp SocketModeClient (bolt's AsyncSocketModeHandler default).")
        listeners.append(self._heard)
        self._task = asyncio.create_task(self._watch(), name="flower-socket-watchdog")

    async def close(self) -> None:
        """Stop watching (before the client closes, so no reconnect races the shutdown)."""
        listeners = getattr(self.client, "on_message_listeners", [])
        if self._heard in listeners:
            listeners.remove(self._heard)
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _heard(self, _message: Any) -> None:
        self._last = self._clock()

    async def _watch(self) -> None:
        while not getattr(self.client, "closed", False):  # closed: shut down, or its app token was refused
            quiet = self._clock() - self._last
            if quiet < self.idle_s:
                await asyncio.sleep(self.idle_s - quiet)
                continue
            log.warning("no Socket Mode frame for %.0f s (FLOWER_SOCKET_IDLE_S=%g); reconnecting",
                        quiet, self.idle_s)
            self._last = self._clock()  # the new connection's hello, or another idle_s, comes next
            self.reconnects += 1
            try:
                await self.client.connect_to_new_endpoint(force=True)
            except Exception:  # a failed reconnect is tried again after the next idle spell
                log.exception("Socket Mode reconnect after silence failed")

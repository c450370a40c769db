"""A local aiohttp server in its own thread: start, stop listening, listen again on the same port.

Its own thread and event loop let it serve a CLI subprocess the same way whether the test is
async, synchronous, or blocked waiting on a subprocess.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from aiohttp import web

from engine.testing.errors import FakeModelError

START_TIMEOUT = 30  # seconds to start or stop; far above the usual few milliseconds


class LocalServer:
    """Serves ``_handle`` on ``host``:``port`` (0 picks a free port) from a background thread."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.ServerRunner | None = None

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        raise NotImplementedError

    def start(self) -> Any:
        """Start serving; returns self. Calling it again does nothing."""
        if self._thread is not None:
            return self
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run_loop, args=(ready,), name=type(self).__name__, daemon=True)
        self._thread.start()
        if not ready.wait(START_TIMEOUT):
            raise FakeModelError(f"{type(self).__name__} did not start within {START_TIMEOUT}s")
        self._call(self._listen())
        return self

    def close(self) -> None:
        """Stop serving and end the thread; open requests are dropped. Idempotent."""
        if self._loop is None or self._thread is None:
            return
        self._call(self._unlisten())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(START_TIMEOUT)
        self._thread = None
        self._loop = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        """``http://host:port`` of the server."""
        return f"http://{self.host}:{self.port}"

    def go_offline(self) -> None:
        """Stop listening and drop open connections: clients now get "connection refused"."""
        self._call(self._unlisten())

    def go_online(self) -> None:
        """Listen again, on the same port as before ``go_offline()``."""
        self._call(self._listen())

    @property
    def online(self) -> bool:
        """True while the server is listening."""
        return self._runner is not None

    def _run_loop(self, ready: threading.Event) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(ready.set)
        self._loop.run_forever()
        self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        self._loop.close()

    def _call(self, coro: Any) -> Any:
        if self._loop is None:
            coro.close()
            raise FakeModelError(f"{type(self).__name__} is not started; call start() or use it in a with block")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(START_TIMEOUT)

    async def _listen(self) -> None:
        if self._runner is not None:
            return
        # handler_cancellation: a client that goes away (a killed CLI) ends its handler.
        server = web.Server(self._handle, handler_cancellation=True)
        runner = web.ServerRunner(server, shutdown_timeout=0.2)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._runner = runner

    async def _unlisten(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

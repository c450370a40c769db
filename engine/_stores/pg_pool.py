"""One PostgreSQL database behind an asyncpg pool that lives on the process's own event loop thread.

The PostgreSQL twin of ``SqliteFile``: usable from any event loop or thread, built without one,
closed synchronously with or without one. asyncpg binds a pool to the loop that made it, and the
engine's stores are built before a loop runs, used from several in tests, and closed after
``asyncio.run`` returned; so every pool lives on one daemon thread's loop (started on first use,
never blocking exit) and callers wait for it in a worker thread, like the SQLite store's calls.
asyncpg is imported on first use only: without the ``postgres`` extra the engine still imports.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import anyio.to_thread

from engine._stores.pg_schema import Migration, migrate
from engine._stores.sqlite_db import StoreError

__all__ = ["PgDatabase", "redact"]

T = TypeVar("T")

CLOSE_TIMEOUT = 30.0  # seconds close() waits for operations in flight before cutting connections
_SCHEMES = ("postgresql://", "postgres://")


def redact(url: str) -> str:
    """``url`` with its password replaced by ``***``, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))


class _LoopThread:
    """An asyncio loop running forever on a daemon thread, for this process (re-made after a fork)."""

    _shared: _LoopThread | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="flower-postgres", daemon=True)
        self.thread.start()

    @classmethod
    def get(cls) -> _LoopThread:
        with cls._lock:
            if cls._shared is None or cls._shared.pid != os.getpid():
                cls._shared = cls()
            return cls._shared


def _submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    return asyncio.run_coroutine_threadsafe(coro, _LoopThread.get().loop)


class PgDatabase:
    """One PostgreSQL database at ``url`` behind a lazily made pool, migrated on first use.

    The contract with a subclass (the session store): do every operation through ``_run(fn,
    *args)``, which awaits ``fn(conn, *args)`` with a pooled asyncpg connection on the pool's
    loop; PostgreSQL and connection failures come out as ``StoreError`` naming the database
    (password left out) and the fix. ``component``/``migrations`` are the tables to bring up to
    date before the first operation. ``close``/``aclose`` may be called any number of times; a
    later use opens a new pool.
    """

    component: str = ""
    migrations: Sequence[Migration] = ()

    def __init__(self, url: str, *, max_connections: int = 4, connect_timeout: float = 30.0) -> None:
        if not isinstance(url, str) or not url.startswith(_SCHEMES):
            raise StoreError(
                f"a PostgreSQL store needs a postgresql:// URL; got {redact(str(url))!r}. Use "
                "postgresql://user:password@host:5432/database (FLOWER_DATABASE_URL's form)."
            )
        self.url = url
        self.where = redact(url)
        self.max_connections = max_connections
        self.connect_timeout = connect_timeout
        self._pool: Any = None
        self._pid = os.getpid()
        self._opening: asyncio.Lock | None = None  # made on the pool's loop, the only one it is used on

    async def _run(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``fn(conn, *args)`` on a pooled connection. Not abandoned on cancel: no write lands unseen later."""
        future = _submit(self._on_loop(fn, *args))
        return await anyio.to_thread.run_sync(future.result)

    async def _on_loop(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        import asyncpg

        try:
            pool = await self._ready()
            async with pool.acquire() as conn:
                return await fn(conn, *args)
        except StoreError:
            raise
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, asyncio.TimeoutError) as exc:
            raise pg_error(self.where, exc) from exc

    async def _ready(self) -> Any:
        import asyncpg

        if self._pid != os.getpid():  # a forked child must not share its parent's sockets
            self._pool, self._opening, self._pid = None, None, os.getpid()
        if self._pool is not None:
            return self._pool
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._pool is None:
                pool = await asyncpg.create_pool(
                    self.url, min_size=0, max_size=self.max_connections, timeout=self.connect_timeout)
                try:
                    async with pool.acquire() as conn:
                        await migrate(conn, self.component, self.migrations, where=self.where)
                except BaseException:
                    pool.terminate()
                    raise
                self._pool = pool
        return self._pool

    async def _close_on_loop(self) -> None:
        assert self._opening is not None
        async with self._opening:  # not while a pool is being made
            pool, self._pool = self._pool, None
            if pool is None:
                return
            try:
                await asyncio.wait_for(pool.close(), CLOSE_TIMEOUT)
            except Exception:
                pool.terminate()  # connections still busy past the timeout are cut

    def close(self) -> None:
        """Close the pool now, with or without a running event loop; waits for operations in flight
        (up to 30 s). Closing twice is fine; a later use opens a new pool."""
        if self._opening is None or self._pid != os.getpid():
            return  # never used (or a forked child's copy): nothing to close
        _submit(self._close_on_loop()).result(CLOSE_TIMEOUT + 5)

    async def aclose(self) -> None:
        """``close()`` without blocking the event loop."""
        await anyio.to_thread.run_sync(self.close)


def pg_error(where: str, exc: BaseException) -> StoreError:
    """Turn an asyncpg or connection failure on the database ``where`` into a ``StoreError`` with the fix."""
    import asyncpg

    text = str(exc) or type(exc).__name__
    if isinstance(exc, (asyncpg.InvalidPasswordError, asyncpg.InvalidAuthorizationSpecificationError)):
        return StoreError(f"PostgreSQL at {where} refused the login ({text}). Check the user and password "
                          "in the URL (FLOWER_DATABASE_URL) and the server's pg_hba.conf.")
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        return StoreError(f"PostgreSQL at {where} has no such database ({text}). Create it (createdb NAME) "
                          "or fix the database name in the URL.")
    if isinstance(exc, asyncpg.InsufficientPrivilegeError):
        return StoreError(f"PostgreSQL at {where} denied an operation ({text}). Grant the URL's user the "
                          "right to create and change tables in that database.")
    if isinstance(exc, asyncpg.TooManyConnectionsError):
        return StoreError(f"PostgreSQL at {where} has no connection left ({text}). Raise the server's "
                          "max_connections, or give the stores a smaller max_connections.")
    if isinstance(exc, (OSError, asyncio.TimeoutError, asyncpg.PostgresConnectionError,
                        asyncpg.CannotConnectNowError)):
        return StoreError(f"cannot reach PostgreSQL at {where} ({type(exc).__name__}: {text}). Check that "
                          "the server is running and that the host, port or socket folder in the URL is right.")
    return StoreError(f"PostgreSQL failed on {where}: {text}. Check the server's log; if the tables were "
                      "changed by hand, restore them from a backup or point the store at another database.")

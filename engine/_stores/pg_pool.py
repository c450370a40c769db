"""One PostgreSQL database behind an asyncpg pool that lives on the process's own event loop thread.

The PostgreSQL twin of ``SqliteFile``: usable from any event loop or thread, built without one,
closed synchronously with or without one. asyncpg binds a pool to the loop that made it, and the
engine's stores are built before a loop runs, used from several in tests, and closed after
``asyncio.run`` returned; so every pool lives on one daemon thread's loop (started on first use,
never blocking exit) and callers wait for it in a worker thread, like the SQLite store's calls.

One pool per URL per process: a bot holds dozens of waiting runs, each with its own store, and a
pool each would take the server's connections in dozens (``max_connections`` is 100 by default).
Every ``PgDatabase`` on one URL holds the same ``SharedPool``; the pool closes when the last holder
closes, on ``close_pools()``, or at exit. A forked child starts with no pools (the loop thread and
its registry are made again): its parent's sockets are never used twice.
asyncpg is imported on first use only: without the ``postgres`` extra the engine still imports.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import re
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import anyio.to_thread

from engine._stores.pg_schema import Migration, migrate
from engine._stores.sqlite_db import StoreError

__all__ = ["PgDatabase", "SharedPool", "close_pools", "redact"]

T = TypeVar("T")

CLOSE_TIMEOUT = 30.0  # seconds close() waits for operations in flight before cutting connections
EXIT_TIMEOUT = 5.0  # at exit, operations still in flight are abandoned anyway: a short grace only
_SCHEMES = ("postgresql://", "postgres://")


def redact(url: str) -> str:
    """``url`` with every password (``user:password@`` and ``?password=``, ``sslpassword=``) replaced
    by ``***``, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None and "password" not in parts.query.lower():
        return url  # as written: urlunsplit would also rewrite ``sqlite:///x.db`` as ``sqlite:/x.db``
    if parts.password is not None:
        netloc = parts.netloc.rsplit("@", 1)
        parts = parts._replace(netloc=f"{netloc[0].split(':', 1)[0]}:***@{netloc[1]}")
    return urlunsplit(parts._replace(query=_QUERY_PASSWORD.sub(r"\1***", parts.query)))


_QUERY_PASSWORD = re.compile(r"((?:^|&)[^=&]*password=)[^&]*", re.IGNORECASE)


class SharedPool:
    """The one asyncpg pool of this process on ``url``, shared by every ``PgDatabase`` on it.

    Lives on the loop thread and is only touched there (no lock between threads is needed).
    ``users`` counts the holders; the pool opens on first need with the first holder's size and
    timeout, and a closed pool opens again on the next need.
    """

    def __init__(self, url: str, *, max_size: int, timeout: float) -> None:
        self.url, self.max_size, self.timeout = url, max_size, timeout
        self.users = 0
        self.pool: Any = None
        self._lock = asyncio.Lock()  # one pool made at a time, and none while one is closing

    async def get(self) -> Any:
        """The open pool, made now if there is none."""
        import asyncpg

        if self.pool is not None:
            return self.pool
        async with self._lock:
            if self.pool is None:
                self.pool = await asyncpg.create_pool(
                    self.url, min_size=0, max_size=self.max_size, timeout=self.timeout)
            return self.pool

    async def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Close the pool, waiting up to ``timeout`` seconds for operations in flight, then cutting them."""
        async with self._lock:
            pool, self.pool = self.pool, None
            if pool is None:
                return
            try:
                await asyncio.wait_for(pool.close(), timeout)
            except Exception:
                pool.terminate()


class _LoopThread:
    """An asyncio loop running forever on a daemon thread, with this process's pools (re-made after a fork)."""

    _shared: _LoopThread | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.pools: dict[str, SharedPool] = {}  # url -> its pool; touched on this loop only
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="flower-postgres", daemon=True)
        self.thread.start()

    @classmethod
    def get(cls) -> _LoopThread:
        with cls._lock:
            if cls._shared is None or cls._shared.pid != os.getpid():
                cls._shared = cls()
            return cls._shared

    def hold(self, url: str, *, max_size: int, timeout: float) -> SharedPool:
        """Count one more holder of ``url``'s pool (on the loop)."""
        shared = self.pools.get(url)
        if shared is None:
            shared = self.pools[url] = SharedPool(url, max_size=max_size, timeout=timeout)
        shared.users += 1
        return shared

    async def release(self, shared: SharedPool) -> None:
        """One holder fewer; the last one closes the pool (on the loop)."""
        shared.users -= 1
        if shared.users > 0:
            return
        await shared.close()
        if shared.users == 0 and self.pools.get(shared.url) is shared:  # nobody took it while it closed
            del self.pools[shared.url]

    async def close_all(self, timeout: float) -> None:
        await asyncio.gather(*(p.close(timeout) for p in list(self.pools.values())))


def _submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    return asyncio.run_coroutine_threadsafe(coro, _LoopThread.get().loop)


def close_pools() -> None:
    """Close every pool of this process now (waiting up to 30 s for operations in flight).

    The stores stay usable: a later call opens its URL's pool again. A no-op in a process that
    never used PostgreSQL.
    """
    with _LoopThread._lock:
        current = _LoopThread._shared
    if current is not None and current.pid == os.getpid():
        asyncio.run_coroutine_threadsafe(current.close_all(CLOSE_TIMEOUT), current.loop).result(CLOSE_TIMEOUT + 5)


@atexit.register
def _close_at_exit() -> None:
    # The server then sees a goodbye rather than a dropped socket; daemon threads still run here.
    current = _LoopThread._shared
    if current is None or current.pid != os.getpid() or not current.thread.is_alive():
        return
    try:
        asyncio.run_coroutine_threadsafe(current.close_all(EXIT_TIMEOUT), current.loop).result(EXIT_TIMEOUT + 1)
    except Exception:
        pass  # exiting anyway: the server drops what is left


class PgDatabase:
    """One PostgreSQL database at ``url``, through this process's shared pool on it, migrated on first use.

    The contract with a subclass (the session store): do every operation through ``_run(fn,
    *args)``, which awaits ``fn(conn, *args)`` with a pooled asyncpg connection on the pool's
    loop; PostgreSQL and connection failures come out as ``StoreError`` naming the database
    (password left out) and the fix. ``component``/``migrations`` are the tables to bring up to
    date before this object's first operation (none: nothing is migrated, for readers only).
    ``max_connections`` and ``connect_timeout`` apply when this object opens the URL's pool;
    one opened already keeps its own. ``close``/``aclose`` let go of the pool (the last holder
    closes it) and may be called any number of times; a later use takes it again.
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
        self._held: SharedPool | None = None
        self._migrated = False
        self._pid = os.getpid()
        self._opening: asyncio.Lock | None = None  # made on the pool's loop, the only one it is used on

    async def _run(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``fn(conn, *args)`` on a pooled connection. Not abandoned on cancel: no write lands unseen later."""
        future = _submit(self._on_loop(fn, *args))
        return await anyio.to_thread.run_sync(future.result)

    def _run_sync(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``_run`` for synchronous callers: blocks the calling thread (never the pool's loop) until done."""
        return _submit(self._on_loop(fn, *args)).result()

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
        if self._pid != os.getpid():  # a forked child must not share its parent's sockets
            self._held, self._opening, self._migrated, self._pid = None, None, False, os.getpid()
        held = self._held
        if held is not None and held.pool is not None and self._migrated:
            return held.pool
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._held is None:
                self._held = _LoopThread.get().hold(
                    self.url, max_size=self.max_connections, timeout=self.connect_timeout)
            try:
                pool = await self._held.get()
                if not self._migrated and self.migrations:
                    async with pool.acquire() as conn:
                        await migrate(conn, self.component, self.migrations, where=self.where)
            except BaseException:
                await self._let_go()  # the next use tries afresh; a pool nobody holds is closed
                raise
            self._migrated = True
            return pool

    async def _let_go(self) -> None:
        held, self._held, self._migrated = self._held, None, False
        if held is not None:
            await _LoopThread.get().release(held)

    async def _close_on_loop(self) -> None:
        assert self._opening is not None
        async with self._opening:  # not while the pool is being taken
            await self._let_go()

    def close(self) -> None:
        """Let go of the pool now, with or without a running event loop; the last holder closes it,
        waiting for operations in flight (up to 30 s). Closing twice is fine; a later use takes
        the pool again (opening it if nobody else holds it)."""
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

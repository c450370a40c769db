"""One pool per URL per process: stores on one database share it, counted by the server itself.

``pg_stat_activity`` says how many connections a database really has; the pool keeps what it
opened idle for minutes (asyncpg's ``max_inactive_connection_lifetime``), so a count taken after
the work shows how many were opened for it.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from typing import Any

import pytest

from engine.authoring import PostgresSessionStore
from engine._stores.pg_pool import close_pools, redact
from engine.testing import PostgresServer


def x(**fields: Any) -> dict[str, Any]:
    return {"type": "x", **fields}


def key(n: int) -> Any:
    return {"project_key": "proj", "session_id": f"s{n}"}


def connections(server: PostgresServer, url: str) -> int:
    """The client connections the server has open to ``url``'s database (psql's own is to another)."""
    name = url.split("?")[0].rsplit("/", 1)[-1]
    return int(server.sql(f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{name}' "
                          "AND backend_type = 'client backend'"))


async def until(check: Callable[[], bool], timeout: float = 60.0) -> None:
    """Wait until ``check()`` holds (a backend leaves pg_stat_activity just after its socket closes)."""
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(check):
        assert time.monotonic() < deadline, "the condition did not come true within the timeout"
        await asyncio.sleep(0.05)


async def test_twenty_stores_on_one_url_use_at_most_the_pools_connections(
    postgres_url: str, postgres_server: PostgresServer
) -> None:
    stores = [PostgresSessionStore(postgres_url) for _ in range(20)]  # a bot's twenty waiting runs
    limit = stores[0].max_connections
    seen: list[int] = []
    done = asyncio.Event()

    async def sample() -> None:  # the count while the work runs, not only after it
        while not done.is_set():
            seen.append(await asyncio.to_thread(connections, postgres_server, postgres_url))

    sampler = asyncio.create_task(sample())
    try:
        for _ in range(3):
            await asyncio.gather(*(s.append(key(i), [x(n=n) for n in range(200)])
                                   for i, s in enumerate(stores)))
            loaded = await asyncio.gather(*(s.load(key(i)) for i, s in enumerate(stores)))
            assert all(len(entries or []) >= 200 for entries in loaded)
        after = connections(postgres_server, postgres_url)
        assert 1 <= after <= limit  # twenty pools would keep twenty connections here
    finally:
        done.set()
        await sampler
        for s in stores[:-1]:
            await s.aclose()
    assert seen and max(seen) <= limit
    assert connections(postgres_server, postgres_url) >= 1  # one store still holds the pool
    await stores[-1].aclose()  # the last holder closes it
    await until(lambda: connections(postgres_server, postgres_url) == 0)


async def test_stores_with_another_size_share_the_pool_the_first_one_opened(
    postgres_url: str, postgres_server: PostgresServer
) -> None:
    small = PostgresSessionStore(postgres_url, max_connections=1)
    big = [PostgresSessionStore(postgres_url, max_connections=10) for _ in range(5)]
    try:
        await small.append(key(0), [x()])
        await asyncio.gather(*(s.append(key(i + 1), [x(n=n) for n in range(200)]) for i, s in enumerate(big)))
        assert connections(postgres_server, postgres_url) == 1
    finally:
        for s in (small, *big):
            await s.aclose()


async def test_close_pools_closes_them_all_and_a_later_use_opens_again(
    postgres_url: str, postgres_server: PostgresServer
) -> None:
    s = PostgresSessionStore(postgres_url)
    try:
        await s.append(key(1), [x(n=1)])
        assert connections(postgres_server, postgres_url) == 1
        await asyncio.to_thread(close_pools)
        await until(lambda: connections(postgres_server, postgres_url) == 0)
        assert await s.load(key(1)) == [x(n=1)]  # the store is still usable
        assert connections(postgres_server, postgres_url) == 1
    finally:
        await s.aclose()
    await until(lambda: connections(postgres_server, postgres_url) == 0)


def test_a_forked_child_opens_its_own_pool_and_leaves_its_parents_alone(postgres_url: str) -> None:
    parent = PostgresSessionStore(postgres_url)
    asyncio.run(parent.append(key(1), [x(n=1)]))  # the parent's pool is open, its connection idle
    pid = os.fork()
    if pid == 0:  # the child: the parent's store and a new one both work, on the child's own sockets
        code = 1
        try:
            asyncio.run(parent.append(key(2), [x(n=2)]))
            child = PostgresSessionStore(postgres_url)
            asyncio.run(child.append(key(3), [x(n=3)]))
            child.close()
            parent.close()  # closes the child's pool only
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    try:
        # Had the child written on the parent's socket, this connection's protocol state would be broken.
        assert asyncio.run(parent.load(key(1))) == [x(n=1)]
        assert asyncio.run(parent.load(key(2))) == [x(n=2)] and asyncio.run(parent.load(key(3))) == [x(n=3)]
    finally:
        parent.close()


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://flower:s3cret@db/flower", "postgresql://flower:***@db/flower"),
    ("postgresql://flower@db/flower?password=s3cret&sslmode=require",
     "postgresql://flower@db/flower?password=***&sslmode=require"),  # libpq takes the password here too
    ("postgresql://db/flower?sslmode=verify-full&sslpassword=s3cret", "postgresql://db/flower?sslmode=verify-full&sslpassword=***"),
    ("postgresql://flower:a@db/flower?PASSWORD=s3cret", "postgresql://flower:***@db/flower?PASSWORD=***"),
    ("postgresql://flower@db/flower", "postgresql://flower@db/flower"),
])
def test_redact_hides_every_password_a_url_can_carry(url: str, shown: str) -> None:
    assert redact(url) == shown


def test_redact_leaves_a_url_without_a_password_as_written() -> None:
    assert redact("sqlite:///x.db") == "sqlite:///x.db"

"""Several bot replicas on one database (issue 17): PostgreSQL against SQLite, 1 and 3 replicas,
side by side in one run.

- **Event claims**: each replica is a process claiming events one after another as the bot does
  before it acks (``BotStore.claim``: the event id, the channel + ts, the thread's last seen ts, in
  one write transaction). Per-claim latency (median, 95th percentile, worst) and claims a second
  for all replicas together.
- **Notices a second**: notices queued in 10 threads, posted by the real ``Outbox`` of each replica
  (each item claimed first, ``bot.store.replicas``) to the fake Slack's Web API, until all are
  posted; notices a second from the first post to the last, and how many were posted twice (must
  be 0).
- **Forwarded events**: an event for a thread another replica owns, from ``forward`` to the owner's
  handler (the poll's latency bound is ``POLL_S``).
- **Takeover**: a replica holding runs stops renewing (as when killed); the time until another,
  with the default lease and heartbeat, has taken every run over.

PostgreSQL is a throwaway cluster on a unix socket with fsync and synchronous commits on (a
production server's settings); SQLite is a bot.db file with the bot's ``synchronous=FULL``. Three
replicas on one SQLite file work (one machine only) and are shown for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench import load_average, print_machine, table

THREAD_COUNT = 10
KIND = {"sqlite": "SQLite (bot.db)", "postgres": "PostgreSQL"}


def _open(target: str) -> Any:
    from bot.store.bot_store import BotStore
    from bot.store.pg_store import PgBotStore

    return PgBotStore(target) if target.startswith("postgresql://") else BotStore(target)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- event claims ---------------------------------------------------------------------------------


def _claimer(target: str, replica: int, count: int, ready: Any, go_on: Any, out: Any) -> None:
    from bot.core.thread import ThreadKey
    async def go() -> list[float]:
        store = _open(target)
        key = ThreadKey("T0BENCH", "C0BENCH", f"1712345678.{replica:06d}")
        await store.claim(key, "1712345678.999999", event_id=f"warm-{replica}", known_thread=False)  # connect
        ready.put(replica)
        await asyncio.to_thread(go_on.wait)
        times = []
        for n in range(count):
            started = time.perf_counter()
            assert await store.claim(key, f"{1712345679 + n}.{replica:06d}", event_id=f"Ev{replica}-{n}",
                                     known_thread=False)
            times.append(time.perf_counter() - started)
        await store.aclose()
        return times

    out.put((asyncio.run(go()), time.time()))


def claims(target: str, replicas: int, count: int) -> dict[str, float]:
    """``replicas`` processes claiming ``count`` events each at once; latency and throughput."""
    ctx = multiprocessing.get_context("spawn")
    ready, go_on, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_claimer, args=(target, r, count, ready, go_on, out)) for r in range(replicas)]
    for p in procs:
        p.start()
    for _ in procs:  # every process started, connected and migrated before the clock starts
        ready.get(timeout=600)
    start_at = time.time()
    go_on.set()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    times = [t for got, _ in results for t in got]
    wall = max(end for _, end in results) - start_at
    return {"p50": statistics.median(times) * 1000, "p95": _pct(times, 0.95) * 1000, "max": max(times) * 1000,
            "per_s": len(times) / wall}


# -- notices a second -----------------------------------------------------------------------------


def _poster(target: str, env: dict[str, str], clustered: bool, done: Any) -> None:
    import os

    os.environ.update(env)
    from bot.main import web_client
    from bot.outbound.outbox import Outbox
    from bot.settings.config import load_config
    from bot.store.replicas import Replicas, Solo

    async def go() -> None:
        store = _open(target)
        replicas = Replicas(store) if clustered else Solo()
        outbox = Outbox(store, web_client(load_config(dotenv=None)), retry_after_s=0.05, replicas=replicas)
        outbox.start()
        while await store.pending_outbox(limit=1):
            await asyncio.sleep(0.05)
        await outbox.close()
        await replicas.close()
        await store.aclose()

    asyncio.run(go())
    done.put(time.time())


async def notices(target: str, replicas: int, count: int) -> dict[str, float]:
    """``count`` notices in ``THREAD_COUNT`` threads posted by ``replicas`` outboxes at once."""
    from bot.core.thread import ThreadKey
    from bot.testing.fake_slack import FakeSlack

    async with FakeSlack() as slack:
        store = _open(target)
        threads = [ThreadKey("T0001", "C0GENERAL", slack.mention("C0GENERAL", "hello")["ts"])
                   for _ in range(THREAD_COUNT)]
        for n in range(count):
            await store.enqueue(threads[n % THREAD_COUNT], "note", f"note:{n}", {"text": f"notice {n}"})
        await store.aclose()
        env = {**slack.env(), "FLOWER_ALLOW_EVERYONE": "1"}
        ctx = multiprocessing.get_context("spawn")
        done = ctx.Queue()
        procs = [ctx.Process(target=_poster, args=(target, env, replicas > 1 or target.startswith("postgresql"),
                                                   done)) for _ in range(replicas)]
        for p in procs:
            p.start()
        for _ in procs:
            await asyncio.to_thread(done.get, True, 600)
        for p in procs:
            await asyncio.to_thread(p.join)
        posts = [c for c in slack.calls("chat.postMessage") if c.ok]
        keys = Counter(((c.arg("metadata") or {}).get("event_payload") or {}).get("key") for c in posts)
    spent = posts[-1].at - posts[0].at  # from the first post to the last: the processes' start left out
    return {"per_s": (len(posts) - 1) / max(spent, 0.001), "posted": len(keys),
            "twice": sum(1 for n in keys.values() if n > 1)}


# -- forwarded events and takeover ----------------------------------------------------------------


async def forwarding(url: str, count: int) -> dict[str, float]:
    """From ``forward`` on one replica to the owner's handler, ``count`` times."""
    from bot.core.thread import ThreadKey
    from bot.store.replicas import POLL_S, Replicas
    store = _open(url)
    key = ThreadKey("T0BENCH", "C0BENCH", "1712345678.000042")
    owner, sender = Replicas(store, id="owner"), Replicas(store, id="sender")
    assert await owner.here(key) and not await sender.here(key)
    got: asyncio.Queue[float] = asyncio.Queue()

    async def handled(_key: ThreadKey, _op: str, args: dict[str, Any]) -> None:
        got.put_nowait(time.time() - args["at"])

    async def nothing(_key: ThreadKey) -> None:
        return None

    owner.start(resume=nothing, dispatch=handled, lost=nothing)
    waits = []
    rng = random.Random(17)
    for _ in range(count):
        await asyncio.sleep(rng.uniform(0, POLL_S))  # events arrive at any moment of the owner's poll
        await sender.forward(key, "bench", {"at": time.time()})
        waits.append(await asyncio.wait_for(got.get(), 60))
    await owner.close()
    await store.aclose()
    return {"p50": statistics.median(waits) * 1000, "p95": _pct(waits, 0.95) * 1000, "max": max(waits) * 1000}


async def takeover(url: str, runs: int) -> float:
    """Seconds from a replica's last renewal until another (default lease and heartbeat) took all ``runs``."""
    from bot.core.thread import ThreadKey
    from bot.store.replicas import Replicas
    store = _open(url)
    dead = Replicas(store, id="dead")
    keys = [ThreadKey("T0BENCH", "C0TAKE", f"1712345678.{n:06d}") for n in range(runs)]
    for key in keys:
        await store.upsert_thread(key, workspace=key.thread_ts, state="running")
        assert await dead.here(key)
    died = time.time()  # its leases were taken just now: the last renewal
    taken: asyncio.Queue[ThreadKey] = asyncio.Queue()

    async def nothing(*_: Any) -> None:
        return None

    alive = Replicas(store, id="alive")
    alive.start(resume=taken.put, dispatch=nothing, lost=nothing)
    for _ in keys:
        await asyncio.wait_for(taken.get(), 120)
    spent = time.time() - died
    await alive.close()
    await store.aclose()
    return spent


# -- the run --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    from engine.testing.postgres import PostgresServer

    parser = argparse.ArgumentParser(prog="python -m bench replicas", description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=500, help="events each replica claims (default 500)")
    parser.add_argument("--notices", type=int, default=300, help="notices queued (default 300)")
    parser.add_argument("--forwards", type=int, default=100, help="forwarded events timed (default 100)")
    parser.add_argument("--takeovers", type=int, default=3, help="takeovers timed (default 3)")
    args = parser.parse_args(argv)
    print_machine()
    print(f"- load before: {load_average()}\n")
    with PostgresServer(durable=True) as server, tempfile.TemporaryDirectory(prefix="flower-bench-") as tmp:
        rows_c, rows_n = [], []
        for kind in ("sqlite", "postgres"):
            for replicas in (1, 3):
                name = f"{kind}-{replicas}"
                target = server.create_database(name.replace("-", "_")) if kind == "postgres" else str(Path(tmp) / f"{name}.db")
                c = claims(target, replicas, args.claims)
                rows_c.append([KIND[kind], replicas, f"{c['p50']:.2f}", f"{c['p95']:.2f}", f"{c['max']:.1f}",
                               f"{c['per_s']:.0f}"])
                target = (server.create_database(f"n_{name.replace('-', '_')}") if kind == "postgres"
                          else str(Path(tmp) / f"n-{name}.db"))
                n = asyncio.run(notices(target, replicas, args.notices))
                rows_n.append([KIND[kind], replicas, f"{n['per_s']:.0f}", n["posted"], n["twice"]])
        print(f"### Event claims ({args.claims} a replica, one after another in each)\n")
        print(table(["database", "replicas", "median ms", "p95 ms", "worst ms", "claims/s (all)"], rows_c))
        print(f"\n### Notices posted to the fake Slack ({args.notices} in {THREAD_COUNT} threads)\n")
        print(table(["database", "replicas", "notices/s", "posted", "posted twice"], rows_n))
        url = server.create_database("forwards")
        f = asyncio.run(forwarding(url, args.forwards))
        print(f"\n### Forwarded events ({args.forwards}, PostgreSQL, polled every 0.2 s)\n")
        print(table(["median ms", "p95 ms", "worst ms"], [[f"{f['p50']:.0f}", f"{f['p95']:.0f}", f"{f['max']:.0f}"]]))
        times = [asyncio.run(takeover(server.create_database(f"take_{n}"), 5)) for n in range(args.takeovers)]
        print("\n### Takeover of 5 runs after the owner's last renewal (lease 15 s, heartbeat 5 s)\n")
        print(table(["try", "seconds"], [[n + 1, f"{t:.1f}"] for n, t in enumerate(times)]))
    print(f"\n- load after: {load_average()}")
    return 0

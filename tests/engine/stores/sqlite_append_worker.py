"""Helper process for the two-process tests of SqliteSessionStore and PostgresSessionStore (not a test module).

Usage: python sqlite_append_worker.py DB NAME COUNT BATCH (DB: a file, or a postgresql:// URL)
Prints "ready", waits for one line on stdin (so both processes start together), then appends
COUNT entries in batches of BATCH to the shared key and to its own key, interleaved, and prints
"done". The store is deliberately never closed: the process must still exit.
"""

from __future__ import annotations

import asyncio
import sys

from engine._stores.postgres import PostgresSessionStore
from engine._stores.sqlite import SqliteSessionStore


async def main(db: str, name: str, count: int, batch: int) -> None:
    store = PostgresSessionStore(db) if db.startswith("postgresql://") else SqliteSessionStore(db)
    shared = {"project_key": "proj", "session_id": "shared"}
    own = {"project_key": "proj", "session_id": f"own-{name}"}
    for start in range(0, count, batch):
        rows = [{"type": "x", "uuid": f"{name}-{i}", "n": i} for i in range(start, start + batch)]
        await store.append(shared, rows)
        await store.append(own, [{"type": "x", "n": i, "by": name} for i in range(start, start + batch)])


if __name__ == "__main__":
    db, name, count, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    print("ready", flush=True)
    sys.stdin.readline()
    asyncio.run(main(db, name, count, batch))
    print("done", flush=True)

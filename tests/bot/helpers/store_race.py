"""A second process for tests/bot/store/test_store.py (run as a script by its path): answers
questions in a shared bot.db (or PostgreSQL database) when told to go.

Usage: ``python store_race.py DB NAME ID [ID ...]``, DB a file or a ``postgresql://``
URL. Opens the store, prints ``ready``,
waits for one line on stdin, then answers each question id as NAME and prints one JSON line:
``{"id": won, ...}``.
"""

from __future__ import annotations

import asyncio
import json
import sys

from bot.store.bot_store import BotStore
from bot.store.pg_store import PgBotStore


async def main(db: str, name: str, ids: list[int]) -> None:
    store = PgBotStore(db) if db.startswith("postgresql://") else BotStore(db)
    await store.get_question(ids[0])  # open the connection before the start line
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    won = {qid: await store.answer_question(qid, f"answer from {name}", name) for qid in ids}
    store.close()
    print(json.dumps(won), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], [int(a) for a in sys.argv[3:]]))

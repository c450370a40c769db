"""A bot.db deleted or replaced under a running bot: noticed, nothing written to a lost file, the bot
stops with one line and a non-zero exit (the service manager starts it again).

The store's own check on real files first; then the bot as a real process (``python -m bot``,
see ``tests/bot/test_bot_process.py``) whose bot.db is deleted, or replaced, mid-run.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from bot.core.thread import ThreadKey
from bot.errors import StoreVanished
from bot.store.bot_store import BotStore
from bot.store.housekeeping import EXIT_VANISHED
from engine.testing import hold, text
from engine.testing.roles import CLARIFIER
from tests.bot.helpers.app import posted
from tests.bot.helpers.process import first_mention

T1 = ThreadKey("T0TEAM", "C0GENERAL", "1712345678.000100")
EXIT_CAP_S = 60.0  # generous: the bot checks every 2 s, then closes its runs and connections


def _other_db(path: Path) -> None:
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE other (x)")
        conn.commit()


async def test_a_deleted_file_stops_every_operation_and_is_not_made_again(tmp_path):
    store = BotStore(tmp_path / "bot.db")
    await store.upsert_thread(T1, workspace="w")
    store.check_file()  # still the file it opened
    store.path.unlink()
    with pytest.raises(StoreVanished, match="was deleted while the bot had it open"):
        await store.claim_event("Ev1")
    with pytest.raises(StoreVanished):
        await store.get_thread(T1)
    await store.aclose()
    with pytest.raises(StoreVanished):  # a reopen must not start an empty file in its place
        await store.get_thread(T1)
    assert not store.path.exists()


async def test_a_replaced_file_is_told_apart_by_its_inode(tmp_path):
    store = BotStore(tmp_path / "bot.db")
    await store.upsert_thread(T1, workspace="w")
    other = tmp_path / "other.db"
    _other_db(other)
    os.replace(other, store.path)
    with pytest.raises(StoreVanished, match="was replaced by another file"):
        await store.upsert_thread(T1, state="running")
    await store.aclose()
    with closing(sqlite3.connect(store.path)) as conn:  # the new file was not written to
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("other",)]


async def test_a_fresh_store_checks_nothing_before_it_opens(tmp_path):
    store = BotStore(tmp_path / "home" / "bot.db")
    store.check_file()  # nothing opened yet: nothing to compare with
    assert await store.get_thread(T1) is None
    store.check_file()
    await store.aclose()


@pytest.mark.parametrize("how", ["deleted", "replaced"])
async def test_the_bot_stops_with_one_line_when_its_bot_db_goes(how, bot_process, slack_env, fake_model, tmp_path):
    slack = slack_env
    held = hold()
    fake_model.rule(text("a brief", fault=held), when=CLARIFIER)  # a run in progress when it happens
    thread = await first_mention(bot_process, slack)
    await posted(slack, thread, "Started")
    await held.arrived()
    db = tmp_path / "home" / "bot.db"
    if how == "deleted":
        db.unlink()
    else:
        _other_db(tmp_path / "other.db")
        os.replace(tmp_path / "other.db", db)
    try:
        code = await asyncio.wait_for(asyncio.to_thread(bot_process.proc.wait), EXIT_CAP_S)
    finally:
        held.release()
    logs = bot_process.logs()
    assert code == EXIT_VANISHED, logs
    said = "was deleted while the bot had it open" if how == "deleted" else "was replaced by another file"
    stops = [line for line in logs.splitlines() if "flower-bot is stopping:" in line]
    assert len(stops) == 1 and said in stops[0] and str(db) in stops[0], logs
    if how == "replaced":
        with closing(sqlite3.connect(db)) as conn:  # the file put in its place was left alone
            assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("other",)]
    else:
        assert not db.exists()  # nothing made an empty one behind the bot's back

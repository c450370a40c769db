"""The spill never fails a load: a lone UTF-16 surrogate in a tool result (the CLI writes one when
it cuts text through an emoji) spills like any text, and a spill that cannot be written leaves the
result in place with one log line. Both the cut on resume (the store) and the cut at once
(``spill_guard``)."""

from __future__ import annotations

import copy
import logging
import sqlite3
from pathlib import Path

from engine._agents.guard import spill_guard
from engine._agents.workbench import Workbench
from engine._resume.policies import TrimPolicy
from engine._resume.spill_file import safe_text, spill_name
from engine._resume.stores import PruningSessionStore
from engine._stores.sqlite import SqliteSessionStore
from tests.engine.stores.recorded import KEY, build_session, results
from tests.engine.stores.shapes import bash

LONE = "\ud83d"  # the high half of 😀, its low half cut off
CUT = "x" * 3000 + "😀" * 10 + LONE  # longer than TrimPolicy.min_chars


async def _seed(db: Path) -> list[dict]:
    """A real sessions.db whose oldest tool result holds a lone surrogate, as the CLI stores it."""
    original = build_session([bash("cat big.log", CUT)] + [bash("make", "ok")] * 21)
    raw = SqliteSessionStore(db)
    await raw.append(KEY, copy.deepcopy(original))
    raw.close()
    conn = sqlite3.connect(db)
    rows = [data for (data,) in conn.execute("SELECT data FROM entries")]
    conn.close()
    assert any("\\ud83d\"" in data for data in rows)  # stored as JSON's escape, no half-encoded bytes
    return original


def test_safe_text_and_names():
    assert safe_text("plain 😀") == "plain 😀"
    assert safe_text("a" + LONE + "b") == "a\ufffdb"
    assert safe_text("\ud83d\ude00") == "😀"  # a split pair is joined again
    assert spill_name("m" * 10) == spill_name("m" * 10) != spill_name("m" * 10 + LONE)


async def test_load_of_a_session_with_a_lone_surrogate_spills_it(tmp_path):
    db = tmp_path / "runs" / "sessions.db"
    db.parent.mkdir()
    original = await _seed(db)
    store = PruningSessionStore(db, tmp_path, policy=TrimPolicy())
    loaded = await store.load(KEY)
    assert store.last_report["spilled"] == 1
    [pointer] = [b["content"] for b in results(loaded) if str(b["content"]).startswith("[Tool result")]
    spilled = Path(pointer.split(" are in ")[1].split(". Read")[0])
    assert spilled.read_text(encoding="utf-8") == CUT[:-1] + "\ufffd"  # valid UTF-8 on disk
    pointer.encode("utf-8")  # what the model is shown can be sent as it is
    raw = SqliteSessionStore(db)
    assert await raw.load(KEY) == original  # the rows keep every code point
    raw.close()
    store.close()


async def test_a_spill_that_cannot_be_written_leaves_the_result_with_one_log_line(tmp_path, caplog):
    db = tmp_path / "runs" / "sessions.db"
    db.parent.mkdir()
    await _seed(db)
    (tmp_path / ".flower").mkdir()
    (tmp_path / ".flower" / "spill").write_text("a file where the spill folder should be")
    store = PruningSessionStore(db, tmp_path, policy=TrimPolicy())
    with caplog.at_level(logging.WARNING, logger="engine._resume.spill"):
        loaded = await store.load(KEY)
    assert results(loaded)[0]["content"] == CUT  # left in place, whole
    assert store.last_report.get("spilled", 0) == 0
    lines = [r.getMessage() for r in caplog.records if r.name == "engine._resume.spill"]
    assert len(lines) == 1 and "could not spill" in lines[0] and "3011 characters" in lines[0]
    store.close()


async def test_spill_guard_cuts_a_lone_surrogate_and_survives_an_unwritable_folder(tmp_path, caplog):
    wb = Workbench(tmp_path)
    data = {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "cat"},
            "cwd": str(tmp_path), "session_id": "s", "tool_use_id": "t",
            "tool_response": {"stdout": "y" * 5000 + LONE, "stderr": ""}}
    (hook,) = spill_guard(wb).hooks
    out = await hook(data, "t", {"signal": None})
    stdout = out["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
    assert (wb.spill / spill_name("y" * 5000 + LONE)).read_text(encoding="utf-8") == "y" * 5000 + "\ufffd"
    stdout.encode("utf-8")

    blocked = Workbench(tmp_path / "other")
    blocked.spill.parent.mkdir(parents=True)
    blocked.spill.write_text("not a folder")
    (hook,) = spill_guard(blocked).hooks
    with caplog.at_level(logging.WARNING, logger="engine._agents.guard"):
        assert await hook(data, "t", {"signal": None}) == {}  # the output goes through whole
    assert [r.getMessage() for r in caplog.records if "could not spill" in r.getMessage()]

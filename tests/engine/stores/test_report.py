"""``trim_report()`` says what ``load()`` saved on the chain the CLI resumes, measured (issue 15)."""

from __future__ import annotations

import copy

from engine._resume.chain import resume_chain, shown_chars
from engine._resume.policies import TrimPolicy
from engine._resume.stores import PruningSessionStore
from tests.engine.stores.shapes import Transcript, bash

KEY = {"project_key": "proj", "session_id": "sess-1"}
LISTING = "README.md\nsrc\ntests\npyproject.toml\n" * 4


async def test_the_report_is_the_measured_size_of_the_chain_before_and_after(tmp_path):
    t = Transcript()
    for i in range(8):
        t.turn(bash("git status", f"{LISTING}{i}"))
    for _ in range(3):
        t.turn(bash("make", "m" * 5000))
    for _ in range(4):
        t.subagent(bash("make", "s" * 9000))  # off the chain: neither cut nor counted
    t.say("done")
    store = PruningSessionStore(tmp_path / "s.db", tmp_path, policy=TrimPolicy(keep_recent=2))
    await store.append(KEY, copy.deepcopy(t.entries))
    loaded = await store.load(KEY)
    r = store.last_report
    assert r["shown_before"] == shown_chars(resume_chain(t.entries).shown)
    assert r["shown_after"] == shown_chars(resume_chain(loaded).shown)
    assert r["shown_after"] < r["shown_before"] - 4000  # one 5000-character result spilled
    assert store.trim_report().endswith(
        f"(shown {r['shown_before']} -> {r['shown_after']} characters, "
        f"{r['shown_before'] - r['shown_after']} kept out of context)")
    store.close()


async def test_cuts_off_the_chain_are_not_claimed(tmp_path):
    t = Transcript()
    t.turn(bash("make", "ok"))
    for _ in range(30):
        t.subagent(bash("make", "s" * 9000))
    t.say("done")
    store = PruningSessionStore(tmp_path / "s.db", tmp_path, policy=TrimPolicy(keep_recent=0))
    await store.append(KEY, copy.deepcopy(t.entries))
    assert await store.load(KEY) == t.entries
    assert store.trim_report() == "load: nothing trimmed"
    assert store.last_report["shown_before"] == store.last_report["shown_after"]
    store.close()

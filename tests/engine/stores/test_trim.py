"""TrimmingSessionStore: stale glances expire, old bulky results spill, the stored rows never change.

Transcripts are real CLI transcripts (tests/engine/stores/data, recorded from the bundled CLI
against the fake model) or built from their entries as templates.
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import SessionStore
from claude_agent_sdk.testing import run_session_store_conformance

from engine import trim_report
from engine._errors import FlowerError
from engine._resume.expire import expire_ephemeral
from engine._resume.policies import EphemeralPolicy, TrimPolicy
from engine._resume.spill import spill_results
from engine._resume.stores import TrimmingSessionStore
from tests.engine.stores.backends import Backend
from tests.engine.stores.recorded import KEY, build_session, load_sample, results
from tests.engine.stores.shapes import bash

# Outputs longer than the expiry note: a shorter one is never expired (the note would add).
STATUS = "On branch main\nChanges not staged for commit:\n\tmodified:   src/app.py\n"
OUT = "x" * 80


def chain(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Root-to-leaf by parentUuid from the last message entry; fails on a dangling link."""
    by_uuid = {e["uuid"]: e for e in entries if e.get("uuid")}
    leaf = [e for e in entries if e.get("type") in ("user", "assistant", "attachment")][-1]
    out = [leaf]
    while out[-1].get("parentUuid"):
        parent = out[-1]["parentUuid"]
        assert parent in by_uuid, f"dangling parentUuid {parent}"
        out.append(by_uuid[parent])
    return out[::-1]


# -- expire ------------------------------------------------------------------------------------


def test_expire_keeps_the_newest_glances_and_notes_the_age_of_older_ones():
    entries = build_session([bash("git status", f"{STATUS}{i}") for i in range(10)])
    report = expire_ephemeral(entries, EphemeralPolicy())
    blocks = results(entries)
    assert report["expired"] == 4
    # 10 calls, each its own model turn, then a final text: result i has 10 - i turns after it.
    assert [b["content"] for b in blocks[:4]] == [
        f"[此命令的结果已过期(第 {10 - i} 轮前),当前状态可能已变。需要请重新执行]" for i in range(4)
    ]
    assert [b["content"] for b in blocks[4:]] == [f"{STATUS}{i}" for i in range(4, 10)]
    assert all(b["tool_use_id"].startswith("toolu_") and b["is_error"] is False for b in blocks)


@pytest.mark.parametrize(
    "call, expired",
    [
        (bash("git status", OUT), True),
        (bash("ls -la | head", OUT), True),
        (bash("git log --oneline 2>/dev/null", OUT), True),
        (bash("make test", "x"), False),
        (bash("git commit -m wip", "x"), False),
        (bash("sed -i s/a/b/ f", "x"), False),
        (("Bash", {"command": "ls", "run_in_background": True}, "started"), False),
        (("Read", {"file_path": "/workspace/a.py"}, "x"), False),
        (bash("cat big.log", "y" * 2001), False),  # over max_chars: the trim pass spills it instead
        (bash("cat small.log", "y" * 2000), True),
        (bash("git status", [{"type": "text", "text": OUT}, {"type": "text", "text": OUT}]), True),
        (bash("ls", [{"type": "image", "source": {"type": "base64", "data": "AA"}}]), False),
    ],
)
def test_expire_only_touches_small_old_ephemeral_bash_results(call, expired):
    entries = build_session([call] + [bash("pwd", "/w")] * 6)
    before = copy.deepcopy(results(entries)[0])
    expire_ephemeral(entries, EphemeralPolicy())
    after = results(entries)[0]
    assert (after != before) is expired
    assert after["tool_use_id"] == before["tool_use_id"]


def test_expire_leaves_refused_calls_alone():
    entries = build_session([bash("git status", "PreToolUse:Bash hook error: no")] + [bash("pwd", "/w")] * 6)
    entries[2]["toolDenialKind"] = "permission-rule"
    expire_ephemeral(entries, EphemeralPolicy())
    assert results(entries)[0]["content"] == "PreToolUse:Bash hook error: no"


def test_expire_text_is_a_template_of_cmd_and_age_only():
    entries = build_session([bash("ls " + "x" * 300, OUT * 4), bash("ls", OUT)])
    expire_ephemeral(entries, EphemeralPolicy(keep_recent=0, text="{cmd}|{age}|{other}"))
    first, second = (b["content"] for b in results(entries))
    assert first.endswith("…|2|{other}") and len(first.split("|")[0]) == 200
    assert second == "ls|1|{other}"


# -- spill -------------------------------------------------------------------------------------


def test_spill_moves_old_long_text_to_files_and_leaves_a_pointer(tmp_path):
    outputs = [f"{i:03d}" + "z" * 3000 for i in range(25)]
    entries = build_session([bash("make build", o) for o in outputs])
    report = spill_results(entries, TrimPolicy(), tmp_path / "spill")
    blocks = results(entries)
    assert report["spilled"] == 5
    for block, full in zip(blocks[:5], outputs[:5]):
        path = Path(block["content"].split(" are in ")[1].split(". Read")[0])
        assert path.parent == tmp_path / "spill" and path.read_text() == full
        assert block["content"].endswith("\n" + full[:400])
        assert "Read that file for the full text" in block["content"]
        assert block["is_error"] is False and block["tool_use_id"].startswith("toolu_")
    assert [b["content"] for b in blocks[5:]] == outputs[5:]
    assert len(list((tmp_path / "spill").iterdir())) == 5


def test_spill_skips_short_results_and_keeps_images(tmp_path):
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    mixed = [{"type": "text", "text": "q" * 2500}, image]
    entries = build_session(
        [bash("make", "short"), ("Read", {"file_path": "/workspace/p.png"}, copy.deepcopy(mixed)),
         ("Read", {"file_path": "/workspace/i.png"}, [image])]
    )
    spill_results(entries, TrimPolicy(keep_recent=0), tmp_path)
    short, mixed_after, image_only = (b["content"] for b in results(entries))
    assert short == "short"
    assert mixed_after[1] == image and mixed_after[0]["text"].startswith("[Tool result trimmed")
    assert image_only == [image]


def test_compact_summaries_are_never_touched(tmp_path):
    entries = build_session([bash("git status", "a" * 3000)] * 3)
    summary = copy.deepcopy(entries[2])
    summary["isCompactSummary"] = True
    entries.insert(1, summary)
    frozen = copy.deepcopy(summary)
    expire_ephemeral(entries, EphemeralPolicy(keep_recent=0, max_chars=10**6))
    spill_results(entries, TrimPolicy(keep_recent=0), tmp_path)
    assert summary == frozen


def test_the_recorded_session_trims_without_breaking_the_chain(tmp_path):
    entries = load_sample("tool_use_write_bash_git")
    expire_ephemeral(entries, EphemeralPolicy(keep_recent=0))
    spill_results(entries, TrimPolicy(keep_recent=0), tmp_path)
    by_text = {b["tool_use_id"]: b["content"] for b in results(entries)}
    assert sum("的结果已过期" in c for c in by_text.values()) == 2  # git status, ls -la
    assert sum(c.startswith("[Tool result trimmed") for c in by_text.values()) == 1  # 200 lines
    assert sum(c.startswith("File created") for c in by_text.values()) == 1
    assert chain(entries)[0]["message"]["content"] == "do the thing"


# -- the store ---------------------------------------------------------------------------------


async def test_store_load_trims_a_copy_and_rows_stay_unchanged(tmp_path, backend: Backend):
    # Each make a different target: the same command run again would leave the older output out.
    original = build_session([bash("git status", f"{STATUS}{i}") for i in range(8)]
                             + [bash(f"make t{i}", "m" * 5000) for i in range(21)])
    store = backend.trimming(tmp_path)
    await store.append(KEY, copy.deepcopy(original))
    loaded = await store.load(KEY)
    assert store.last_report["expired"] == 2 and store.last_report["spilled"] == 1
    assert "2 stale glances expired" in store.trim_report()
    assert "1 bulky results spilled" in store.trim_report()
    assert trim_report(store) == store.trim_report()  # the spec's name, at engine's top level
    [pointer] = [b["content"] for b in results(loaded) if b["content"].startswith("[Tool result")]
    spilled = Path(pointer.split(" are in ")[1].split(". Read")[0])
    assert spilled.parent == tmp_path / ".flower" / "spill" and spilled.read_text() == "m" * 5000
    assert chain(loaded)[0]["message"]["content"] == "do the thing"
    raw = backend.raw()
    assert await raw.load(KEY) == original  # the archive keeps every byte
    assert await store.load(KEY) == loaded  # and loading again gives the same view
    raw.close()
    store.close()


async def test_disabled_policies_make_load_transparent(tmp_path):
    original = build_session([bash("git status", "x" * 3000)] * 30)
    store = TrimmingSessionStore(
        tmp_path / "s.db", tmp_path, TrimPolicy(enabled=False), EphemeralPolicy(enabled=False)
    )
    await store.append(KEY, copy.deepcopy(original))
    assert await store.load(KEY) == original
    assert store.trim_report() == trim_report(store) == "load: nothing trimmed"
    store.close()


async def test_subagent_transcripts_are_trimmed_and_add_to_the_report(tmp_path):
    store = TrimmingSessionStore(tmp_path / "s.db", tmp_path)
    sub = {**KEY, "subpath": "subagents/agent-a1"}
    await store.append(KEY, build_session([bash("ls", OUT)] * 7))
    await store.append(sub, build_session([bash("ls", OUT + "b")] * 8))
    await store.load(KEY)
    await store.load(sub)
    assert store.last_report["expired"] == 1 + 2
    await store.load(KEY)  # a main transcript starts a new report
    assert store.last_report["expired"] == 1
    store.close()


def test_a_spill_folder_outside_the_workspace_is_refused(tmp_path):
    for bad in ("../elsewhere", "/abs/path", "."):
        with pytest.raises(FlowerError, match="spill_dirname"):
            TrimmingSessionStore(tmp_path / "s.db", tmp_path / "ws", TrimPolicy(spill_dirname=bad))


async def test_conformance(tmp_path):
    n = itertools.count()

    def make():
        i = next(n)
        return TrimmingSessionStore(tmp_path / f"c{i}.db", tmp_path / f"ws{i}")

    await run_session_store_conformance(make)
    # nothing was skipped: every optional method is a real implementation, not the Protocol's
    for name in ("list_sessions", "list_session_summaries", "delete", "list_subkeys"):
        assert getattr(TrimmingSessionStore, name) is not getattr(SessionStore, name)

"""The chain the CLI resumes: what the trim and prune policies count and cut, and nothing else.

Hand-made transcripts shaped like real ones (``shapes.Transcript``): parallel calls on sibling
branches, a subagent's entries written into the main file, history before a compaction.
"""

from __future__ import annotations

import copy

from engine._resume.chain import resume_chain
from engine._resume.policies import PrunePolicy, TrimPolicy
from engine._resume.pruning import prune_entries
from engine._resume.stores import PruningSessionStore
from tests.engine.stores.shapes import Transcript, bash, results_of

KEY = {"project_key": "proj", "session_id": "sess-1"}
BIG = "x" * 3000


def test_the_leaf_is_the_newest_main_thread_message_and_parallel_results_are_shown():
    t = Transcript()
    t.turn(bash("make a", "A"), bash("make b", "B"))  # results hang off different calls
    t.subagent(bash("make c", "C"))  # newer in the file, but a subagent's
    chain = resume_chain(t.entries)
    assert chain.leaf is not None and not chain.leaf.get("isSidechain")
    assert [b["content"] for b in results_of(chain.shown)] == ["A", "B"]
    assert not chain.broken and chain.compactions == 0


def test_history_before_a_compaction_is_walked_but_not_shown():
    t = Transcript()
    t.turn(bash("make old", "OLD"))
    t.compact()
    t.turn(bash("make new", "NEW"))
    chain = resume_chain(t.entries)
    assert [b["content"] for b in results_of(chain.shown)] == ["NEW"]
    assert chain.compactions == 1 and chain.walked == len(t.entries)
    assert chain.shown[0]["subtype"] == "compact_boundary"


def test_a_subagent_file_takes_its_newest_message_as_the_leaf():
    t = Transcript()
    side = t.subagent(bash("ls", "a"))
    chain = resume_chain(side, main_thread=False)
    assert len(chain.shown) == len(side)


def test_entries_without_uuids_are_all_shown():
    entries = [{"type": "user", "message": {"role": "user", "content": "hi"}}]
    assert resume_chain(entries).shown == entries


async def test_keep_recent_counts_only_results_the_model_sees(tmp_path):
    t = Transcript()
    for i in range(20):
        t.turn(bash("make", f"{i:02d}" + BIG))
    for _ in range(6):  # newer in the file, off the chain: before this rule they took 6 of the 20
        t.subagent(bash("make", "s" + BIG))
    store = PruningSessionStore(tmp_path / "s.db", tmp_path, policy=TrimPolicy())
    await store.append(KEY, copy.deepcopy(t.entries))
    loaded = await store.load(KEY)
    assert store.last_report.get("spilled", 0) == 0
    assert sum(b["content"].startswith("[Tool result trimmed") for b in results_of(loaded)) == 0
    store.close()


async def test_history_before_a_compaction_is_neither_counted_nor_cut(tmp_path):
    t = Transcript()
    for _ in range(5):
        t.turn(bash("make", "old" + BIG))
    t.compact()
    t.turn(bash("make", "new" + BIG))
    store = PruningSessionStore(tmp_path / "s.db", tmp_path, policy=TrimPolicy(keep_recent=0))
    await store.append(KEY, copy.deepcopy(t.entries))
    loaded = await store.load(KEY)
    assert store.last_report["spilled"] == 1  # the one result after the compaction
    old, new = results_of(loaded)[0], results_of(loaded)[-1]
    assert old["content"].startswith("old") and new["content"].startswith("[Tool result trimmed")
    store.close()


def test_a_denial_off_the_chain_does_not_push_out_the_one_kept():
    t = Transcript()
    t.turn(bash("rm -rf build", "PreToolUse:Bash hook error: no"), is_error=True,
           extra={"toolDenialKind": "permission-rule"})
    side = t.subagent(bash("rm -rf x", "PreToolUse:Bash hook error: no"))
    for e in side:
        for b in e["message"]["content"] if isinstance(e["message"]["content"], list) else []:
            b["is_error"] = True
    t.say("done")
    kept, report = prune_entries(t.entries, PrunePolicy(keep_denials=1))
    assert report["denials"] == 0
    assert [b["content"] for b in results_of(kept)] == ["PreToolUse:Bash hook error: no"] * 2

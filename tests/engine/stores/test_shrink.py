"""What a coordinator needs stays; what is on disk or superseded shrinks (issue 15).

Hand-made transcripts shaped like the CLI's (``shapes.Transcript``).
"""

from __future__ import annotations

import copy

import pytest

from engine._resume.chain import resume_chain
from engine._resume.policies import TrimPolicy
from engine._resume.shrink import drop_stale_views, drop_superseded_attachments, shrink_written_inputs
from engine._resume.spill import spill_results, spill_written_inputs
from engine._resume.stores import PruningSessionStore
from tests.engine.stores.shapes import Transcript, bash, results_of

KEY = {"project_key": "proj", "session_id": "sess-1"}
REPORT = "## Findings\n" + "the worker found this and that. " * 1000  # ~32k, like a real report
BODY = "def main():\n    return 42\n" * 100


@pytest.mark.parametrize("tool", ["Agent", "Task", "ExitPlanMode"])
def test_subagent_reports_and_plan_approvals_are_never_spilled(tmp_path, tool):
    t = Transcript()
    t.turn((tool, {"prompt": "do it"}, REPORT), bash("make", "m" * 3000))
    report = spill_results(t.entries, TrimPolicy(keep_recent=0), tmp_path)
    assert report["spilled"] == 1  # the make output only
    assert results_of(t.entries)[0]["content"] == REPORT


def _written(read_back: bool, tool: str = "Write") -> Transcript:
    t = Transcript()
    inp = ({"file_path": "/w/app.py", "content": BODY} if tool == "Write" else
           {"file_path": "/w/app.py", "old_string": BODY, "new_string": BODY + "# done\n"})
    t.turn((tool, inp, "The file /w/app.py has been updated."))
    if read_back:
        t.turn(("Read", {"file_path": "/w/app.py"}, BODY))
    t.say("done")
    return t


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_a_written_input_shrinks_to_a_pointer_once_the_file_was_read_back(tool):
    t = _written(read_back=True, tool=tool)
    report = shrink_written_inputs(t.entries)
    inp = t.entries[1]["message"]["content"][0]["input"]
    assert report["shrunk"] == 1 and report["shrunk_chars"] > 0
    assert inp["file_path"] == "/w/app.py"
    for name in ("content",) if tool == "Write" else ("old_string", "new_string"):
        assert inp[name].startswith("[") and "/w/app.py" in inp[name] and "sha256 " in inp[name]
        assert "characters written" in inp[name] and len(inp[name]) < 300


def test_a_written_input_without_a_read_back_stays():
    t = _written(read_back=False)
    assert shrink_written_inputs(t.entries) == {"shrunk": 0, "shrunk_chars": 0}
    assert t.entries[1]["message"]["content"][0]["input"]["content"] == BODY


def _input(t: Transcript, index: int) -> dict:
    return t.entries[index]["message"]["content"][0]["input"]


def test_a_written_input_shrinks_once_a_later_call_changed_the_file_and_not_for_a_failed_one():
    t = Transcript()
    t.turn(("Write", {"file_path": "/w/app.py", "content": BODY}, "File created successfully"))
    t.turn(("Edit", {"file_path": "/w/app.py", "old_string": "x", "new_string": "y"}, "no match"), is_error=True)
    assert shrink_written_inputs(t.entries)["shrunk"] == 0  # a failed Edit proves nothing
    t.turn(("Edit", {"file_path": "/w/app.py", "old_string": "42", "new_string": "43"}, "updated"))
    assert shrink_written_inputs(t.entries)["shrunk"] == 1
    assert "changed again after this" in _input(t, 1)["content"] and "/w/app.py" in _input(t, 1)["content"]


VIEW = "   1\tdef main():\n" * 120  # a Read result, line-numbered as the CLI shows it


def _views(*later: tuple[str, dict, str], error: bool = False) -> Transcript:
    t = Transcript()
    t.turn(("Read", {"file_path": "/w/app.py"}, VIEW))
    for call in later:
        t.turn(call, is_error=error)
    t.say("done")
    return t


@pytest.mark.parametrize("call, how", [
    (("Read", {"file_path": "/w/app.py"}, VIEW), "read again"),
    (("Edit", {"file_path": "/w/app.py", "old_string": "main", "new_string": "run"}, "updated"), "changed"),
    (("Write", {"file_path": "/w/app.py", "content": "new"}, "File created successfully"), "changed"),
])
def test_an_old_view_of_a_file_a_later_call_superseded_becomes_a_note(call, how):
    t = _views(call)
    report = drop_stale_views(t.entries, keep_recent=0)
    first = results_of(t.entries)[0]
    assert report["stale_views"] == 1 and report["stale_view_chars"] > len(VIEW) - 200
    assert first["content"].startswith("[An older view of /w/app.py") and f"was {how} after this" in first["content"]
    assert first["tool_use_id"] and results_of(t.entries)[-1]["content"] != first["content"]  # the newest stays


@pytest.mark.parametrize("later, keep_recent, error", [
    ([("Read", {"file_path": "/w/app.py", "offset": 10, "limit": 5}, "part")], 0, False),  # shows less
    ([("Read", {"file_path": "/w/other.py"}, VIEW)], 0, False),  # another file
    ([("Edit", {"file_path": "/w/app.py", "old_string": "a", "new_string": "b"}, "no match")], 0, True),
    ([("Read", {"file_path": "/w/app.py"}, VIEW)], 2, False),  # inside the window of the newest
])
def test_a_view_nothing_superseded_stays(later, keep_recent, error):
    t = _views(*later, error=error)
    assert drop_stale_views(t.entries, keep_recent=keep_recent)["stale_views"] == 0
    assert results_of(t.entries)[0]["content"] == VIEW


def test_an_old_written_input_spills_to_a_file_and_the_pointer_names_both(tmp_path):
    t = Transcript()
    t.turn(("Write", {"file_path": "/w/app.py", "content": BODY}, "File created successfully"))
    t.turn(("Edit", {"file_path": "/w/b.py", "old_string": "a" * 2500, "new_string": "short"}, "updated"))
    t.turn(("Write", {"file_path": "/w/new.py", "content": BODY}, "File created successfully"))
    report = spill_written_inputs(t.entries, TrimPolicy(keep_recent=1), tmp_path)
    assert report["inputs_spilled"] == 2 and report["inputs_spilled_chars"] > len(BODY) + 2000
    pointer = _input(t, 1)["content"]
    spilled = pointer.split("the text is in ")[1].split(";")[0]
    assert "/w/app.py" in pointer and open(spilled).read() == BODY
    assert _input(t, 3)["new_string"] == "short"  # under min_chars: stays
    assert _input(t, 5)["content"] == BODY  # the newest call: inside the window


def test_only_the_newest_copy_of_an_attachment_is_shown():
    t = Transcript()
    old_skills = t.attachment({"type": "skill_listing", "content": "skills v1 " * 200})
    t.attachment({"type": "skill_listing", "content": "skills v2 " * 200})  # may be a delta: kept
    t.attachment({"type": "file", "filename": "/w/a.md", "content": "a v1"})
    t.attachment({"type": "file", "filename": "/w/b.md", "content": "b v1"})
    t.turn(bash("make", "ok"))
    t.attachment({"type": "skill_listing", "content": "skills v1 " * 200})  # the same listing again
    t.attachment({"type": "file", "filename": "/w/a.md", "content": "a v2"})
    t.say("done")
    shown = resume_chain(t.entries).shown
    kept, report = drop_superseded_attachments(t.entries, shown)
    payloads = [e["attachment"] for e in kept if e["type"] == "attachment"]
    assert [p.get("filename") or p["content"][:9] for p in payloads] == ["skills v2", "/w/b.md", "skills v1", "/w/a.md"]
    assert report["attachments"] == 2 and report["attachment_chars"] > 2000
    assert old_skills not in kept
    walk = resume_chain(kept)
    assert not walk.broken and walk.walked == len(kept)  # children re-linked: the chain holds


async def test_the_store_applies_all_three_and_the_chain_holds(tmp_path):
    t = Transcript()
    t.attachment({"type": "skill_listing", "content": "same " * 500})
    t.turn(("Write", {"file_path": "/w/app.py", "content": BODY}, "created"))
    t.turn(("Read", {"file_path": "/w/app.py"}, BODY))
    t.turn(("Agent", {"prompt": "p"}, REPORT))
    t.attachment({"type": "skill_listing", "content": "same " * 500})
    t.say("done")
    store = PruningSessionStore(tmp_path / "s.db", tmp_path, policy=TrimPolicy(keep_recent=0))
    await store.append(KEY, copy.deepcopy(t.entries))
    loaded = await store.load(KEY)
    r = store.last_report
    assert (r["shrunk"], r["attachments"], r["spilled"]) == (1, 1, 1)  # the Read of the file spills
    assert REPORT in [b["content"] for b in results_of(loaded)]
    walk = resume_chain(loaded)
    assert not walk.broken and walk.walked == len(loaded)
    store.close()

"""What a later call made obsolete, and old reasoning, stay out of a resume (issue 15).

Hand-made transcripts shaped like the CLI's (``shapes.Transcript``): the newest todo list, the
newest run of a command and the window's thinking stay; the chain the CLI walks holds.
"""

from __future__ import annotations

import copy

from engine._resume.chain import resume_chain
from engine._resume.policies import TrimPolicy
from engine._resume.reasoning import drop_old_thinking
from engine._resume.shrink import RERUN_NOTE, drop_rerun_outputs, drop_superseded_todos
from engine._resume.stores import PruningSessionStore
from tests.engine.stores.shapes import Transcript, bash, results_of

KEY = {"project_key": "proj", "session_id": "sess-1"}
PLAN = "First I will look at the tests, then the module. " * 40


def _holds(kept: list[dict], leaf: str) -> None:
    walk = resume_chain(kept)
    assert not walk.broken and walk.walked == len(kept) and walk.leaf["uuid"] == leaf


def _thoughts(entries: list[dict]) -> list[str]:
    return [b["thinking"][:6] for e in entries if e["type"] == "assistant"
            for b in e["message"]["content"] if b["type"] == "thinking"]


def test_thinking_before_the_window_is_left_out_and_the_window_keeps_its_own():
    t = Transcript()
    t.think("plan A" + PLAN)
    t.turn(bash("make", "built"))
    t.think("plan B" + PLAN)
    t.turn(bash("make test", "passed"))
    t.think("plan C" + PLAN)
    leaf = t.say("done")["uuid"]
    shown = resume_chain(t.entries).shown
    kept, report = drop_old_thinking(t.entries, shown, keep_recent=1)
    assert _thoughts(kept) == ["plan C"]  # A and B come before the newest result
    assert report == {"thinking": 2, "thinking_chars": report["thinking_chars"]} and report["thinking_chars"] > 2 * len(PLAN)
    _holds(kept, leaf)


def test_the_newest_response_keeps_its_thinking_whatever_the_window():
    t = Transcript()
    t.think("plan A" + PLAN)
    t.turn(bash("make", "built"))
    t.think("plan B" + PLAN, mid="msg-last")
    leaf = t.say("done", mid="msg-last")["uuid"]  # the same API response as plan B
    kept, _ = drop_old_thinking(t.entries, resume_chain(t.entries).shown, keep_recent=0)
    assert _thoughts(kept) == ["plan B"]
    _holds(kept, leaf)


def test_only_the_newest_todo_list_is_shown_with_its_result():
    t = Transcript()
    for n in range(3):
        t.turn(("TodoWrite", {"todos": [{"content": f"step {i}", "status": "pending" if i >= n else "completed",
                                         "activeForm": f"doing {i}"} for i in range(5)]}, f"Todos modified {n}"))
        t.turn(bash(f"make step{n}", "ok"))
    leaf = t.say("done")["uuid"]
    shown = resume_chain(t.entries).shown
    kept, report = drop_superseded_todos(t.entries, shown)
    assert report["todos"] == 2 and report["todo_chars"] > 0
    assert [b["content"] for b in results_of(kept)] == ["ok", "ok", "Todos modified 2", "ok"]
    _holds(kept, leaf)


def test_the_old_output_of_a_command_run_again_is_left_out_the_newest_stays():
    t = Transcript()
    t.turn(bash("pytest -q", "F" * 500 + " 3 failed"))
    t.turn(bash("git push", "rejected " * 30))
    t.turn(("Bash", {"command": "pytest -q", "run_in_background": True}, "started shell b1 " * 10))
    t.turn(bash("pytest -q", "." * 500 + " 3 passed"))
    t.turn(bash("ls", "a b c"))
    t.say("done")
    report = drop_rerun_outputs(t.entries, keep_recent=1)
    first, push, background, newest, _ls = (b["content"] for b in results_of(t.entries))
    assert first == RERUN_NOTE and report["reruns"] == 1 and report["rerun_chars"] > 400
    assert push.startswith("rejected") and background.startswith("started")  # run once; a background start
    assert newest.endswith("3 passed")


def test_a_rerun_inside_the_window_stays():
    t = Transcript()
    t.turn(bash("pytest -q", "F" * 500))
    t.turn(bash("pytest -q", "." * 500))
    assert drop_rerun_outputs(t.entries, keep_recent=2)["reruns"] == 0


async def test_the_store_leaves_all_of_it_out_and_reports_it(tmp_path):
    t = Transcript()
    t.think("plan A" + PLAN)
    t.turn(("TodoWrite", {"todos": [{"content": "a", "status": "pending", "activeForm": "a"}]}, "Todos modified"))
    t.turn(bash("pytest -q", "F" * 500))
    t.turn(("TodoWrite", {"todos": [{"content": "a", "status": "completed", "activeForm": "a"}]}, "Todos modified"))
    t.turn(bash("pytest -q", "." * 500))
    leaf = t.say("done")["uuid"]
    store = PruningSessionStore(tmp_path / "s.db", tmp_path, policy=TrimPolicy(keep_recent=1))
    await store.append(KEY, copy.deepcopy(t.entries))
    loaded = await store.load(KEY)
    r = store.last_report
    assert (r["thinking"], r["todos"], r["reruns"]) == (1, 1, 1)
    assert r["shown_after"] < r["shown_before"] - len(PLAN) - 400
    line = store.trim_report()
    for label in ("old thinking blocks dropped", "superseded todo lists dropped", "outputs of commands run again"):
        assert label in line
    _holds(loaded, leaf)
    store.close()

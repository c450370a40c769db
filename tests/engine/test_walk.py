"""A run's trees cannot stall the host (issue 37, findings 1 and 2): the walk behind the workbench
index and the removal of a run's folders meet what a prompt-injected run plants.

A folder swapped for a FIFO between the listing and the open is skipped, never waited on; 100,000
empty folders cost a bounded walk that says it was cut short; a 2,000-deep chain neither raises
``RecursionError`` nor fails a step, and is removed; work on a run's files that overruns fails its
step with the reason, and a call stuck for good in the run-files pool keeps no process alive.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from engine import AgentSpec, FlowerError, Runtime
from engine.lang import speaking
from engine._agents import workbench as workbench_module
from engine._agents.workbench import Workbench
from engine import _file_work
from engine._file_work import OVERRAN
from engine.host import file_work, remove_tree
from engine._tree import REMOVE_DEPTH, WALK_DEPTH, WALK_ENTRIES, walk
from engine.testing import prompt_contains, text, tool_use

from tests.helpers.hostile_trees import FifoSwap, deep_chain, empty_folders

CAP_S = 120  # a blocked open never returns at all; a loaded machine still walks in well under this


def _in_thread(fn) -> tuple[threading.Event, list]:
    done, box = threading.Event(), []
    threading.Thread(target=lambda: (box.append(fn()), done.set()), daemon=True).start()
    return done, box


def test_a_folder_swapped_for_a_fifo_between_listing_and_open_is_skipped_not_waited_on(tmp_path):
    wb = Workbench(tmp_path).ensure()
    (wb.notes / "a.md").write_text("# a note\n")
    for name in ("z1", "z2"):
        (wb.notes / name).mkdir()
    swap = FifoSwap(wb.notes, limit=1).install()
    try:
        done, box = _in_thread(wb.refresh)
        finished = done.wait(CAP_S)
    finally:
        swap.undo()
        swap.release()  # the old walk's thread waits in open(): let it go before failing
    assert finished, "the workbench index blocked on a folder swapped for a FIFO"
    assert swap.swapped == [wb.notes / "z1"]
    assert "notes/a.md — a note" in box[0] and "z1" not in box[0]


def test_the_walk_says_why_it_skipped_a_swapped_folder(tmp_path):
    (tmp_path / "notes" / "z").mkdir(parents=True)
    swap = FifoSwap(tmp_path / "notes").install()
    try:
        done, box = _in_thread(lambda: walk(tmp_path, tmp_path / "notes"))
        finished = done.wait(CAP_S)
    finally:
        swap.undo()
        swap.release()
    assert finished
    assert box[0].skipped == ("z (no longer a folder)",)


def test_100000_empty_folders_cost_a_bounded_walk_that_says_so(tmp_path):
    wb = Workbench(tmp_path).ensure()
    empty_folders(wb.notes, 100_000)
    (wb.scripts / "run.py").write_text("# desc: runs it\n")
    listing = walk(wb.anchor, wb.notes)
    assert listing.cut == {"entries"} and listing.seen == WALK_ENTRIES + 1  # folders count like files
    with speaking("en"):
        index = wb.index()
    assert f"listing cut short (over {WALK_ENTRIES} entries)" in index
    assert "scripts/run.py — runs it" in index  # the other folders are listed as before
    assert "listing cut short" not in index.split("## notes/")[0]
    (wb.artifacts / "a" / "b").mkdir(parents=True)
    (wb.artifacts / "top.md").write_text("x")
    (wb.artifacts / "a" / "b" / "deep.md").write_text("x")
    out_of_time = walk(wb.anchor, wb.artifacts, budget_s=0)  # the time budget stops it too, and says so
    assert out_of_time.cut == {"time"} and [f for f, _ in out_of_time.files] == ["top.md"]


def test_a_2000_deep_chain_raises_nothing_and_is_said(tmp_path):
    wb = Workbench(tmp_path).ensure()
    first = deep_chain(wb.notes, 2000)
    try:
        (first / "d" / "kept.md").write_text("# near the top\n")
        with speaking("en"):
            block = wb.prompt_block()  # at every CLI start: RecursionError here failed the run
        assert "notes/d/d/kept.md — near the top" in block
        assert f"listing cut short (folders deeper than {WALK_DEPTH} not entered)" in block
        with speaking("zh"):
            assert f"未进入深于 {WALK_DEPTH} 层的文件夹" in wb.index()
    finally:
        remove_tree(wb.notes, first)  # pytest's own clean-up of tmp_path recurses (RecursionError)


def test_a_2000_deep_tree_is_removed_without_following_its_links(tmp_path):
    thread = tmp_path / "thread"
    tree = thread / "repo"
    tree.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the run's")
    first = deep_chain(tree, 2000)
    (first / "note.txt").write_text("x")
    (first / "d" / "out").symlink_to(outside, target_is_directory=True)
    os.mkfifo(first / "pipe")
    empty_folders(tree, 300)
    try:
        assert remove_tree(thread, tree) is True
    finally:
        if tree.exists():
            subprocess.run(["rm", "-rf", str(tree)], check=False)  # pytest's clean-up recurses: not left to it
    assert not tree.exists() and (outside / "keep.txt").read_text() == "not the run's"
    assert remove_tree(thread, tree) is False  # gone already
    (thread / "link").symlink_to(outside, target_is_directory=True)
    assert remove_tree(thread, thread / "link") is True  # the link goes, never what it names
    assert (outside / "keep.txt").exists()


NOBODY = 65534


def as_a_plain_user(folder: Path, check) -> None:
    """``check(base)`` where file modes bind, with ``base`` an empty folder of that user: here when
    the tests run as a plain user; as root (whom no mode stops) in a forked child that became
    ``nobody``, its folder reached through /proc (tmp_path's parents are root's, 0700)."""
    base = folder / "plain"
    base.mkdir()
    if os.geteuid() != 0:
        check(str(base))
        return
    os.chown(base, NOBODY, NOBODY)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    pid = os.fork()
    if pid == 0:  # the child only makes and removes files, then leaves without pytest's exit hooks
        code = 1
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            check(f"/proc/self/fd/{fd}")
            code = 0
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(fd)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0, "see the child's traceback above"


def test_folders_a_run_took_the_permissions_of_are_still_removed(tmp_path):
    """The bot runs as its runs' user, so only a folder's mode stops it: a run's ``chmod 000`` or
    ``500`` on its own folders (one past the depth removal moves up, too) failed ``remove_tree``
    and git's own delete, so ``/new`` in that thread and ``flower-bot cleanup`` for every thread
    stopped on it."""
    def attack(base: str) -> None:
        ws = Path(base, "ws")
        (ws / "locked" / "inner").mkdir(parents=True)
        (ws / "locked" / "inner" / "f.txt").write_text("x")
        (ws / "read-only").mkdir()
        (ws / "read-only" / "g.txt").write_text("y")
        deep_chain(ws, REMOVE_DEPTH + 5)
        deep = ws.joinpath(*["d"] * (REMOVE_DEPTH + 1))
        os.chmod(deep, 0o500)
        os.chmod(deep.parent, 0o500)
        os.chmod(ws / "locked", 0)
        os.chmod(ws / "read-only", 0o500)
        os.chmod(ws, 0o500)
        assert remove_tree(base, ws) is True
        assert not os.path.lexists(ws)

    as_a_plain_user(tmp_path, attack)


async def test_file_work_that_overruns_fails_with_what_and_the_fix():
    gate = threading.Event()
    try:
        with pytest.raises(FlowerError) as caught:
            await file_work(gate.wait, what="the slow thing", timeout=0.2)
    finally:
        gate.set()
    said = str(caught.value)
    assert "the slow thing took longer than 0.2 s" in said and "remove it, then go on" in said
    assert await file_work(lambda: 42, what="a quick one") == 42


def test_a_call_stuck_for_good_keeps_no_process_alive(tmp_path):
    """The pool's threads are daemons no exit hook joins: a process whose file work sits in a
    FIFO's open forever still ends (a ThreadPoolExecutor's atexit join would hang it), and the
    pool replaces the stuck threads so other work goes on."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    program = textwrap.dedent(f"""
        import asyncio
        from engine.host import file_work
        from engine._errors import FlowerError

        async def main():
            for n in range(6):  # more stuck calls than the pool has threads
                try:
                    await file_work(open, {str(fifo)!r}, what="a FIFO's open", timeout=0.2)
                except FlowerError:
                    pass
            print("still serving:", await file_work(sum, [1, 2, 3], what="a sum", timeout=60), flush=True)

        asyncio.run(main())
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=CAP_S,
                          cwd=Path(__file__).resolve().parents[2])
    assert (done.returncode, done.stdout.strip()) == (0, "still serving: 6"), done.stderr


@pytest.fixture
def slow_walks(monkeypatch):
    """The workbench's walk made to hang (as a stuck system call would) from its ``n``-th call,
    and the run-files pool's timeout made short; released at the end."""
    gate = threading.Event()
    calls = []
    real = workbench_module.walk

    def hang_from(n: int) -> None:
        def walk_(*args, **kwargs):
            calls.append(1)
            if len(calls) >= n:
                gate.wait(CAP_S)
            return real(*args, **kwargs)
        monkeypatch.setattr(workbench_module, "walk", walk_)

    monkeypatch.setattr(_file_work, "TIMEOUT_S", 1.0)
    yield hang_from
    gate.set()


SPEC = AgentSpec(name="writer", instructions="", allowed_tools=["Write", "Read"], permission_mode="acceptEdits")


async def test_an_index_that_overruns_at_the_cli_start_fails_the_step_with_the_reason(tmp_path, fake_model,
                                                                                    slow_walks):
    ws = tmp_path / "ws"
    ws.mkdir()
    fake_model.rule(text("never asked"), when=prompt_contains("[overrun start]"))
    slow_walks(1)
    rt = Runtime(workspace=ws, run_dir=tmp_path / "runs", workbench=True)
    try:
        result = await rt.run(SPEC, "[overrun start] write a note")
    finally:
        rt.close()
    assert not result.ok and result.error_kind == OVERRAN and result.attempts == 1
    assert "building the workbench index took longer than 1 s" in result.error
    assert fake_model.message_requests == []  # no CLI was started on a half-built prompt


async def test_an_index_refresh_that_overruns_in_a_hook_fails_the_step_with_the_reason(tmp_path, fake_model,
                                                                                     slow_walks):
    ws = tmp_path / "ws"
    ws.mkdir()
    note = tmp_path / "runs" / "workbench" / "notes" / "n.md"
    fake_model.rule(tool_use("Write", {"file_path": str(note), "content": "# a note\n"}),
                    text("wrote it"), when=prompt_contains("[overrun hook]"))
    slow_walks(4)  # the three folders at the CLI start pass; the refresh after the Write hangs
    rt = Runtime(workspace=ws, run_dir=tmp_path / "runs", workbench=True)
    try:
        result = await rt.run(SPEC, "[overrun hook] write a note")
    finally:
        rt.close()
    assert not result.ok and result.error_kind == OVERRAN and result.attempts == 1
    assert "rebuilding the workbench index took longer than 1 s" in result.error
    assert note.read_text() == "# a note\n"  # the Write itself happened; its index did not

"""One thread's run attacks the host through its files (issue 37, findings 1 and 2); every other
thread is still served, through the real bot and the real CLI.

- The FIFO swap: a run's workers write in its workbench at once, and each time the host lists
  ``notes/`` one of its folders becomes a FIFO (``FifoSwap``: the deterministic stand-in for the
  inotify race). Before, each index refresh's thread waited forever in ``open`` and enough of them
  used up asyncio's default executor: every ``to_thread`` of every thread queued for good, and the
  bot could not stop on SIGINT. Here another thread's mention is answered, in process and in the
  bot's own process, which then stops cleanly on SIGINT.
- 100,000 empty folders and a 2,000-deep chain in a run's workbench: before, each CLI start walked
  them on the event loop (1.75 s stalls) and the chain failed the run with ``RecursionError``.
  Here the run ends well and says its listing was cut short. Durations are not asserted (tests
  never do): the event loop's worst lag while the runs go on is printed here and measured in
  ``python -m bench walk`` (bench/RESULTS.md); this test checks what must hold whatever the
  machine: no run fails, and the other thread is answered.
"""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import time
from pathlib import Path

import pytest

from bot.core.thread import ThreadKey
from engine._lang import zh
from engine._tree import WALK_DEPTH, WALK_ENTRIES
from engine.host import remove_tree
from engine.testing import hold, mentions, reply, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, WORKER
from tests.bot.helpers.app import (
    ACHIEVED,
    BRIEF,
    CHANNEL,
    answer_first_option,
    marked_done,
    posted,
    script,
    workspace,
)
from tests.bot.helpers.process import BotProcess, bot_env
from tests.helpers.hostile_trees import FifoSwap, deep_chain, empty_folders

# as many walks as asyncio's default executor has threads (Python 3.11: min(32, cores + 4)): on
# the old code each one was a thread lost for good, and all of them starved the whole bot
WRITERS = min(32, (os.cpu_count() or 1) + 4)
CAP_S = 240.0  # generous: whole runs on two shared cores; nothing waits this long when it works
DONE = "Done: the goal is achieved"


def attacking_run(fm, mark: str) -> None:
    """The run of a mention holding ``mark``: its coordinator starts WRITERS workers at once, and
    each makes the folders z1.. in notes/ and writes a note there (one index refresh each)."""
    folders = " ".join(f".flower/notes/z{i}" for i in range(1, WRITERS + 1))
    fm.rule(text(BRIEF.replace("写一个 hello.txt", f"写一个 hello.txt {mark}")), when=[CLARIFIER, mentions(mark)])
    agents = [tool_use("Agent", {"subagent_type": "coder", "description": f"note {i}",
                                 "prompt": f"{mark}: write note {i}"}).blocks[0] for i in range(WRITERS)]
    fm.rule(reply(*agents), text("round 1 done"), when=[COORDINATOR, mentions(mark)], repeat_last=True)
    fm.rule(tool_use("Bash", {"command": f"mkdir -p {folders}; true", "description": "folders"}),
            tool_use("Write", {"file_path": ".flower/notes/note.md", "content": "# a note\n"}),
            text("noted"), when=[WORKER, mentions(mark)])


def fifos(folder: Path) -> int:
    try:
        return sum(1 for p in folder.iterdir() if stat.S_ISFIFO(p.lstat().st_mode))
    except OSError:
        return 0


async def until(check, what: str, cap: float = CAP_S) -> None:
    """Poll ``check`` (a condition on files: nothing signals it) until it holds, at most ``cap`` s."""
    try:
        async with asyncio.timeout(cap):
            while not check():
                await asyncio.sleep(0.05)
    except TimeoutError:
        raise AssertionError(f"{what}: not within {cap:g} s") from None


async def other_thread_answered(slack, cap: float = CAP_S) -> str:
    """A mention in another thread, its question answered: its run ends with the summary."""
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event)
    await answer_first_option(slack, event["ts"])
    await posted(slack, event["ts"], DONE, timeout=cap)
    return event["ts"]


async def test_a_run_swapping_folders_for_fifos_starves_no_other_thread(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    attacking_run(fake_model, "[fifo-race]")
    script(fake_model, verdicts=(ACHIEVED,))
    bot = await make_bot()
    attack = slack.mention(CHANNEL, "写个 hello.txt [fifo-race]")
    notes = workspace(tmp_path, attack["ts"]) / ".flower" / "notes"
    swap = FifoSwap(notes, limit=WRITERS).install()
    try:
        await slack.send_event(attack)
        await until(lambda: len(swap.swapped) == WRITERS, "every folder swapped")
        await other_thread_answered(slack)
        await posted(slack, attack["ts"], DONE)  # the attacking run itself goes on too
        await marked_done(bot, ThreadKey("T0001", CHANNEL, attack["ts"]))
    finally:
        swap.undo()
        swap.release()  # on the old code: the walks stuck in open() go on, so the test can end
    index = (notes.parent / "INDEX.md").read_text()
    assert "notes/note.md — a note" in index and "z1" not in index


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")
async def test_the_bot_process_under_the_fifo_swap_answers_and_stops_on_sigint(slack_env, fake_model, tmp_path):
    slack = slack_env
    attacking_run(fake_model, "[fifo-race]")
    script(fake_model, verdicts=(ACHIEVED,))
    attack = slack.mention(CHANNEL, "写个 hello.txt [fifo-race]")
    notes = workspace(tmp_path, attack["ts"]) / ".flower" / "notes"
    env = {**bot_env(slack, fake_model, tmp_path), "TEST_FIFO_SWAP": str(notes), "TEST_FIFO_SWAP_LIMIT": str(WRITERS)}
    bot = BotProcess(tmp_path, env, module="tests.bot.helpers.swapping_bot")
    bot.start()
    try:
        await slack.wait_connected(1)
        await slack.send_event(attack)
        await until(lambda: fifos(notes) == WRITERS, "every folder swapped")
        await other_thread_answered(slack)
        os.killpg(bot.proc.pid, signal.SIGINT)  # a service manager's stop
        code = await asyncio.wait_for(asyncio.to_thread(bot.proc.wait), 60)
        assert code == 0, bot.logs()[-4000:]
    finally:
        bot.kill()
        for fifo in notes.glob("z*"):  # a child's walk stuck on one (the old code) goes on and dies
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        print(bot.logs()[-4000:])


async def test_huge_and_deep_trees_in_a_workbench_fail_no_run_and_stall_no_thread(make_bot, slack_env, fake_model,
                                                                                tmp_path):
    slack = slack_env
    held = hold()
    mark = "[huge-trees]"
    fake_model.rule(text(BRIEF.replace("写一个 hello.txt", f"写一个 hello.txt {mark}"), fault=held),
                    when=[CLARIFIER, mentions(mark)])
    script(fake_model, verdicts=(ACHIEVED,))
    bot = await make_bot()
    attack = slack.mention(CHANNEL, f"写个 hello.txt {mark}")
    await slack.send_event(attack)
    await held.arrived()  # the run's first CLI is up: the next ones walk what is planted now
    workbench = workspace(tmp_path, attack["ts"]) / ".flower"
    await asyncio.to_thread(empty_folders, workbench / "scripts", 100_000)
    chain = await asyncio.to_thread(deep_chain, workbench / "notes", 2000)

    lags: list[float] = []

    async def probe() -> None:  # how late a 10 ms sleep wakes: the event loop's stalls
        while True:
            start = time.perf_counter()
            await asyncio.sleep(0.01)
            lags.append(time.perf_counter() - start - 0.01)

    prober = asyncio.create_task(probe())
    try:
        held.release()
        await other_thread_answered(slack)
        await posted(slack, attack["ts"], DONE, timeout=CAP_S)  # no RecursionError failed the run
        await marked_done(bot, ThreadKey("T0001", CHANNEL, attack["ts"]))
    finally:
        prober.cancel()
        held.release()
        await asyncio.to_thread(remove_tree, chain.parent, chain)  # pytest's clean-up of tmp_path recurses
    print(f"event loop: worst lag {max(lags):.3f} s over {len(lags)} probes")
    shown = "".join(str(r.body) for r in fake_model.message_requests if COORDINATOR(r.body) and mark in str(r.body))
    for why in (zh.INDEX_CUT_WHY["entries"].format(n=WALK_ENTRIES), zh.INDEX_CUT_WHY["depth"].format(n=WALK_DEPTH)):
        assert why in shown  # the model is told its listing was cut short, and why

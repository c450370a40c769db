"""SIGTERM / SIGHUP: the handler only notes the signal, the event loop rescues; nothing hangs.

Two SIGTERMs in a row (GNU ``timeout`` signals the command, then its whole group) used to
deadlock ``flower``: the handler re-entered ``Manifest.write`` and blocked on its own ``flock``,
and the hung process kept the lock from every later run in that folder.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import time

import pytest

from engine._run.manifest import Manifest, StepResult, lock_wait, read_manifest
from engine.testing import hold, prompt_contains, text
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE

# A host whose signal lands while its main thread holds the manifest lock, as Manifest.write does
# for a few milliseconds at every step's end: the rescue must wait for the lock to be let go.
IN_WRITE = """
import asyncio, os, signal, sys
from engine._run import signals
from engine._run.manifest import Manifest, StepResult, _locked

class Stub:
    def __init__(self, path):
        self.manifest = Manifest(path)
    def rescue(self):
        self.manifest.write([StepResult(step="held", error="killed-by-signal")])

async def main(path):
    stub = Stub(path)
    signals.watch(stub)
    with _locked(stub.manifest.path):
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGTERM)
        sum(range(100000))  # bytecodes: a Python-level handler runs here, inside the lock
    print("lock released", flush=True)
    await asyncio.sleep(60)
    print("never killed", flush=True)

signals.install()
asyncio.run(main(sys.argv[1]))
"""

BRIEF = "## 目标\n写 hello\n## 验收标准\n有 hello\n## 边界\n无\n## 未知与假设\n无"
GOAL = "## 目标\n有 hello\n## 判定清单\n- 有 hello"
ACHIEVED = "## 结论\n达成\n## 理由\n好\n## 未通过\n无"
CAP_S = 30  # generous for a busy machine; a deadlock never ends, so any cap proves it
AGAIN_S = 600  # a whole run (several CLI starts): ~60 s alone, past 120 s with two suites beside it


def test_two_sigterms_while_the_manifest_lock_is_held_exit_once_it_is_released(tmp_path):
    path = tmp_path / "runs" / "manifest.json"
    proc = subprocess.Popen([sys.executable, "-c", IN_WRITE, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        code = proc.wait(CAP_S)
    finally:
        proc.kill()
    out = proc.stdout.read()
    assert code == -signal.SIGTERM, out
    assert "lock released" in out and "never killed" not in out  # the loop rescued, after the lock
    assert [(r["step"], r["error"]) for r in read_manifest(path)] == [("held", "killed-by-signal")]


STUCK = """
import asyncio, sys, time
from engine._run import signals

async def main():
    print("stuck", flush=True)
    time.sleep(60)  # a loop blocked by synchronous code never gets to run the rescue
    print("never killed", flush=True)

signals.install()
asyncio.run(main())
"""


def test_a_second_signal_a_second_later_ends_a_stuck_loop_at_once():
    proc = subprocess.Popen([sys.executable, "-c", STUCK], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "stuck"
        proc.send_signal(signal.SIGTERM)
        time.sleep(1.2)  # the escalation is defined by this gap: past ESCALATE_AFTER_S
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(CAP_S) == -signal.SIGTERM
    finally:
        proc.kill()
    assert "never killed" not in proc.stdout.read()


HOLDER = ("import fcntl, sys, time\nf = open(sys.argv[1], 'a')\nfcntl.flock(f, fcntl.LOCK_EX)\n"
          "print('held', flush=True)\ntime.sleep(120)\n")


def test_a_stuck_holder_of_the_manifest_lock_costs_a_row_not_a_hang(tmp_path, caplog):
    path = tmp_path / "runs" / "manifest.json"
    path.parent.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path) + ".lock"], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        started = time.monotonic()
        with lock_wait(0.3), caplog.at_level(logging.WARNING, logger="engine._run.manifest"):
            Manifest(path).write([StepResult(step="s")])
        assert time.monotonic() - started < CAP_S
        assert not path.exists()
        assert any("stayed locked" in r.getMessage() for r in caplog.records)
    finally:
        holder.kill()
        holder.wait()
    Manifest(path).write([StepResult(step="s")])  # the kernel dropped the dead holder's lock
    assert [r["step"] for r in read_manifest(path)] == ["s"]


def _script(fm, held):
    fm.rule(text(BRIEF), when=CLARIFIER)
    fm.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], repeat_last=True)
    fm.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], repeat_last=True)
    fm.rule(text("work done", fault=held), when=COORDINATOR, repeat_last=True)


def _flower(ws, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "engine.cli", *args], cwd=ws, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.timeout(AGAIN_S + 300)
@pytest.mark.parametrize("gap_s", [0.0, 0.002, 0.05])
def test_two_sigterms_mid_step_exit_and_the_next_flower_in_the_folder_works(fake_model, tmp_path, gap_s):
    ws = tmp_path / "ws"
    ws.mkdir()
    held = hold()
    _script(fake_model, held)
    proc = _flower(ws, "写 hello")
    try:
        held.wait_arrived()  # the coordinator's step is in flight
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        time.sleep(gap_s)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(CAP_S)
        took = time.monotonic() - started
    finally:
        proc.kill()
        held.release()
    print(f"two SIGTERMs {gap_s * 1000:g} ms apart: flower exited in {took:.3f}s")
    assert code == -signal.SIGTERM, proc.stdout.read()[-3000:]
    rows = read_manifest(ws / "runs" / "manifest.json")
    assert ("干活", "killed-by-signal") in [(r["step"], r["error"]) for r in rows]

    again = _flower(ws, "再来一次")  # no lock left behind: the next run in the folder goes through
    try:
        assert again.wait(AGAIN_S) == 0, again.stdout.read()[-3000:]
    finally:
        again.kill()
    assert "== 结束:达成" in again.stdout.read()

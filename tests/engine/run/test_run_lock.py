"""One live run per workspace: a second run is refused at once, a dead holder frees it (kill -9)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from engine import StarterRun, WorkspaceBusyError
from engine._run.run_lock import run_lock

HOLDER = ("import sys, time; from engine._run.run_lock import run_lock\n"
          "with run_lock(sys.argv[1]):\n    print('held', flush=True); time.sleep(120)\n")


@pytest.fixture
def holder(tmp_path):
    """Another process holding ``tmp_path/ws/runs``'s lock; killed with SIGKILL by the test or at teardown."""
    run_dir = tmp_path / "ws" / "runs"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)], stdout=subprocess.PIPE, env=env)
    assert proc.stdout.readline().strip() == b"held"
    yield proc
    proc.kill()
    proc.wait()


async def test_a_second_run_in_the_same_workspace_is_refused_before_anything_runs(fake_model, tmp_path, holder):
    ws = tmp_path / "ws"
    with pytest.raises(WorkspaceBusyError, match=f"process {holder.pid}"):
        await StarterRun(ws, run_dir=ws / "runs").run("write hello.txt")
    assert fake_model.message_requests == []  # refused before a CLI started


def test_the_lock_is_free_once_its_holder_is_killed(tmp_path, holder):
    run_dir = tmp_path / "ws" / "runs"
    with pytest.raises(WorkspaceBusyError):
        with run_lock(run_dir):
            pass
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    with run_lock(run_dir):
        with pytest.raises(WorkspaceBusyError, match=f"process {os.getpid()}"):  # a second run in this process
            with run_lock(run_dir):
                pass

"""Runtime across processes: SIGKILL and SIGTERM mid-step, and concurrent manifest writers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from engine._run.manifest import read_manifest
from engine._stores.sqlite_read import session_exists
from engine.testing import hold, prompt_contains, text, tool_use

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "seed.txt").write_text("banana\n")
    return ws


def start_flow(ws: Path) -> asyncio.subprocess.Process:
    # Its own process group, so the kill takes the CLI child along, as a machine restart or a
    # service manager's kill would (an orphaned CLI would hold the pipes open).
    return asyncio.create_subprocess_exec(
        sys.executable, str(PROGRAMS / "seed_flow.py"), str(ws), str(ws / "runs"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def kill_group(proc, sig=signal.SIGKILL) -> None:
    os.killpg(proc.pid, sig)


async def wait_until(check, proc, what: str = "the condition"):
    """Poll a file-system condition while ``proc`` runs (no event to wait on across processes)."""
    for _ in range(600):
        value = check()
        if value:
            return value
        assert proc.returncode is None, f"the flow exited before {what}"
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what} never happened")


def read_lineage(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if data.get("steps") else None


async def wait_for_lineage(path: Path, proc) -> dict:
    """The lineage must already name the session while the step is still held mid-way."""
    return await wait_until(lambda: read_lineage(path), proc, f"{path} named a session")


async def test_sigkill_mid_first_step_then_next_run_resumes_that_session(fake_model, ws):
    # Held on the step's second model call: by then the CLI has written the session's first
    # entries (it writes nothing before the first answer), so there is a session to resume.
    held = hold()
    fake_model.rule(
        tool_use("Read", {"file_path": str(ws / "seed.txt")}), text("banana", fault=held),
        when=prompt_contains("seed.txt"))
    proc = await start_flow(ws)
    await held.arrived()
    lineage = await wait_for_lineage(ws / "runs" / "lineage.json", proc)
    sid = lineage["steps"]["取词"]
    await wait_until(lambda: session_exists(ws / "runs" / "sessions.db", sid), proc)
    kill_group(proc)
    await proc.wait()
    held.release()
    proc2 = await start_flow(ws)
    out, err = await proc2.communicate()
    assert proc2.returncode == 0, err.decode()[-2000:]
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["sessions"]["取词"] == sid and result["woke"] == 2 and result["ok"]


async def test_sigterm_mid_step_records_killed_by_signal(fake_model, ws):
    held = hold()
    fake_model.rule(text("banana", fault=held), when=prompt_contains("seed.txt"))
    proc = await start_flow(ws)
    await held.arrived()
    await wait_for_lineage(ws / "runs" / "lineage.json", proc)
    kill_group(proc, signal.SIGTERM)
    code = await proc.wait()
    held.release()
    assert code == -signal.SIGTERM  # died as the default action would
    rows = read_manifest(ws / "runs" / "manifest.json")
    assert [(r["step"], r["error"]) for r in rows] == [("取词", "killed-by-signal")]
    assert rows[0]["session_id"]


def test_two_processes_writing_one_manifest_keep_every_row(tmp_path):
    path = tmp_path / "runs" / "manifest.json"
    procs = [subprocess.Popen([sys.executable, str(PROGRAMS / "manifest_writer.py"), str(path), label, "40"])
             for label in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    steps = sorted(r["step"] for r in read_manifest(path))
    assert steps == sorted([f"a-{i}" for i in range(40)] + [f"b-{i}" for i in range(40)])

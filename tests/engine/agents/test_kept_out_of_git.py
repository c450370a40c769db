"""The engine's own files in a workspace (workbench, spilled tool output) never reach git."""

from __future__ import annotations

import subprocess

from engine.authoring import Workbench
from engine._resume.policies import TrimPolicy
from engine._resume.stores import TrimmingSessionStore
from tests.engine.stores.recorded import build_session
from tests.engine.stores.shapes import bash


def git_status(repo) -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo,
                          capture_output=True, text=True, check=True).stdout


def test_a_workbench_and_spilled_output_are_invisible_to_git(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "app.py").write_text("print('hi')\n")
    Workbench(repo).ensure()
    (repo / ".flower" / "notes" / "decision.md").write_text("a decision\n")
    store = TrimmingSessionStore(tmp_path / "s.db", repo, TrimPolicy(keep_recent=0, min_chars=10))
    entries = build_session([bash("cat .env", "ANTHROPIC_API_KEY=sk-ant-" + "x" * 3000)])
    store.shape(entries, main_thread=True)
    assert list((repo / ".flower" / "spill").glob("*.txt")), "nothing was spilled"
    assert git_status(repo) == "?? app.py\n"

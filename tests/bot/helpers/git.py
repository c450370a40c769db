"""Real git for the repository tests: run it, commit a file, ask for a branch, and a checkout
whose origin is a bare repository.

``checkout`` here is a fixture (import it into the test module) of the end-to-end tests, a
``(checkout, bare origin)`` pair; tests/bot/repos/conftest.py has the repository tests' own
``remote``, ``checkout``, ``home`` and ``binding``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def sh(*args: str, cwd: Path | None = None) -> str:
    argv = ["git"] + (["-C", str(cwd)] if cwd else []) + list(args)
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


def commit_file(repo: Path, name: str, text: str, msg: str) -> str:
    (repo / name).write_text(text)
    sh("add", name, cwd=repo)
    sh("commit", "-q", "-m", msg, cwd=repo)
    return sh("rev-parse", "HEAD", cwd=repo)


def branch_exists(repo: Path, branch: str) -> bool:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet",
                           f"refs/heads/{branch}"], capture_output=True).returncode == 0


def seeded_bare(bare: Path, repo: Path) -> Path:
    """A bare repository at ``bare`` whose ``main`` has one commit (README.md), pushed from its clone ``repo``."""
    bare.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    subprocess.run(["git", "clone", "-q", str(bare), str(repo)], check=True, capture_output=True)
    sh("checkout", "-q", "-b", "main", cwd=repo)
    commit_file(repo, "README.md", "hello\n", "first")
    sh("push", "-q", "origin", "main", cwd=repo)
    return bare


@pytest.fixture
def checkout(tmp_path) -> tuple[Path, Path]:
    """A local checkout on ``main`` (one commit) whose origin is a bare repository."""
    repo = tmp_path / "project"
    return repo, seeded_bare(tmp_path / "origin.git", repo)

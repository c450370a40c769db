"""The repository tests' git repositories (tests/bot/repos/test_repos.py and test_git_hostile.py):
a bare "remote", a checkout of it, a home, and a binding of either. Real git in tmp_path; the tests
take ``git_identity`` (tests/bot/conftest.py) for a committer."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.repos.bindings import Bindings
from tests.bot.helpers.git import commit_file, sh


@pytest.fixture
def remote(tmp_path) -> Path:
    """A bare repository with ``main`` (one commit) and ``dev`` (one more)."""
    seed = tmp_path / "seed"
    sh("init", "-q", "-b", "main", str(seed))
    commit_file(seed, "README.md", "hello\n", "first")
    sh("branch", "dev", cwd=seed)
    bare = tmp_path / "remote.git"
    sh("clone", "-q", "--bare", str(seed), str(bare))
    return bare


@pytest.fixture
def checkout(tmp_path, remote) -> Path:
    path = tmp_path / "checkout"
    sh("clone", "-q", str(remote), str(path))
    sh("branch", "-q", "--no-track", "dev", "origin/dev", cwd=path)  # a checkout branches from local branches
    return path


@pytest.fixture
def home(tmp_path) -> Path:
    return tmp_path / "home"


@pytest.fixture(params=["checkout", "url"])
def binding(request, home, checkout, remote):
    source = str(checkout) if request.param == "checkout" else remote.as_uri()
    return Bindings(home).bind("C1", source)

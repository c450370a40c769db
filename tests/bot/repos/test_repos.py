"""Channel repositories and thread worktrees, on real local git repositories (a bare "remote" + a
clone) in tmp_path: nothing is mocked, every assertion reads git or the disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import engine
import engine.authoring
from bot.errors import RepoError
from bot.repos.bindings import Bindings, clone_name, fetch, is_url
from bot.repos.worktrees import (
    branch_diff,
    cleanup,
    open_worktree,
    push,
    remove_worktree,
    slugify,
    summary,
    worktree_at,
)
from tests.bot.helpers.git import branch_exists, commit_file, sh

pytestmark = pytest.mark.usefixtures("git_identity")  # tests/bot/conftest.py
# remote, checkout, home and binding: fixtures in tests/bot/repos/conftest.py


def snapshot(repo: Path) -> tuple[str, str, str]:
    """What must never change in a bound checkout: HEAD, its branch, its status."""
    return (sh("rev-parse", "HEAD", cwd=repo), sh("symbolic-ref", "HEAD", cwd=repo),
            sh("status", "--porcelain", cwd=repo))


# --- binding ---------------------------------------------------------------------------------

def test_bind_checkout_persists(home, checkout):
    b = Bindings(home).bind("C1", str(checkout))
    assert (b.kind, b.base, b.path) == ("checkout", "main", checkout.resolve())
    assert json.loads((home / "repos.json").read_text())["C1"]["base"] == "main"
    assert Bindings(home).get("C1") == b
    assert Bindings(home).bind("C1", str(checkout / "."), base="dev").base == "dev"  # rebinding replaces
    assert Bindings(home).unbind("C1").base == "dev"
    assert Bindings(home).get("C1") is None and Bindings(home).unbind("C1") is None


def test_bind_url_clones_once(home, remote):
    url = remote.as_uri()
    b1 = Bindings(home).bind("C1", url)
    b2 = Bindings(home).bind("C2", url, base="dev")
    assert (b1.kind, b1.base, b2.base) == ("clone", "main", "dev")
    assert b1.path == b2.path and b1.path.parent == home.resolve() / "repos"
    assert [p.name for p in (home / "repos").iterdir()] == [b1.path.name]  # no temp folder left
    assert sh("remote", "get-url", "origin", cwd=b1.path) == url


def test_bind_local_bare_path_is_cloned(home, remote):
    b = Bindings(home).bind("C1", str(remote))
    assert b.kind == "clone" and b.path.is_relative_to(home.resolve() / "repos")
    assert b.base_ref == "refs/remotes/origin/main"


@pytest.mark.parametrize("source, message", [
    ("plain", "is not a git repository. Bind a folder that holds a .git"),
    ("missing", "is not a git repository"),
    ("file:///nonexistent/nothing.git",
     "could not clone 'file:///nonexistent/nothing.git': .*does not appear to be a git repository"),
    ("https://127.0.0.1:1/x.git", r"could not clone 'https://127.0.0.1:1/x.git': .*connect.*Check the URL"),
])
def test_bad_source_leaves_nothing(home, tmp_path, source, message):
    (tmp_path / "plain").mkdir()
    if not is_url(source):
        source = str(tmp_path / source)
    with pytest.raises(RepoError, match=message) as info:
        Bindings(home).bind("C1", source)
    assert source in str(info.value)
    assert not (home / "repos.json").exists() and not (home / "repos").exists()


@pytest.mark.parametrize("kind", ["checkout", "url"])
def test_unknown_base_leaves_nothing(home, checkout, remote, kind):
    source = str(checkout) if kind == "checkout" else remote.as_uri()
    with pytest.raises(RepoError, match=r"branch 'nope' does not exist.*Give one of: .*dev"):
        Bindings(home).bind("C1", source, base="nope")
    with pytest.raises(RepoError, match="not a valid branch name"):
        Bindings(home).bind("C1", source, base="a..b")
    assert not (home / "repos.json").exists() and not (home / "repos").exists()
    heads = sh("for-each-ref", "--format=%(refname:short)", "refs/heads", cwd=checkout)
    assert sorted(heads.split()) == ["dev", "main"]


@pytest.mark.parametrize("dirt", ["modified", "untracked", "staged"])
def test_dirty_checkout_refused(home, checkout, dirt):
    Bindings(home).bind("C1", str(checkout))
    if dirt == "modified":
        (checkout / "README.md").write_text("changed\n")
    elif dirt == "untracked":
        (checkout / "new.txt").write_text("x")
    else:
        (checkout / "staged.txt").write_text("x")
        sh("add", "staged.txt", cwd=checkout)
    with pytest.raises(RepoError, match=r"has uncommitted changes \(.*\).*Commit or stash"):
        Bindings(home).bind("C2", str(checkout))
    assert set(Bindings(home).all()) == {"C1"}  # the earlier binding is untouched, no new entry


def test_failed_bind_keeps_the_shared_clone(home, remote):
    first = Bindings(home).bind("C1", remote.as_uri())
    with pytest.raises(RepoError, match="branch 'nope' does not exist"):
        Bindings(home).bind("C2", remote.as_uri(), base="nope")
    assert first.path.is_dir() and set(Bindings(home).all()) == {"C1"}


def test_push_with_several_remotes_and_no_origin(home, checkout):
    sh("remote", "rename", "origin", "upstream", cwd=checkout)
    sh("remote", "add", "fork", "file:///nowhere", cwd=checkout)
    b = Bindings(home).bind("C1", str(checkout))
    wt = open_worktree(b, "t", home / "w")
    with pytest.raises(RepoError, match="has remotes fork, upstream but no origin"):
        push(b, wt, wt.branch)


def test_bad_channel_and_empty_source(home, checkout):
    with pytest.raises(RepoError, match="not a Slack channel id"):
        Bindings(home).bind("../x", str(checkout))
    with pytest.raises(RepoError, match="no repository given"):
        Bindings(home).bind("C1", "  ")
    assert not (home / "repos.json").exists()


def test_detached_checkout_needs_a_base(home, checkout):
    sh("checkout", "-q", "--detach", cwd=checkout)
    with pytest.raises(RepoError, match="detached HEAD.*Give the base branch"):
        Bindings(home).bind("C1", str(checkout))
    assert Bindings(home).bind("C1", str(checkout), base="main").base == "main"


# --- worktrees -------------------------------------------------------------------------------

def test_two_threads_never_touch_each_other(binding, home):
    before = snapshot(binding.path)
    a = open_worktree(binding, "add-a", home / "workspaces" / "t1" / "repo")
    b = open_worktree(binding, "add-b", home / "workspaces" / "t2" / "repo")
    assert (a.branch, b.branch) == ("flower/add-a", "flower/add-b")
    assert a.base_commit == b.base_commit == sh("rev-parse", binding.base_ref, cwd=binding.path)
    commit_file(a.path, "a.txt", "from a\n", "add a")
    commit_file(b.path, "b.txt", "from b\n", "add b")
    commit_file(b.path, "b2.txt", "more\n", "add b2")
    assert not (a.path / "b.txt").exists() and not (b.path / "a.txt").exists()
    ra, rb = summary(a), summary(b)
    assert [c.split(" ", 1)[1] for c in ra.commits] == ["add a"]
    assert [c.split(" ", 1)[1] for c in rb.commits] == ["add b", "add b2"]
    assert "a.txt" in ra.diffstat and "b.txt" not in ra.diffstat and "+from a" in branch_diff(a)[0]
    assert "2 files changed" in rb.diffstat and ra.uncommitted == []
    (a.path / "wip.txt").write_text("x")
    assert summary(a).uncommitted == ["?? wip.txt"]
    assert snapshot(binding.path) == before  # the bound checkout: same HEAD, same branch, clean
    assert not (binding.path / "a.txt").exists()


def test_push_updates_the_remote(binding, home, remote):
    fetch(binding)
    wt = open_worktree(binding, "feature", home / "w" / "repo")
    head = commit_file(wt.path, "f.txt", "f\n", "feature")
    assert push(binding, wt, wt.branch) == ("origin", head)
    assert sh("rev-parse", "refs/heads/flower/feature", cwd=remote) == head
    assert sh("rev-parse", "refs/heads/main", cwd=remote) == wt.base_commit  # nothing else moved


def test_push_pushes_the_branch_it_names_when_the_worktree_moved_elsewhere(binding, home, remote):
    fetch(binding)
    wt = open_worktree(binding, "feature", home / "w" / "repo")
    head = commit_file(wt.path, "f.txt", "f\n", "feature")
    sh("checkout", "-q", "-b", "elsewhere", wt.base_commit, cwd=wt.path)  # an agent moved the worktree
    commit_file(wt.path, "evil.txt", "x\n", "not what was shown")
    assert push(binding, wt, "flower/feature") == ("origin", head)
    assert sh("rev-parse", "refs/heads/flower/feature", cwd=remote) == head
    assert sh("rev-parse", "refs/heads/main", cwd=remote) == wt.base_commit
    assert "elsewhere" not in sh("branch", "--list", cwd=remote)
    with pytest.raises(RepoError, match="not this thread's branch"):
        push(binding, wt, "flower/gone")
    with pytest.raises(RepoError, match="is not a thread's flower/"):
        push(binding, wt, "main")
    assert sh("rev-parse", "refs/heads/main", cwd=remote) == wt.base_commit


def test_push_without_remote_is_refused(home, tmp_path):
    repo = tmp_path / "solo"
    sh("init", "-q", "-b", "main", str(repo))
    commit_file(repo, "x", "x", "x")
    b = Bindings(home).bind("C1", str(repo))
    wt = open_worktree(b, "t", home / "w")
    with pytest.raises(RepoError, match="has no remote.*git remote add origin"):
        push(b, wt, wt.branch)


def test_fetch_before_a_thread_sees_new_commits(home, remote, tmp_path):
    b = Bindings(home).bind("C1", remote.as_uri())
    other = tmp_path / "other"
    sh("clone", "-q", str(remote), str(other))
    new = commit_file(other, "n.txt", "n", "upstream change")
    sh("push", "-q", "origin", "main", cwd=other)
    fetch(b)
    assert open_worktree(b, "t", home / "w").base_commit == new


def test_existing_branch_refused_and_fresh_keeps_old(binding, home):
    old = open_worktree(binding, "topic", home / "t1" / "repo")
    old_head = commit_file(old.path, "o.txt", "o", "old work")
    branches = sh("for-each-ref", "--format=%(refname)", "refs/heads", cwd=binding.path)
    with pytest.raises(RepoError, match="branch 'flower/topic' already exists.*/new"):
        open_worktree(binding, "topic", home / "t2" / "repo")
    assert not (home / "t2").exists()
    assert sh("for-each-ref", "--format=%(refname)", "refs/heads", cwd=binding.path) == branches
    remove_worktree(old.path, [binding.path])  # /new: the old folder goes, its branch stays
    new = open_worktree(binding, "topic", home / "t1" / "repo", fresh=True)
    assert new.branch == "flower/topic-2" and not (new.path / "o.txt").exists()
    assert sh("rev-parse", "flower/topic", cwd=binding.path) == old_head
    assert open_worktree(binding, "topic", home / "t3", fresh=True).branch == "flower/topic-3"


def test_remove_dirty_worktree_needs_force(binding, home):
    wt = open_worktree(binding, "t", home / "w")
    (wt.path / "wip.txt").write_text("x")
    with pytest.raises(RepoError, match="force=True"):
        remove_worktree(wt.path, [binding.path])
    remove_worktree(wt.path, [binding.path], force=True)
    assert not wt.path.exists() and branch_exists(binding.path, "flower/t")


@pytest.mark.parametrize("slug", ["", "-x", "a/b", "a..b", "x" * 65, "a b"])
def test_bad_slug_refused(binding, home, slug):
    with pytest.raises(RepoError, match="cannot name a branch"):
        open_worktree(binding, slug, home / "w")
    assert not (home / "w").exists()


def test_failed_add_leaves_no_branch_or_folder(binding, home, tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(RepoError, match="could not add a worktree"):
        open_worktree(binding, "t", tmp_path / "afile" / "sub")
    assert not branch_exists(binding.path, "flower/t")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("x")
    with pytest.raises(RepoError, match="already exists and is not empty"):
        open_worktree(binding, "t", busy)
    assert not branch_exists(binding.path, "flower/t")
    assert len(sh("worktree", "list", "--porcelain", cwd=binding.path).split("\n\n")) == 1


def test_worktree_at_recovers_after_restart(binding, home):
    wt = open_worktree(binding, "t", home / "w")
    commit_file(wt.path, "x", "x", "x")
    assert worktree_at(wt.path, [binding.path]) == wt
    assert not any(p.name == "flower-base" for p in wt.path.rglob("flower-base"))  # not in the tree
    with pytest.raises(RepoError, match="not a thread worktree"):
        worktree_at(binding.path, [binding.path])


def test_cleanup_removes_worktrees_keeps_branches(home, checkout, remote, tmp_path):
    a = Bindings(home).bind("C1", str(checkout))
    u = Bindings(home).bind("C2", remote.as_uri())
    w1 = open_worktree(a, "one", home / "workspaces" / "1" / "repo")
    w2 = open_worktree(a, "two", home / "workspaces" / "2" / "repo")
    w3 = open_worktree(u, "three", home / "workspaces" / "3" / "repo")
    Bindings(home).unbind("C2")  # its clone's worktrees are still found under home/repos
    mine = tmp_path / "users-own"
    sh("worktree", "add", "-q", "-b", "mine", str(mine), cwd=checkout)  # outside home: never touched
    removed = cleanup(home, {str(w2.path)})
    assert sorted(removed) == sorted([w1.path, w3.path])
    assert not w1.path.exists() and not w3.path.exists() and w2.path.exists() and mine.exists()
    assert branch_exists(checkout, "flower/one") and branch_exists(u.path, "flower/three")
    assert cleanup(home, {str(w2.path)}) == []
    assert snapshot(checkout)[2] == ""


def test_isolated_starter_flow_accepts_a_worktree(binding, home):
    wt = open_worktree(binding, "t", home / "workspaces" / "1" / "repo")
    flow = engine.authoring.starter_flow("add a feature", workspace=wt.path, isolate=True)
    assert flow is not None
    wb = engine.authoring.starter_paths(wt.path, isolate=True).workbench.root
    assert wb.is_relative_to(wt.path.parent / ".flower-repo")
    assert sh("status", "--porcelain", cwd=wt.path) == ""  # the workbench is outside the worktree


# --- pure helpers ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, slug", [
    ("Add dark mode!", "add-dark-mode"),
    ("<@U123> fix the   login bug", "fix-the-login-bug"),
    ("Café crème", "cafe-creme"),
    ("帮我做一个网站", "thread"),
    ("", "thread"),
    ("one two three four five six seven eight", "one-two-three-four-five-six"),
    ("a" * 50, "a" * 32),
    ("see <https://x.y/z|link> now", "see-now"),
])
def test_slugify(text, slug):
    assert slugify(text) == slug


@pytest.mark.parametrize("source, url", [
    ("https://github.com/o/r.git", True), ("ssh://git@h/r", True), ("file:///tmp/r.git", True),
    ("git@github.com:o/r.git", True), ("/tmp/r", False), ("./r", False), ("~/code/r", False),
    ("C:/x", False),
])
def test_is_url(source, url):
    assert is_url(source) is url


def test_clone_name():
    assert clone_name("https://github.com/o/app.git").startswith("app-")
    assert clone_name("git@h:o/app.git") != clone_name("https://github.com/o/app.git")
    assert clone_name("https://h/o/app/") == clone_name("https://h/o/app")
    assert clone_name("file:///") .startswith("repo-")

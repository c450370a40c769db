"""Attack tests: a thread's agent plants code for the bot's own git calls to run (a rewritten
worktree ``.git`` naming its git folder, hooks and program keys in the real repository's config, an
http remote asking for credentials), and the bot's environment holds Slack tokens and a model key.
Real git throughout; each plant is first shown to be live with plain git (what the bot ran before),
then every bot operation on the thread refuses with a clear error or works on the real repository,
and no planted program ever runs."""

from __future__ import annotations

import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bot.core.thread import ThreadKey
from bot.errors import RepoError
from bot.repos.bindings import Bindings, fetch
from bot.repos.git import git_env
from bot.repos.thread_worktree import REPO_DIR, open_for_thread, thread_worktree
from bot.repos.worktrees import (
    DIFF_MAX_BYTES,
    branch_diff,
    cleanup,
    known_repos,
    open_worktree,
    push,
    remove_worktree,
    summary,
    worktree_at,
)
from tests.bot.helpers.git import branch_exists, commit_file, sh
from tests.helpers.hostile_trees import deep_chain

pytestmark = pytest.mark.usefixtures("git_identity")  # tests/bot/conftest.py
# the repository tests' repositories (remote, checkout, home, binding): tests/bot/repos/conftest.py

CHANGED = r"the worktree's \.git was changed: .*The bot runs no git in .*Start the thread over with /new"


def planted(tmp_path: Path, name: str, *, then: str = "exit 0") -> Path:
    """An executable that appends ``name`` and its arguments to ``tmp_path/marker``."""
    script = tmp_path / "plants" / name
    script.parent.mkdir(exist_ok=True)
    script.write_text(f'#!/bin/sh\necho "{name} $*" >> "{tmp_path / "marker"}"\n{then}\n')
    script.chmod(0o755)
    return script


def ran(tmp_path: Path) -> str:
    """What planted programs ran so far (and forget it): empty when none did."""
    marker = tmp_path / "marker"
    text = marker.read_text() if marker.exists() else ""
    marker.unlink(missing_ok=True)
    return text


def plain_git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """git as the bot ran it before: found from cwd, the whole environment, no option of ours."""
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})


def thread(home: Path, name: str) -> Path:
    return home / "workspaces" / name / REPO_DIR  # the bot's layout: home is two folders up


def plant_git_dir(wt: Path, repo: Path, how: str, tmp_path: Path) -> Path:
    """Rewrite ``wt/.git`` (``how``) to lead to a git folder the agent made; returns that folder."""
    own = wt.parent / "own"
    sh("clone", "-q", "--no-checkout", str(repo), str(own))
    sh("checkout", "-q", "--detach", sh("rev-parse", "HEAD", cwd=wt), cwd=own)
    sh("config", "core.fsmonitor", str(planted(tmp_path, "fsmonitor")), cwd=own)
    for hook in ("pre-push", "post-checkout", "reference-transaction"):
        (own / ".git" / "hooks" / hook).symlink_to(planted(tmp_path, hook))
    common = Path(sh("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repo))
    real = common / "worktrees" / wt.name
    dotgit = wt / ".git"
    dotgit.unlink()
    if how == "gitdir":  # a plain git folder of its own
        target = own / ".git"
        sh("read-tree", "HEAD", cwd=own)
        (target / "index").write_bytes((real / "index").read_bytes())
        dotgit.write_text(f"gitdir: {target}\n")
    elif how == "forged":  # a forged worktree folder that names this worktree back
        target = own / ".git" / "worktrees" / wt.name
        target.mkdir(parents=True)
        for name in ("HEAD", "index", "flower-base", "commondir"):
            (target / name).write_bytes((real / name).read_bytes())
        (target / "gitdir").write_text(f"{dotgit}\n")
        dotgit.write_text(f"gitdir: {target}\n")
    elif how == "link":  # .git a symbolic link to the agent's git folder
        target = own / ".git"
        dotgit.symlink_to(target)
    else:  # "folder": the worktree made a repository of its own
        target = dotgit
        (own / ".git").rename(dotgit)
    return target


@pytest.mark.parametrize("how", ["gitdir", "forged", "link", "folder"])
def test_a_rewritten_dot_git_runs_nothing(binding, home, remote, tmp_path, how):
    fetch(binding)
    one = open_worktree(binding, "one", thread(home, "T1-C1-1"))
    two = open_worktree(binding, "two", thread(home, "T1-C1-2"))
    head = commit_file(one.path, "f.txt", "f\n", "feature")
    commit_file(two.path, "g.txt", "g\n", "other")
    target = plant_git_dir(one.path, one.holder, how, tmp_path)
    plant_git_dir(two.path, two.holder, how, tmp_path)
    plain_git("status", cwd=one.path)
    assert "fsmonitor" in ran(tmp_path)  # the plant is live: plain git status runs it

    repos = known_repos(home)
    for attempt in (lambda: worktree_at(one.path, repos), lambda: thread_worktree(one.path.parent),
                    lambda: summary(one), lambda: remove_worktree(one.path, repos)):
        with pytest.raises(RepoError, match=CHANGED) as info:
            attempt()
        assert str(target) in str(info.value) or how == "folder"
    assert push(binding, one, one.branch) == ("origin", head)  # from the repository, not the worktree
    assert sh("rev-parse", "refs/heads/flower/one", cwd=remote) == head

    key = ThreadKey("T1", "C1", "1")
    _, fresh = open_for_thread(home, key, one.path.parent, one.path.parent / "runs", "again", new=True)
    assert fresh.path == one.path and fresh.branch != one.branch and (fresh.path / ".git").is_file()
    assert summary(fresh).commits == [] and branch_exists(binding.path, "flower/one")
    assert cleanup(home, {str(fresh.path)}) == [two.path]  # deleted without git, pruned from the repository
    assert not two.path.exists() and branch_exists(binding.path, "flower/two")
    listed = sh("worktree", "list", "--porcelain", cwd=two.holder).splitlines()
    assert f"worktree {two.path}" not in listed  # pruned from the thread's repository
    assert f"worktree {fresh.path}" in sh("worktree", "list", "--porcelain", cwd=fresh.holder).splitlines()
    assert ran(tmp_path) == ""


def test_a_worktree_folder_replaced_by_a_link_to_another_thread(binding, home, tmp_path):
    one = open_worktree(binding, "one", thread(home, "T1-C1-1"))
    two = open_worktree(binding, "two", thread(home, "T1-C1-2"))
    (two.path / "wip.txt").write_text("two's work\n")
    os.rename(one.path, tmp_path / "moved-away")
    one.path.symlink_to(two.path)
    with pytest.raises(RepoError, match=r"was replaced by a symbolic link to .*T1-C1-2.*/new"):
        worktree_at(one.path, known_repos(home))
    remove_worktree(one.path, known_repos(home), force=True)  # the link goes, what it points at stays
    assert not os.path.lexists(one.path) and (two.path / "wip.txt").read_text() == "two's work\n"
    assert worktree_at(two.path, known_repos(home)) == two


def test_hooks_and_program_keys_in_the_real_repository_never_run(binding, home, remote, tmp_path):
    wt = open_worktree(binding, "one", thread(home, "T1-C1-1"))
    head = commit_file(wt.path, "f.txt", "f\n", "feature")
    (wt.path / ".gitattributes").write_text("* filter=evil\n")  # the agent's, uncommitted
    sh("remote", "add", "origin", str(remote), cwd=wt.holder)  # so plain git pushes from the worktree too
    for repo in (binding.path, wt.holder):  # the bound repository and the thread's own (the worktree's)
        common = Path(sh("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repo))
        for hook in ("pre-push", "post-checkout", "reference-transaction", "pre-auto-gc"):
            (common / "hooks" / hook).unlink(missing_ok=True)
            (common / "hooks" / hook).symlink_to(planted(tmp_path, hook))
        for key in ("core.fsmonitor", "diff.external", "filter.evil.clean", "filter.evil.smudge",
                    "remote.origin.receivepack", "remote.origin.uploadpack"):
            sh("config", key, str(planted(tmp_path, key)), cwd=repo)
        sh("config", "filter.evil.required", "true", cwd=repo)
    os.utime(wt.path / "f.txt", (1, 1))  # same content, new time: status asks the clean filter
    plain_git("status", cwd=wt.path)
    plain_git("diff", wt.base_commit, wt.branch, cwd=wt.path)
    plain_git("push", "origin", f"{wt.branch}:refs/heads/live", cwd=wt.path)
    plain_git("fetch", "origin", cwd=binding.path)
    plain_git("push", "--receive-pack=git-receive-pack", "origin", f"{wt.branch}:refs/heads/live", cwd=wt.path)
    live = ran(tmp_path)
    for key in ("fsmonitor", "diff.external", "filter.evil.clean", "receivepack", "uploadpack", "pre-push"):
        assert key in live  # every plant is live with plain git

    fetch(binding)
    result = summary(wt)
    assert [c.split(" ", 1)[1] for c in result.commits] == ["feature"] and "+f" in branch_diff(wt)[0]
    assert "?? .gitattributes" in result.uncommitted
    assert push(binding, wt, wt.branch) == ("origin", head)
    assert sh("rev-parse", "refs/heads/flower/one", cwd=remote) == head
    assert worktree_at(wt.path, known_repos(home)) == wt
    two = open_worktree(binding, "two", thread(home, "T1-C1-2"))
    remove_worktree(two.path, known_repos(home), force=True)
    assert cleanup(home, set()) == [wt.path]
    assert ran(tmp_path) == ""


class _AskForCredentials(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="flower"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_remote():
    """``http://127.0.0.1:<port>/repo.git``: every request answered 401, so git asks for credentials."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AskForCredentials)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/repo.git"
    server.shutdown()


@pytest.mark.parametrize("operator_helper", [True, False])
def test_credential_programs_come_from_the_operator_only(home, checkout, tmp_path, monkeypatch, http_remote,
                                                         operator_helper):
    for proxy in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(proxy, raising=False)
        monkeypatch.delenv(proxy.upper(), raising=False)
    b = Bindings(home).bind("C1", str(checkout))
    wt = open_worktree(b, "one", thread(home, "T1-C1-1"))
    sh("remote", "set-url", "origin", http_remote, cwd=checkout)
    sh("config", "credential.helper", str(planted(tmp_path, "repo-helper")), cwd=checkout)
    sh("config", "core.askPass", str(planted(tmp_path, "repo-askpass")), cwd=checkout)
    operator_log = tmp_path / "operator.log"
    if operator_helper:  # the operator's own helper, in the global config (GIT_CONFIG_GLOBAL)
        helper = tmp_path / "operator-helper"
        helper.write_text(f'#!/bin/sh\necho "$1" >> "{operator_log}"\n'
                          '[ "$1" = get ] && printf "username=bot\\npassword=pw\\n"\nexit 0\n')
        helper.chmod(0o755)
        sh("config", "--global", "credential.helper", str(helper))
    plain_git("push", "origin", f"{wt.branch}:refs/heads/x", cwd=checkout)
    assert "repo-" in ran(tmp_path)  # live with plain git: the repository's helper or askPass ran
    operator_log.unlink(missing_ok=True)

    with pytest.raises(RepoError, match="Check that this machine may push"):
        push(b, wt, wt.branch)
    assert ran(tmp_path) == ""
    assert ("get" in operator_log.read_text()) if operator_helper else not operator_log.exists()


def test_git_env_holds_no_secret_and_no_redirection(monkeypatch):
    dropped = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "SLACK_SIGNING_SECRET": "s",
               "ANTHROPIC_API_KEY": "sk-ant-1", "CLAUDE_CODE_OAUTH_TOKEN": "c", "FLOWER_HOME": "/h",
               "GITHUB_TOKEN": "ghp_1", "GH_TOKEN": "gho_1", "GITLAB_TOKEN": "glpat-1", "OTHER": "x",
               "GIT_DIR": "/elsewhere", "GIT_WORK_TREE": "/elsewhere", "GIT_INDEX_FILE": "/elsewhere/i",
               "GIT_OBJECT_DIRECTORY": "/elsewhere", "GIT_ALTERNATE_OBJECT_DIRECTORIES": "/elsewhere",
               "GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='/elsewhere/x'", "GIT_CONFIG_COUNT": "1",
               "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": "/elsewhere/x",
               "GIT_EXEC_PATH": "/elsewhere"}
    kept = {"PATH": "/usr/bin:/bin", "HOME": "/home/bot", "LC_CTYPE": "C.UTF-8", "https_proxy": "http://p:3128",
            "NO_PROXY": "localhost", "SSH_AUTH_SOCK": "/tmp/agent", "GIT_SSH_COMMAND": "ssh -i key",
            "GIT_CONFIG_GLOBAL": "/home/bot/.gitconfig", "GIT_AUTHOR_NAME": "Bot"}
    for name, value in {**dropped, **kept}.items():
        monkeypatch.setenv(name, value)
    env = git_env()
    assert not set(dropped) & set(env) and {n: env[n] for n in kept} == kept
    assert (env["GIT_TERMINAL_PROMPT"], env["LC_ALL"]) == ("0", "C")
    monkeypatch.delenv("GIT_SSH_COMMAND")
    assert git_env()["GIT_SSH_COMMAND"] == "ssh -o BatchMode=yes"


def test_a_program_git_runs_sees_no_secret(home, checkout, tmp_path, monkeypatch):
    b = Bindings(home).bind("C1", str(checkout))
    wt = open_worktree(b, "one", thread(home, "T1-C1-1"))
    sh("remote", "set-url", "origin", "ssh://git@example.invalid/repo.git", cwd=checkout)
    dump = tmp_path / "ssh-env.txt"
    ssh = tmp_path / "ssh"
    ssh.write_text(f'#!/bin/sh\nenv > "{dump}"\nexit 1\n')  # what a program git starts sees
    ssh.chmod(0o755)
    for name, value in {"GIT_SSH_COMMAND": str(ssh), "SLACK_BOT_TOKEN": "xoxb-secret",
                        "ANTHROPIC_API_KEY": "sk-ant-secret", "GIT_DIR": "/elsewhere"}.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(RepoError, match="Check that this machine may push"):
        push(b, wt, wt.branch)
    seen = dump.read_text()
    assert "GIT_TERMINAL_PROMPT=0" in seen  # it is git's environment
    for secret in ("xoxb-secret", "sk-ant-secret", "SLACK_", "ANTHROPIC_", "/elsewhere"):
        assert secret not in seen


def test_a_worktree_the_agent_locked_is_still_removed_by_new_and_cleanup(binding, home):
    """Issue 25, finding 8: ``git worktree lock`` (the agent's own worktree, from inside it) made
    ``/new``'s removal and ``cleanup`` fail; the bot's removals unlock what they remove."""
    one = open_worktree(binding, "one", thread(home, "T1-C1-1"))
    two = open_worktree(binding, "two", thread(home, "T1-C1-2"))
    for wt in (one, two):
        sh("worktree", "lock", "--reason", "mine now", str(wt.path), cwd=wt.path)
    remove_worktree(one.path, known_repos(home), force=True)
    assert cleanup(home, set()) == [two.path]
    assert not one.path.exists() and not two.path.exists()
    assert branch_exists(binding.path, "flower/one") and branch_exists(binding.path, "flower/two")


def test_a_2000_deep_tree_in_a_worktree_is_still_removed_by_new_and_cleanup(binding, home):
    """Issue 37, finding 2: a run's chain of 2,000 folders made git's own delete fail ("File name
    too long") and ``shutil.rmtree`` raise ``RecursionError`` (a worktree whose ``.git`` changed is
    deleted without git); the bot's removals now go in a loop, whatever the depth."""
    one = open_worktree(binding, "one", thread(home, "T1-C1-1"))
    two = open_worktree(binding, "two", thread(home, "T1-C1-2"))
    three = open_worktree(binding, "three", thread(home, "T1-C1-3"))
    for wt in (one, two, three):
        deep_chain(wt.path, 2000)
    (three.path / ".git").write_text("gitdir: /elsewhere\n")  # changed by the run: deleted without git
    try:
        remove_worktree(one.path, known_repos(home), force=True)
        assert sorted(cleanup(home, set())) == sorted([two.path, three.path])
    finally:
        for wt in (one, two, three):  # pytest's own clean-up of tmp_path recurses: not left to it
            subprocess.run(["rm", "-rf", str(wt.path)], check=False)
    assert not one.path.exists() and not two.path.exists() and not three.path.exists()
    assert all(branch_exists(binding.path, f"flower/{n}") for n in ("one", "two", "three"))


def test_a_branch_whose_diff_explodes_or_holds_no_utf8_is_read_bounded(binding, home):
    """zlib packs a file of short lines into next to nothing: the branch summary every conclusion
    read took `git diff` whole into the bot (264 KB of objects were 75 MB of text there and 1 GB in
    git), and a committed byte that is no UTF-8 raised ``UnicodeDecodeError`` out of it, so the
    run's ending was never said. The conclusion reads no diff now; Diff as file gets a bounded one."""
    fetch(binding)
    wt = open_worktree(binding, "one", thread(home, "T1-C1-1"))
    (wt.path / "latin.txt").write_bytes(b"caf\xe9\n")
    (wt.path / "big.txt").write_bytes(b"a\n" * (3 * 1024 * 1024))  # over the big-file size: no line diff
    for n in range(4):  # under it, each 4.5 MB of diff: the whole diff is past the cap
        (wt.path / f"small{n}.txt").write_bytes(b"a\n" * (1536 * 1024))
    sh("add", ".", cwd=wt.path)
    sh("commit", "-q", "-m", "bomb", cwd=wt.path)

    result = summary(wt)  # what every conclusion reads
    assert [c.split(" ", 1)[1] for c in result.commits] == ["bomb"] and "6 files changed" in result.diffstat
    diff, cut = branch_diff(wt)  # what Diff as file uploads
    assert cut and len(diff) <= DIFF_MAX_BYTES  # characters: a bad byte is one U+FFFD
    assert "Binary files /dev/null and b/big.txt differ" in diff and "+caf\ufffd" in diff and "+a\n" in diff

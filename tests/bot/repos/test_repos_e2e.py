"""Channel repositories end to end: real slack-bolt against the fake Slack, the real CLI against the
offline model, real git. An admin binds a local checkout (with a bare "remote"); each thread works
on its own branch in its own worktree; Push branch updates the remote; /new opens a new branch;
bad input gets its message in the thread."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.inbound.commands import RepoCommand, parse_repo
from bot.main import EXIT_CONFIG, cleanup_worktrees, main
from bot.render.repo import DIFF_ACTION, PUSH_ACTION
from bot.repos.thread_worktree import thread_slug
from engine.testing import prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE, WORKER
from tests.bot.helpers.git import checkout  # noqa: F401 - a fixture: a checkout and its bare origin

pytestmark = pytest.mark.usefixtures("git_identity")  # tests/bot/conftest.py

GOAL = "## 目标\n文件写好并提交\n## 判定清单\n- 文件已提交"
ACHIEVED = "## 结论\n达成\n## 理由\n都通过了\n## 未通过\n无"
CHANNEL = "C0GENERAL"


def sh(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


def has_branch(repo: Path, branch: str) -> bool:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
                          capture_output=True).returncode == 0


def script(fm, word: str) -> None:
    """A run that writes ``<word>.txt`` and commits it, through the worker's Write and Bash."""
    brief = (f"## 目标\n写 {word}.txt\n## 验收标准\n{word}.txt 已提交\n## 边界\n只动 {word}.txt\n"
             "## 未知与假设\n无")
    fm.rule(text(brief), when=[CLARIFIER, prompt_contains(f"write {word} file")], repeat_last=True)
    fm.rule(tool_use("Agent", {"subagent_type": "coder", "description": f"write {word}",
                               "prompt": f"Write {word}.txt and commit it."}),
            text(f"{word} done"), when=[COORDINATOR, prompt_contains(f"写 {word}.txt")], repeat_last=True)
    commit = f"git add {word}.txt && git commit -q -m 'add {word}'"
    # Run twice, committing only once, as a model would retry: with two threads' CLIs in one
    # repository, Claude Code's sandbox can fail a command once ("bwrap: Can't find source path
    # .git/config.lock": it protects that lock file when it exists at scan time, and it vanished
    # before bwrap started; seen under load, 2 of 6 double-suite runs).
    again = f"git log -1 --format=%s | grep -qx 'add {word}' || {{ {commit}; }}"
    fm.rule(tool_use("Write", {"file_path": f"{word}.txt", "content": f"{word}\n"}),
            tool_use("Bash", {"command": commit}), tool_use("Bash", {"command": again}),
            text(f"committed {word}"), when=[WORKER, prompt_contains(f"Write {word}.txt")])


def worker_trace(fm, word: str) -> str:
    """What the worker writing ``word`` was answered and saw: the evidence when its commit is missing."""
    seen = fm.requests_where(lambda r: WORKER(r.body) and f"Write {word}.txt" in r.shown)
    return "\n".join(f"#{r.index} {r.outcome} rule={r.rule}/{r.reply_index} results={r.tool_results}" for r in seen)


async def posted(slack, thread_ts, needle, *, after=0):
    return await slack.wait_for("chat.postMessage", lambda c: needle in (c.body.get("text") or ""),
                                after=after, thread_ts=thread_ts)


async def say(slack, text, *, user=None):
    event = slack.mention(CHANNEL, text, user=user)
    await slack.send_event(event)
    return event["ts"]


def buttons(call) -> dict[str, dict]:
    return {e["action_id"]: e for b in call.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button"}


async def test_bound_channel_threads_get_own_branches_push_diff_new(make_bot, slack_env, fake_model, tmp_path,
                                                                    checkout):
    slack, (repo, bare) = slack_env, checkout
    bot = await make_bot(FLOWER_ADMINS="U0ALICE")
    head = sh("rev-parse", "HEAD", cwd=repo)

    # bad input first: each gets its message in the thread, nothing is bound
    (tmp_path / "plain").mkdir()
    for source, needle in [(str(tmp_path / "plain"), "is not a git repository"),
                           (f"file://{tmp_path}/missing.git", "could not clone"),
                           (f"{repo} nosuch", "branch 'nosuch' does not exist")]:
        ts = await say(slack, f"/repo {source}")
        await posted(slack, ts, needle)
    (repo / "README.md").write_text("dirty\n")
    ts = await say(slack, f"/repo {repo}")
    await posted(slack, ts, "uncommitted changes")
    sh("checkout", "--", "README.md", cwd=repo)
    assert not (tmp_path / "home" / "repos.json").exists()
    ts = await say(slack, f"/repo {repo}", user="U0BOB")  # not an admin
    await slack.wait_until(lambda: [e for e in slack.ephemerals if "only admins" in e.get("text", "")],
                           what="an admin-only refusal")

    ts = await say(slack, f"/repo {repo}")
    bound = await posted(slack, ts, "bound to a repository")
    assert str(repo) in bound.body["text"] and "main" in bound.body["text"]
    ts = await say(slack, "/repo")
    await posted(slack, ts, "This channel's repository")

    # two threads, each writes and commits a different file on its own branch
    script(fake_model, "alpha")
    script(fake_model, "beta")
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], repeat_last=True)
    a = await say(slack, "write alpha file")
    b = await say(slack, "write beta file")
    branch_a, branch_b = (f"flower/{thread_slug(f'write {w} file', t)}" for w, t in (("alpha", a), ("beta", b)))
    msg_a = await posted(slack, a, f"Branch {branch_a}")
    await posted(slack, b, f"Branch {branch_b}")
    for branch, word, other in ((branch_a, "alpha", "beta"), (branch_b, "beta", "alpha")):
        files = sh("ls-tree", "--name-only", branch, cwd=repo).split()
        assert f"{word}.txt" in files and f"{other}.txt" not in files, worker_trace(fake_model, word)
        assert sh("log", "--format=%s", f"{head}..{branch}", cwd=repo) == f"add {word}"
    assert "add alpha" in str(msg_a.arg("blocks")) and "alpha.txt" in str(msg_a.arg("blocks"))
    # the bound checkout is untouched
    assert sh("rev-parse", "HEAD", cwd=repo) == head and sh("branch", "--show-current", cwd=repo) == "main"
    assert sh("status", "--porcelain", cwd=repo) == "" and not (repo / "alpha.txt").exists()

    # Push branch updates the bare remote; Diff as file uploads the diff
    shown = buttons(msg_a)
    assert set(shown) == {PUSH_ACTION, DIFF_ACTION}
    await slack.click(CHANNEL, msg_a.response["ts"], PUSH_ACTION, user="U0BOB")
    pushed = await posted(slack, a, "pushed")
    assert sh("rev-parse", branch_a, cwd=bare) == sh("rev-parse", branch_a, cwd=repo)
    assert f"`{branch_a}` (commit `{sh('rev-parse', branch_a, cwd=repo)[:12]}`)" in pushed.body["text"]
    await slack.click(CHANNEL, msg_a.response["ts"], DIFF_ACTION)
    done = await slack.wait_for("files.completeUploadExternal")
    upload = slack.store.uploads[done.response["files"][0]["id"]]
    assert b"+alpha" in upload.content

    # /new with the same words: a fresh worktree on a new branch; the old branch stays
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "/new write alpha file", thread_ts=a))
    again = await posted(slack, a, f"Branch {branch_a}-2", after=mark)
    assert has_branch(repo, branch_a) and sh("log", "--format=%s", f"{head}..{branch_a}-2", cwd=repo) == "add alpha"
    assert "alpha" in str(again.arg("blocks"))

    # a branch that already exists: the thread says so, no worktree is left behind
    event = slack.mention(CHANNEL, "write gamma file")
    sh("branch", f"flower/{thread_slug('write gamma file', event['ts'])}", cwd=repo)
    await slack.send_event(event)
    await posted(slack, event["ts"], "already exists")
    ws = tmp_path / "home" / "workspaces" / f"T0001-{CHANNEL}-{event['ts'].replace('.', '_')}"
    assert not (ws / "repo").exists()

    # cleanup: every finished thread's worktree goes, branches stay, the checkout is untouched
    removed = await cleanup_worktrees(bot.config)
    assert {p.parent.name for p in removed} == {f"T0001-{CHANNEL}-{t.replace('.', '_')}" for t in (a, b)}
    assert not any(p.exists() for p in removed)
    assert has_branch(repo, branch_a) and has_branch(repo, f"{branch_a}-2") and has_branch(repo, branch_b)
    assert sh("status", "--porcelain", cwd=repo) == ""


async def test_no_admins_nobody_binds_and_cleanup(make_bot, slack_env, tmp_path, checkout):
    slack, (repo, _) = slack_env, checkout
    bot = await make_bot()
    await say(slack, f"/repo {repo}")
    await slack.wait_until(lambda: [e for e in slack.ephemerals if "FLOWER_ADMINS is empty" in e.get("text", "")],
                           what="a no-admins refusal")
    ts = await say(slack, "/repo")
    await posted(slack, ts, "not bound")
    assert not (tmp_path / "home" / "repos.json").exists()
    assert await cleanup_worktrees(bot.config) == []


def test_cleanup_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1")
    monkeypatch.setenv("FLOWER_HOME", str(tmp_path / "home"))
    assert main(["cleanup"]) == 0
    assert "0 worktree(s) removed" in capsys.readouterr().out
    assert main(["clean"]) == EXIT_CONFIG
    assert "unknown arguments 'clean'" in capsys.readouterr().err


@pytest.mark.parametrize("said, want", [
    ("<@U0BOT> /repo", RepoCommand("", None)),
    ("/repo /srv/proj", RepoCommand("/srv/proj", None)),
    ("<@U0BOT> /repo /srv/proj dev", RepoCommand("/srv/proj", "dev")),
    ("!repo <https://github.com/a/b.git> main", RepoCommand("https://github.com/a/b.git", "main")),
    ("/repo <https://github.com/a/b|github.com/a/b>", RepoCommand("https://github.com/a/b", None)),
    ("/REPO   x", RepoCommand("x", None)),
    ("/repository x", None),
    ("write a repo /repo", None),
    ("/new /repo x", None),
])
def test_parse_repo(said, want):
    assert parse_repo(said) == want


@pytest.mark.parametrize("ask, ts, want", [
    ("Add dark mode!", "1700000000.123456", "add-dark-mode-00123456"),
    ("加一个暗色模式", "1700000000.000001", "thread-00000001"),
    ("add dark mode", "1700000000.000002", "add-dark-mode-00000002"),
])
def test_thread_slug_is_unique_per_thread(ask, ts, want):
    assert thread_slug(ask, ts) == want

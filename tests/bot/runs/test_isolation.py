"""Every bot run is fenced into its thread's workspace: real bot, real CLI, real bubblewrap sandbox.

An attacker's worker in one thread tries to read another thread's files and the bot's database,
to write outside its workspace and to dump its environment; a scan of everything the bot and its
runs wrote then finds no token or key. What the model was shown and what is on disk decide.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from bot.main import EXIT_CONFIG, main
from bot.render import texts
from engine.testing import prompt_contains, text, tool_use
from engine.testing.env import FAKE_API_KEY
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE, WORKER
from tests.bot.helpers.app import ACHIEVED, CHANNEL, posted
from tests.bot.helpers.faults import FAST_BOT, GOAL, start_thread
from tests.bot.helpers.git import checkout  # noqa: F401 - a fixture

pytestmark = pytest.mark.skipif(not (shutil.which("bwrap") and shutil.which("socat")),
                                reason="the sandbox needs bubblewrap and socat (make test installs them)")

SECRET = "THREAD-A-PRIVATE-NOTES"


def _brief(goal: str) -> str:
    return f"## 目标\n{goal}\n## 验收标准\n做完\n## 边界\n只动工作区\n## 未知与假设\n无"


def _coder(word: str, fm) -> None:
    fm.rule(tool_use("Agent", {"subagent_type": "coder", "description": word, "prompt": f"do {word}"}),
            text("round 1 done"), when=[COORDINATOR, prompt_contains(word.upper())], repeat_last=True)


def _shown_to_worker(fake_model, needle: str) -> str:
    return "\n".join(t for r in fake_model.requests if WORKER(r.body) and prompt_contains(needle)(r.body)
                     for _, t in r.tool_results)


async def test_a_worker_reaches_nothing_outside_its_thread_and_no_secret_is_left_anywhere(
        make_bot, slack_env, fake_model, tmp_path):
    slack, home = slack_env, tmp_path / "home"
    fake_model.rule(text(_brief("KEEP")), when=[CLARIFIER, prompt_contains("keep notes")])
    fake_model.rule(text(_brief("PRY")), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(tool_use("Bash", {"command": f"echo {SECRET} > notes.txt"}), text("kept"),
                    when=[WORKER, prompt_contains("do keep")])
    _coder("keep", fake_model)
    bot = await make_bot(FAST_BOT)
    a = await start_thread(slack, "keep notes")
    await posted(slack, a, "Done: the goal is achieved")
    [notes] = (home / "workspaces").glob("*/notes.txt")

    fake_model.rule(
        tool_use("Bash", {"command": (
            f"cat {notes}; head -c 300 {home}/bot.db; cat {home}/workspaces/*/runs/sessions.db | head -c 300; "
            f"echo x > {notes.parent}/planted.txt; echo x > {home}/planted.txt; env > seen-env.txt; "
            "printf 'print(\"hello from python\")' > hello.py && python3 hello.py; true")}),
        tool_use("Read", {"file_path": str(notes)}),
        tool_use("Write", {"file_path": str(notes.parent / "planted.txt"), "content": "x"}),
        text("pried"), when=[WORKER, prompt_contains("do pry")])
    _coder("pry", fake_model)
    b = await start_thread(slack, "look around")
    await posted(slack, b, "Done: the goal is achieved")

    shown = _shown_to_worker(fake_model, "do pry")
    assert "hello from python" in shown  # the worker's own work runs
    assert SECRET not in shown and "SQLite format" not in shown
    assert "Read refused" in shown and "Write refused" in shown
    assert not (notes.parent / "planted.txt").exists() and not (home / "planted.txt").exists()
    [seen] = (home / "workspaces").glob("*/seen-env.txt")
    names = {line.split("=", 1)[0] for line in seen.read_text().splitlines() if "=" in line}
    assert names and not [n for n in names if n.startswith(("SLACK_", "FLOWER_"))]
    assert "ANTHROPIC_API_KEY" not in names

    await bot.close()
    secrets = (bot.config.bot_token, bot.config.app_token, FAKE_API_KEY)
    scanned = 0
    for path in home.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            scanned += 1
            for secret in secrets:
                assert secret.encode() not in data, f"{secret[:6]}… found in {path}"
    assert scanned > 10 and any(p.name == "sessions.db" for p in home.rglob("sessions.db"))


async def test_a_fifo_and_links_in_one_threads_workbench_stall_no_other_thread(
        make_bot, slack_env, fake_model, tmp_path):
    """Issue 25, findings 2 and 5, through the real bot: a worker leaves a FIFO and links to the
    bot's files in its workbench. The bot reads the workbench for every next session's prompt: it
    neither blocks on the FIFO (another thread's mention is answered and done) nor shows what the
    links point at."""
    slack, home = slack_env, tmp_path / "home"
    (home / "planted-secret.txt").parent.mkdir(parents=True, exist_ok=True)
    fake_model.rule(text(_brief("TRAP")), when=[CLARIFIER, prompt_contains("set a trap")])
    fake_model.rule(text(_brief("OTHER")), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(tool_use("Bash", {"command": (
        "mkdir -p .flower/notes && mkfifo .flower/notes/stall.md && ln -s /proc/self/cwd/.env .flower/notes/env.md "
        f"&& rm -rf .flower/scripts && ln -s {home} .flower/scripts && echo trapped")}), text("trapped"),
        when=[WORKER, prompt_contains("do trap")])
    _coder("trap", fake_model)
    _coder("other", fake_model)
    bot = await make_bot(FAST_BOT)
    a = await start_thread(slack, "set a trap")
    await posted(slack, a, "Done: the goal is achieved")  # the judge's session after the FIFO started
    assert "trapped" in _shown_to_worker(fake_model, "do trap")
    b = await start_thread(slack, "something else")
    await posted(slack, b, "Done: the goal is achieved")
    everything = json.dumps([r.body for r in fake_model.requests])
    assert "SLACK_BOT_TOKEN" not in everything and bot.config.bot_token not in everything
    assert "bot.db" not in everything
    await bot.close()


async def test_with_the_sandbox_off_each_new_thread_is_told(make_bot, slack_env, fake_model):
    fake_model.rule(text(_brief("HI")), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(text("nothing to do"), when=COORDINATOR, repeat_last=True)
    await make_bot(FAST_BOT, FLOWER_SANDBOX="off")
    thread = await start_thread(slack_env, "say hi")
    first = await posted(slack_env, thread, "Started")
    assert "FLOWER_SANDBOX=off" in first.body["text"]
    assert any(texts.UNFENCED in str(b) for b in first.arg("blocks"))


def test_the_bot_refuses_to_start_without_bubblewrap(monkeypatch, tmp_path, capsys):
    bin_dir = tmp_path / "bin"  # a PATH with python and git but neither bwrap nor socat
    bin_dir.mkdir()
    for tool in ("git",):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1-abc")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1-abc")
    monkeypatch.setenv("FLOWER_ALLOW_EVERYONE", "1")
    monkeypatch.setenv("FLOWER_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert main([]) == EXIT_CONFIG
    said = capsys.readouterr().err
    assert "bubblewrap and socat" in said and "apt-get install bubblewrap socat" in said
    assert "FLOWER_SANDBOX=off" in said and said.count("\n") == 1


@pytest.mark.usefixtures("git_identity")
async def test_a_bound_threads_worker_commits_but_cannot_plant_hooks_or_read_the_bot(
        make_bot, slack_env, fake_model, tmp_path, checkout):
    slack, (repo, _) = slack_env, checkout
    home = tmp_path / "home"
    hook = repo / ".git" / "hooks" / "pre-push"
    fake_model.rule(text(_brief("COMMIT")), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(tool_use("Bash", {"command": (
        f"head -c 300 {home}/bot.db; echo 'touch {tmp_path}/hook-ran' > {hook}; git config core.fsmonitor x; "
        "printf 'print(1)' > one.py && python3 one.py && git add one.py && git commit -qm 'add one' && echo committed; "
        "true")}), text("done"), when=[WORKER, prompt_contains("do commit")])
    _coder("commit", fake_model)
    await make_bot(FAST_BOT, FLOWER_ADMINS="U0ALICE")
    ts = await start_thread(slack, f"/repo {repo}")
    await posted(slack, ts, "bound to a repository")
    thread = await start_thread(slack, "commit a file")
    await posted(slack, thread, "Branch flower/")  # after the summary, which copies the branch in
    shown = _shown_to_worker(fake_model, "do commit")
    assert "committed" in shown and "SQLite format" not in shown
    assert not hook.exists() and "fsmonitor" not in (repo / ".git" / "config").read_text()
    log = subprocess.run(["git", "-C", str(repo), "log", "--all", "--format=%s"], capture_output=True, text=True).stdout
    assert "add one" in log


async def test_a_bound_threads_worker_cannot_touch_another_threads_branch_or_the_shared_objects(
        make_bot, slack_env, fake_model, tmp_path, checkout):
    """Issue 25, finding 8: each thread works in a repository of its own that borrows the bound
    one's objects read-only. A worker in a second thread tries to move the first thread's branch,
    delete the objects every thread and the bound checkout use, and lock the first worktree; the
    first thread's branch, the bound repository's history and its /new stay as they were."""
    slack, (repo, _) = slack_env, checkout
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], capture_output=True, text=True)  # noqa: E731
    objects = repo / ".git" / "objects"
    fake_model.rule(text(_brief("WORK")), when=[CLARIFIER, prompt_contains("real work")])
    fake_model.rule(text(_brief("HARM")), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(tool_use("Bash", {"command": "echo a > a.txt && git add -A && git commit -qm 'real work' && echo ok"}),
                    text("done"), when=[WORKER, prompt_contains("do work")])
    harm = (f"git update-ref refs/heads/$(ls {repo}/.git/refs/heads/flower | head -1) HEAD; "
            f"find {objects} -type f -delete 2>/dev/null; rm -rf {objects}/pack 2>/dev/null; "
            "for w in $(git worktree list --porcelain | sed -n 's/^worktree //p'); do git worktree lock \"$w\"; done; "
            "echo harmed; true")
    fake_model.rule(tool_use("Bash", {"command": harm}), text("done"), when=[WORKER, prompt_contains("do harm")])
    _coder("work", fake_model)
    _coder("harm", fake_model)
    await make_bot(FAST_BOT, FLOWER_ADMINS="U0ALICE")
    ts = await start_thread(slack, f"/repo {repo}")
    await posted(slack, ts, "bound to a repository")
    first = await start_thread(slack, "real work")
    await posted(slack, first, "Branch flower/")
    [branch] = [b for b in git("for-each-ref", "--format=%(refname:short)", "refs/heads/flower").stdout.split() if b]
    head = git("rev-parse", branch).stdout.strip()
    count = len([p for p in objects.rglob("*") if p.is_file()])

    second = await start_thread(slack, "do some harm")
    await posted(slack, second, "Branch flower/")
    assert "harmed" in _shown_to_worker(fake_model, "do harm")
    assert git("rev-parse", branch).stdout.strip() == head
    assert git("log", "--format=%s", branch).stdout.splitlines()[0] == "real work"
    assert git("fsck", "--no-dangling").returncode == 0
    assert len([p for p in objects.rglob("*") if p.is_file()]) >= count
    mark = slack.mark()
    await slack.send_event(slack.mention(CHANNEL, "/new real work again", thread_ts=first))
    await posted(slack, first, "Branch flower/", after=mark)  # /new in the first thread still works


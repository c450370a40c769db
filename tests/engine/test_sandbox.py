"""A sandboxed run reaches its workspace and nothing it was fenced out of, for commands and tools.

Through the real CLI and its bubblewrap sandbox: what the model was shown for each tool call,
and what is on disk afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from engine import AgentSpec, Runtime, Sandbox
from engine.testing import prompt_contains, text, tool_use
from engine.testing.env import FAKE_API_KEY

pytestmark = pytest.mark.skipif(not (shutil.which("bwrap") and shutil.which("socat")),
                                reason="the sandbox needs bubblewrap and socat (make test installs them)")

hands = AgentSpec(name="hands", instructions="", allowed_tools=["Bash", "Read", "Write", "Edit", "Glob", "Grep"],
                  permission_mode="acceptEdits", workbench=False, max_turns=12)


@pytest.fixture
def home(tmp_path):
    """A FLOWER_HOME with two thread workspaces and the bot's database."""
    home = tmp_path / "home"
    for name in ("mine", "other"):
        (home / "workspaces" / name).mkdir(parents=True)
    (home / "workspaces" / "other" / "secret.txt").write_text("OTHER-THREAD-SECRET")
    (home / "bot.db").write_text("BOT-DB-CONTENT")
    (home / "repos.json").write_text("BOT-DB-CONTENT")  # a text file: the CLI refuses a .db itself
    return home


async def _run(fake_model, home: Path, *calls, sandbox: Sandbox | None = None, ask: str = "work"):
    ws = home / "workspaces" / "mine"
    fake_model.rule(*(tool_use(name, args) for name, args in calls), text("done"), when=prompt_contains(ask))
    rt = Runtime(workspace=ws, run_dir=ws / "runs", sandbox=sandbox or Sandbox(deny_read=(home,)))
    try:
        result = await rt.run(hands, ask)
    finally:
        rt.close()
    assert result.ok, result.error
    return ws, [text for _, text in fake_model.requests[-1].tool_results]  # what the model was shown


async def test_commands_read_and_write_only_their_workspace(fake_model, home):
    other = home / "workspaces" / "other"
    ws, shown = await _run(fake_model, home, ("Bash", {"command": (
        f"cat {other}/secret.txt; cat {home}/bot.db; echo x > {other}/planted.txt; echo x > {home}/planted.txt; "
        "printf 'print(\"hello from python\")' > hello.py && python3 hello.py; "
        "git init -q g && cd g && echo a > a && git add a && git -c user.email=a@b.c -c user.name=a commit -qm one "
        "&& echo committed; echo x > ../runs/planted.txt") + "; true"}))
    out = shown[0]
    assert "OTHER-THREAD-SECRET" not in out and "BOT-DB-CONTENT" not in out
    assert "hello from python" in out and "committed" in out
    assert not (other / "planted.txt").exists() and not (home / "planted.txt").exists()
    assert not (ws / "runs" / "planted.txt").exists()  # the run's own state is not the agent's
    assert (ws / "hello.py").is_file()


async def test_file_tools_are_fenced_too_and_symlinks_do_not_leak(fake_model, home):
    other = home / "workspaces" / "other"
    ws = home / "workspaces" / "mine"
    (ws / "link.txt").symlink_to(other / "secret.txt")
    ws, shown = await _run(
        fake_model, home,
        ("Read", {"file_path": str(other / "secret.txt")}),
        ("Read", {"file_path": "link.txt"}),
        ("Read", {"file_path": str(home / "repos.json")}),
        ("Write", {"file_path": str(other / "planted.txt"), "content": "x"}),
        ("Grep", {"pattern": "SECRET", "path": str(home)}),
        ("Glob", {"pattern": "../other/**"}),
        ("Write", {"file_path": "notes.txt", "content": "mine"}),
        ("Read", {"file_path": "notes.txt"}),
    )
    assert "goes through the symbolic link" in shown[1]  # a link inside the workspace: refused as a link
    for refused in shown[:6]:
        assert "refused" in refused and ("outside what this run may" in refused or "symbolic link" in refused), refused
        assert "OTHER-THREAD-SECRET" not in refused and "BOT-DB-CONTENT" not in refused
    assert not (other / "planted.txt").exists()
    assert (ws / "notes.txt").read_text() == "mine" and "mine" in shown[7]


async def test_file_tools_take_no_path_through_a_link_in_the_workspace(fake_model, home):
    """A link to a folder inside the workspace is refused too, even when it points back inside:
    the fence would check the target while the CLI opens whatever the link names a moment later."""
    ws = home / "workspaces" / "mine"
    (ws / "real").mkdir()
    (ws / "real" / "a.txt").write_text("inside")
    (ws / "dir-link").symlink_to(ws / "real", target_is_directory=True)
    ws, shown = await _run(
        fake_model, home,
        ("Read", {"file_path": "dir-link/a.txt"}),
        ("Write", {"file_path": str(ws / "dir-link" / "b.txt"), "content": "x"}),
        ("Read", {"file_path": "real/a.txt"}),
    )
    assert "goes through the symbolic link" in shown[0] and "inside" not in shown[0].split("refused")[0]
    assert "goes through the symbolic link" in shown[1] and not (ws / "real" / "b.txt").exists()
    assert "inside" in shown[2]


async def test_each_workspace_has_its_own_temp_folder(fake_model, home):
    """Issue 25, finding 6: the CLI and its commands use a 0700 temp folder of the workspace's own,
    not the one /tmp/claude-<uid> every run shared; another run's temp is neither read nor written."""
    from engine._run.options import _run_temp  # the folder another workspace's run gets
    other_tmp = _run_temp(Path(os.path.realpath(home / "workspaces" / "other")))
    (other_tmp / "task.output").write_text("OTHER-THREAD-OUTPUT")
    shared = Path(tempfile.gettempdir()) / f"claude-{os.getuid()}"  # what every run shared before
    shared.mkdir(mode=0o700, exist_ok=True)
    planted = Path(tempfile.mkdtemp(prefix="another-threads-task-", dir=shared))
    try:
        ws, shown = await _run(fake_model, home, ("Bash", {"command": (
            f'echo "tmp=$TMPDIR"; echo mine > "$TMPDIR/mine.txt"; cat {other_tmp}/task.output; '
            f'echo planted >> {other_tmp}/task.output; ls {shared}/; true')}))
    finally:
        planted.rmdir()
    own = _run_temp(Path(os.path.realpath(ws)))
    cli_tmp = own / f"claude-{os.getuid()}"  # the CLI gives its commands a folder inside CLAUDE_CODE_TMPDIR
    assert f"tmp={cli_tmp}" in shown[0] and (cli_tmp / "mine.txt").read_text() == "mine\n"
    assert own.stat().st_mode & 0o777 == 0o700 and own != other_tmp
    assert "OTHER-THREAD-OUTPUT" not in shown[0] and planted.name not in shown[0]  # both hidden
    assert (other_tmp / "task.output").read_text() == "OTHER-THREAD-OUTPUT"


async def test_the_model_key_reaches_the_model_but_not_the_commands(fake_model, home):
    ws, shown = await _run(fake_model, home, ("Bash", {"command": "env > seen-env.txt; ls -A ~ > home.txt"}))
    seen = (ws / "seen-env.txt").read_text()
    assert FAKE_API_KEY not in seen and "ANTHROPIC_API_KEY" not in seen
    assert all(r.headers.get("x-api-key") == FAKE_API_KEY for r in fake_model.requests)
    for path in ws.rglob("*"):  # nothing of the key, and no placeholder files left in the workspace
        assert not path.is_file() or FAKE_API_KEY not in path.read_text(errors="replace"), path
    assert not (ws / "package.json").exists() and not (ws / ".env").exists()


async def test_a_planted_project_settings_file_runs_no_hook(fake_model, home, tmp_path):
    ws = home / "workspaces" / "mine"
    marker = tmp_path / "hook-ran"
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [
        {"hooks": [{"type": "command", "command": f"touch {marker}"}]}]}, "sandbox": {"enabled": False}}))
    _, shown = await _run(fake_model, home, ("Bash", {"command": f"cat {home}/bot.db; true"}))
    assert not marker.exists()
    assert "BOT-DB-CONTENT" not in shown[0]  # its "sandbox off" was not read either


async def test_a_repository_the_agent_makes_runs_nothing_outside_the_sandbox_later(fake_model, home, tmp_path):
    """A worker may ``git init`` its workspace, and so write that repository's config and hooks:
    nothing there may run outside the sandbox when a later CLI (or its git) looks at the repo."""
    marker = tmp_path / "planted-git-code-ran"  # outside the workspace: a sandboxed command cannot make it
    plant = (f"git init -q . && git config core.fsmonitor 'touch {marker}; false' && "
             f"printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout "
             "&& echo planted")
    _, shown = await _run(fake_model, home, ("Bash", {"command": plant}), ask="plant")
    assert "planted" in shown[0]
    _, shown = await _run(fake_model, home, ("Bash", {"command": "git status --short; git checkout -q -b other; true"}),
                          ask="look")
    assert not marker.exists()


async def test_commands_reach_only_the_allowed_hosts(fake_model, home):
    _, shown = await _run(fake_model, home, ("Bash", {"command": "curl -sS -m 20 https://example.com -o /dev/null; echo rc=$?"}),
                          sandbox=Sandbox(deny_read=(home,), domains=("pypi.org",)))
    assert "rc=0" not in shown[0] and "response 403" in shown[0]  # refused by the sandbox's proxy, not by DNS


def test_the_deepest_listed_folder_decides(tmp_path):
    home = tmp_path / "home"
    ws = home / "workspaces" / "mine"
    fence = Sandbox(deny_read=(home,)).around(ws, private=(ws / "runs",))
    assert fence.may_read(ws / "a.py") and fence.may_write(ws / "a.py")
    assert not fence.may_read(home / "bot.db") and not fence.may_read(home / "workspaces" / "other" / "x")
    assert not fence.may_read(ws / "runs" / "sessions.db") and not fence.may_write(ws / "runs" / "x")
    assert fence.may_read(tmp_path / "elsewhere") and not fence.may_write(tmp_path / "elsewhere")
    assert not fence.may_read(ws / ".." / "other")


async def test_commands_cannot_read_the_hosts_process_memory_or_environment(fake_model, home, monkeypatch):
    monkeypatch.setenv("FLOWER_TEST_HOST_SECRET", "xoxb-host-only-secret")
    env = {k: v for k, v in os.environ.items() if k != "FLOWER_TEST_HOST_SECRET"}
    ws = home / "workspaces" / "mine"
    fake_model.rule(tool_use("Bash", {"command": (
        f"cat /proc/{os.getpid()}/environ; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep host-only; "
        "true")}), text("done"))
    rt = Runtime(workspace=ws, run_dir=ws / "runs", env=env, sandbox=Sandbox(deny_read=(home,)))
    try:
        result = await rt.run(hands, "work")
    finally:
        rt.close()
    assert result.ok, result.error
    [(_, shown)] = fake_model.requests[-1].tool_results
    assert "xoxb-host-only-secret" not in shown  # commands live in a process namespace of their own

"""A sandboxed run reaches its workspace and nothing it was fenced out of, for commands and tools.

Through the real CLI and its bubblewrap sandbox: what the model was shown for each tool call,
and what is on disk afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from engine import AgentSpec, Runtime, Sandbox
from engine.testing import hold, prompt_contains, reply, text, tool_use
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


async def test_a_link_swapped_in_after_the_check_reads_nothing_outside(fake_model, home):
    """Issue 25, finding 4: the hook checks a path and the CLI opens it later. A thread keeps
    exchanging a regular file with a link to a secret (renameat2 RENAME_EXCHANGE) while the model
    reads the file 200 times and writes it 40 times: no read shows the secret, no write reaches it."""
    ws = home / "workspaces" / "mine"
    secret = home / "secret.txt"
    secret.write_text("FLOWER-HOME-SECRET")
    (ws / "race.txt").write_text("plain words")
    (ws / ".swap").symlink_to(secret)
    libc = ctypes.CDLL(None, use_errno=True)
    names = [os.fsencode(ws / "race.txt"), os.fsencode(ws / ".swap")]
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            libc.renameat2(-100, names[0], -100, names[1], 2)  # AT_FDCWD, RENAME_EXCHANGE

    reads = [reply(*(tool_use("Read", {"file_path": str(ws / "race.txt")}) for _ in range(20)))
             for _ in range(10)]
    writes = [reply(*(tool_use("Write", {"file_path": str(ws / "race.txt"), "content": "OVERWRITTEN"})
                      for _ in range(20))) for _ in range(2)]
    fake_model.rule(*reads, *writes, text("done"), when=prompt_contains("race"))
    rt = Runtime(workspace=ws, run_dir=ws / "runs", sandbox=Sandbox(deny_read=(home,)))
    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        result = await rt.run(replace(hands, max_turns=16), "race")
    finally:
        stop.set()
        swapper.join()
        rt.close()
    assert result.ok, result.error
    shown = [text for _, text in fake_model.requests[-1].tool_results]  # the whole conversation's
    assert len(shown) == 240  # each answered: the file's words, a refusal, or "no such file"
    assert not any("FLOWER-HOME-SECRET" in s for s in shown)
    assert secret.read_text() == "FLOWER-HOME-SECRET"


async def test_file_tools_reach_no_other_process_s_temp_folder(fake_model, home, tmp_path):
    """Issue 25, finding 6: another flower process's private folder (its key file) is not there
    for the CLI's own file tools, nor for its commands. (A process's /proc/<pid>/environ cannot be
    shown this way: the CLI's Read refuses /proc files itself.)"""
    other = Path(tempfile.mkdtemp(prefix="flower-cli-"))  # what another bot process keeps its key in
    (other / "key-0").write_text("OTHER-PROCESS-KEY")
    try:
        ws, shown = await _run(
            fake_model, home,
            ("Read", {"file_path": str(other / "key-0")}),
            ("Glob", {"pattern": "*", "path": str(other)}),
            ("Bash", {"command": f"cat {other}/key-0; ls {tempfile.gettempdir()}; true"}))
    finally:
        shutil.rmtree(other)
    assert "OTHER-PROCESS-KEY" not in "\n".join(shown)
    assert other.name not in shown[2].splitlines()  # ls does not list it (cat names it, missing)


def _left_in(ws: Path) -> list[str]:
    """What still runs with its working directory in ``ws``: pid and command line."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue  # gone meanwhile, or not ours to look at
        if cwd == str(ws) or cwd.startswith(f"{ws}/"):
            found.append(f"{pid} {cmd[:100]}")
    return found


async def _gone(ws: Path) -> list[str]:
    """Wait (generously: the kernel reaps a namespace's processes asynchronously) until nothing
    runs in ``ws``; return what is left."""
    for _ in range(600):
        left = _left_in(ws)
        if not left:
            return []
        await asyncio.sleep(0.1)
    return left


# a command the CLI keeps running in the background (it waits for it before it ends a turn), which
# leaves more behind: nohup, setsid, a double fork
BACKGROUND = {"command": "nohup sleep 611 >/dev/null 2>&1 & setsid sleep 612 >/dev/null 2>&1 < /dev/null & "
                         "(sleep 613 &); sleep 614", "run_in_background": True}


async def _running(ws: Path) -> list[str]:
    """Wait until the background commands run in ``ws``; return what runs there."""
    for _ in range(600):
        left = _left_in(ws)
        if sum(line.split(" ", 1)[1].startswith("sleep 61") for line in left) == 4:
            return left
        await asyncio.sleep(0.1)
    raise AssertionError(f"the background commands never all ran: {_left_in(ws)}")


async def test_nothing_a_stopped_run_started_outlives_it(fake_model, home):
    """Issue 25, finding 10: a run stopped mid-step (Stop, /new) leaves nothing running: not the
    commands it keeps in the background, not the sandbox's proxies."""
    ws = Path(os.path.realpath(home / "workspaces" / "mine"))
    held = hold()
    fake_model.rule(tool_use("Bash", BACKGROUND), text("serving", fault=held), when=prompt_contains("serve"))
    rt = Runtime(workspace=ws, run_dir=ws / "runs", sandbox=Sandbox(deny_read=(home,)))
    run = asyncio.create_task(rt.run(hands, "serve"))
    try:
        await held.arrived()
        await _running(ws)
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run
    finally:
        held.release()
        rt.close()
    assert await _gone(ws) == []


async def test_nothing_a_run_started_outlives_its_host_killed_with_sigkill(fake_model, home):
    """Issue 25, finding 10: the host dies by SIGKILL mid-run (its process alone, as the OOM
    killer would): the CLI, its sandbox's proxies and the commands it left running all end."""
    ws = Path(os.path.realpath(home / "workspaces" / "mine"))
    held = hold()
    fake_model.rule(tool_use("Bash", BACKGROUND), text("serving", fault=held),
                    when=prompt_contains("start the server"))
    host = subprocess.Popen([sys.executable, str(Path(__file__).parent / "programs" / "sandboxed_flow.py"),
                             str(ws), str(home)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        await held.arrived()
        await _running(ws)
    finally:
        host.kill()
        await asyncio.to_thread(host.wait)
        held.release()
    assert await _gone(ws) == []


async def test_a_search_of_the_workspace_finds_nothing_in_its_private_folder(fake_model, home):
    """Issue 25, finding 9: Glob and Grep from the workspace root see no name or line of the run's
    private folder (the fence checked only a search's root; the folder is now empty to the CLI)."""
    ws = home / "workspaces" / "mine"
    (ws / "runs").mkdir()
    (ws / "runs" / "lineage-of-a-private-thread.json").write_text("PRIVATE-RUN-STATE")
    (ws / "notes.txt").write_text("PRIVATE-RUN-STATE is the word to find")
    _, shown = await _run(fake_model, home, ("Glob", {"pattern": "**/*", "path": str(ws)}),
                          ("Grep", {"pattern": "PRIVATE-RUN-STATE", "path": str(ws), "output_mode": "content"}))
    assert "notes.txt" in shown[0] and "lineage-of-a-private-thread" not in shown[0]
    assert "notes.txt" in shown[1] and "lineage-of-a-private-thread" not in shown[1]


async def test_a_resumed_session_runs_in_the_view_too(fake_model, home):
    """The SDK resumes a session from a fresh temp config folder of its own, made after the
    options: the CLI's view opens it, so the second step sees the first one's conversation."""
    ws = home / "workspaces" / "mine"
    fake_model.rule(text("the word is pelican"), when=prompt_contains("remember"))
    fake_model.rule(text("recalled"), when=prompt_contains("recall"))
    rt = Runtime(workspace=ws, run_dir=ws / "runs", sandbox=Sandbox(deny_read=(home,)))
    try:
        first = await rt.run(hands, "remember a word")
        again = await rt.run(hands, "recall it", resume=first.session_id)
    finally:
        rt.close()
    assert first.ok and again.ok, (first.error, again.error)
    assert again.session_id == first.session_id
    assert "the word is pelican" in json.dumps(fake_model.requests[-1].body["messages"])

"""The CLI's environment is the host's choice, and building a Runtime changes nothing in the host.

Through the real CLI: what a Bash command of the agent prints is what its environment holds.
"""

from __future__ import annotations

import os
import signal
import stat

import pytest

from engine import AgentSpec, Runtime, StarterRun
from engine._run.credentials import CredentialsError
from engine._run.launcher import launcher_path
from engine.testing import text, tool_use

shell = AgentSpec(name="shell", instructions="", allowed_tools=["Bash"], permission_mode="acceptEdits",
                  workbench=False, max_turns=4)


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


async def _printenv(fake_model, ws, **kw) -> dict[str, str]:
    out = ws / "seen-env.txt"
    fake_model.rule(tool_use("Bash", {"command": f"env > {out}"}), text("done"))
    rt = Runtime(workspace=ws, run_dir=ws.parent / "runs", **kw)
    try:
        result = await rt.run(shell, "print the environment")
    finally:
        rt.close()
    assert result.ok, result.error
    return dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)


async def test_the_cli_sees_exactly_the_environment_the_host_built(fake_model, ws, monkeypatch):
    monkeypatch.setenv("FLOWER_TEST_HOST_SECRET", "xoxb-not-for-the-agent")
    given = {k: v for k, v in os.environ.items() if k != "FLOWER_TEST_HOST_SECRET"}
    given["FLOWER_TEST_GIVEN"] = "yes"
    seen = await _printenv(fake_model, ws, env=given)
    assert seen.get("FLOWER_TEST_GIVEN") == "yes"
    assert "FLOWER_TEST_HOST_SECRET" not in seen
    assert not any("xoxb-not-for-the-agent" in v for v in seen.values())
    assert not any(k.startswith("FLOWER_CLI_") for k in seen)  # the launcher's own switches are gone


async def test_without_an_environment_the_cli_inherits_the_hosts(fake_model, ws, monkeypatch):
    monkeypatch.setenv("FLOWER_TEST_HOST_VALUE", "inherited")
    seen = await _printenv(fake_model, ws)
    assert seen.get("FLOWER_TEST_HOST_VALUE") == "inherited"


def test_building_a_runtime_loads_no_env_file_and_installs_no_signal_handler(fake_model, ws, monkeypatch):
    (ws / ".env").write_text("FLOWER_TEST_PLANTED=1\nBASH_ENV=/tmp/planted.sh\n")
    monkeypatch.chdir(ws)
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    bash_env = os.environ.get("BASH_ENV")
    Runtime(workspace=ws, run_dir=ws / "runs").close()
    StarterRun(ws).wake_state()
    assert "FLOWER_TEST_PLANTED" not in os.environ
    assert os.environ.get("BASH_ENV") == bash_env
    assert {sig: signal.getsignal(sig) for sig in before} == before


def test_credentials_are_checked_in_the_environment_the_cli_gets(ws, monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-host-only")
    empty = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "nohome")}
    with pytest.raises(CredentialsError, match="ANTHROPIC_API_KEY"):
        Runtime(workspace=ws, run_dir=ws / "runs", env=empty)


def test_the_launcher_lives_outside_every_workspace_and_only_its_user_may_touch_it(ws):
    path = launcher_path()
    assert ws not in path.parents
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o700

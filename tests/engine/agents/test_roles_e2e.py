"""Roles through the real CLI: a worker may run commands unattended, the coordinator may not."""

from engine import Resilience, Runtime
from engine.authoring import coordinator, worker
from engine.testing import COORDINATOR, WORKER, text, tool_use


async def test_worker_runs_commands_and_the_coordinator_is_still_denied(fake_model, tmp_path):
    fake_model.rule(tool_use("Bash", {"command": "python3 -c \"open('made.txt','w').write('x')\""}),
                    text("done"), when=WORKER)
    fake_model.rule(tool_use("Bash", {"command": "touch main.txt"}),
                    tool_use("Agent", {"subagent_type": "coder", "description": "d", "prompt": "run it"}),
                    text("ok"), when=COORDINATOR, repeat_last=True)
    spec = coordinator("协调者", "", {"coder": worker("runs commands", "do it")})
    assert "Bash" in spec.allowed_tools
    rt = Runtime(workspace=tmp_path, run_dir=tmp_path / "runs", workbench=True,
                 resilience=Resilience(base_delay=0.01))
    try:
        r = await rt.run(spec, "go")
    finally:
        rt.close()
    assert r.ok
    assert (tmp_path / "made.txt").read_text() == "x"  # the worker's command really ran
    assert not (tmp_path / "main.txt").exists()  # the coordinator's own Bash was denied

"""The oracle answers from events and the workbench outside the run; the plugin really loads."""

from __future__ import annotations

from claude_agent_sdk import ClaudeSDKClient, SystemMessage

from engine import AgentSpec
from engine.authoring import Workbench, build_options
from engine.events import StepStarted, VerdictGiven
from engine.testing import system_contains, text
from engine._flow.oracle import consult


async def test_oracle_answers_from_recent_events_and_workbench(fake_model, tmp_path):
    wb = Workbench(tmp_path).ensure()
    (wb.notes / "decision.md").write_text("# desc: chose SQLite\n")
    wb.refresh()
    fake_model.rule(text("round 2, judge said not yet"), when=system_contains("旁边回答"))
    events = [StepStarted("干活", index=2, total=3),
              VerdictGiven("干活", round=1, state="not_yet", reason="no tests")]
    answer = await consult("where are we?", workspace=tmp_path, events=events, workbench=wb)
    assert answer == "round 2, judge said not yet"
    shown = fake_model.message_requests[-1]
    assert "not_yet" in shown.prompt and "where are we?" in shown.prompt
    assert "decision.md" in shown.system  # the workbench index is in its system prompt
    assert not (tmp_path / "runs").exists()  # nothing of the run's own state was touched


async def test_plugin_is_loaded_into_the_session(fake_model, tmp_path):
    fake_model.rule(text("hi"))
    opts = build_options(AgentSpec(name="x", instructions=""), cwd=tmp_path, portable=False)
    init = None
    async with ClaudeSDKClient(opts) as client:
        await client.query("hello")
        async for msg in client.receive_response():
            if isinstance(msg, SystemMessage) and msg.subtype == "init":
                init = msg.data
    assert init is not None
    assert "flower" in [p.get("name") for p in init.get("plugins", [])]
    assert any(s.startswith("flower:") for s in init.get("skills", [])), init.get("skills")

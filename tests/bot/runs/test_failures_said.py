"""A run that cannot go on says why in its thread, in words a person can act on; a storm of
transient API errors never ends a run: it waits, says so once, and goes on by itself.

Real bot, real CLI, the offline model answering the errors the real API gives."""

from __future__ import annotations

import json

import pytest

from bot.runs.run import BotOptions
from engine import FlowerError, Resilience
from engine.host import check_cli
from engine.testing import text
from engine.testing.faults import http_error, overloaded, unauthorized
from engine.testing.roles import CLARIFIER
from tests.bot.helpers.app import posted, texts
from tests.bot.helpers.faults import BRIEF, script, start_thread


async def test_a_refused_api_key_ends_the_run_at_once_and_says_so(make_bot, slack_env, fake_model, caplog, tmp_path):
    fake_model.rule(text("never", fault=unauthorized()), when=CLARIFIER)
    await make_bot(BotOptions(runtime={"resilience": Resilience(base_delay=0.01, max_delay=0.05)}, status_every_s=0))
    thread = await start_thread(slack_env)
    said = await posted(slack_env, thread, "Ended without achieving the goal")
    shown = said.body["text"]
    assert "API key" in shown and "401" in shown and "ANTHROPIC_API_KEY" in shown, shown
    [step] = json.loads(next((tmp_path / "home").rglob("manifest.json")).read_text())
    assert step["attempts"] == 1  # never retried, the step not run again
    assert not [t for t in texts(slack_env, thread) if "The model is unavailable" in t]
    assert any("API key" in r.getMessage() and "401" in r.getMessage() for r in caplog.records)


async def test_an_unknown_model_name_says_which_setting_to_fix(make_bot, slack_env, fake_model, tmp_path):
    fake_model.rule(text("never", fault=http_error(404, "not_found_error", "model: claude-nonexistent-9")),
                    when=CLARIFIER)
    await make_bot(BotOptions(runtime={"resilience": Resilience(base_delay=0.01, max_delay=0.05)}, status_every_s=0))
    thread = await start_thread(slack_env)
    said = await posted(slack_env, thread, "Ended without achieving the goal")
    assert "model name is unknown" in said.body["text"] and "ANTHROPIC_MODEL" in said.body["text"], said.body["text"]
    [step] = json.loads(next((tmp_path / "home").rglob("manifest.json")).read_text())
    assert step["attempts"] == 1


async def test_a_storm_past_the_retry_budget_waits_and_goes_on_by_itself(make_bot, slack_env, fake_model):
    fake_model.rule(text(BRIEF, fault=overloaded(times=7)), when=CLARIFIER)  # 7 x 529, then the brief
    script(fake_model)
    fast = Resilience(base_delay=0.01, max_delay=0.05, max_attempts=3, wait_out_storms=True)
    await make_bot(BotOptions(runtime={"resilience": fast}, status_every_s=0))
    thread = await start_thread(slack_env)
    await posted(slack_env, thread, "Done: the goal is achieved", timeout=600)  # eight CLI starts on a busy machine
    shown = texts(slack_env, thread)
    waits = [t for t in shown if "Waiting for the model's API" in t]
    assert len(waits) == 1, shown
    assert len([t for t in shown if "The model is unavailable" in t]) == 2  # the budget's retries only
    assert any("answers again" in t for t in shown)


def test_the_cli_is_checked_at_start(tmp_path):
    assert check_cli()  # the bundled CLI answers --version
    broken = tmp_path / "claude"
    broken.write_text("#!/bin/sh\necho 'error: cannot load the runtime' >&2\nexit 3\n")
    broken.chmod(0o755)
    for cli, said in ((tmp_path / "missing", "No such file"), (broken, "cannot load the runtime")):
        with pytest.raises(FlowerError, match=said) as caught:
            check_cli(cli)
        assert "pip install --force-reinstall claude-agent-sdk" in str(caught.value)

"""The fake model driving the REAL Claude Code CLI through claude_agent_sdk.query().

Tools really run, files really land on disk, and the tests assert on what the model was shown.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultError,
    ResultMessage,
    query,
)

from engine.testing import (
    FAKE_API_KEY,
    cut_stream,
    hold,
    last_user_contains,
    overloaded,
    prompt_contains,
    prompt_too_long,
    rate_limited,
    reply,
    system_contains,
    text,
    tool_use,
    unauthorized,
)


async def run(prompt: str, cwd, **options) -> tuple[list, ResultError | None]:
    """Every SDK message of one query, and the ResultError it ended with (None on success)."""
    messages: list = []
    opts = ClaudeAgentOptions(cwd=cwd, permission_mode="bypassPermissions", **options)
    try:
        async for message in query(prompt=prompt, options=opts):
            messages.append(message)
    except ResultError as error:
        return messages, error
    return messages, None


def results(messages) -> list[ResultMessage]:
    return [m for m in messages if isinstance(m, ResultMessage)]


def assistant(messages) -> list[AssistantMessage]:
    return [m for m in messages if isinstance(m, AssistantMessage)]


async def test_the_cli_shell_does_not_run_the_machines_dotfiles(fake_model, tmp_path, monkeypatch):
    """The CLI sources ``~/.bashrc`` and the login profile for its Bash tool; under the offline env
    it has a HOME of its own, so a machine's dotfiles (slow, different per machine, and some take
    locks a killed test leaves behind) never run in a test."""
    machine_home = tmp_path / "machine-home"
    machine_home.mkdir()
    for name in (".bash_profile", ".profile", ".bashrc"):
        (machine_home / name).write_text("flower_probe() { :; }\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(machine_home))
    env = fake_model.offline_env(tmp_path / "claude-config")
    fake_model.rule(tool_use("Bash", {"command": "echo PROBE-$(type -t flower_probe || echo skipped)",
                                      "description": "probe"}),
                    text("done"), when=prompt_contains("probe the shell"))
    messages, error = await run("probe the shell", tmp_path, env=env)
    assert error is None
    shown = fake_model.message_requests[-1].shown
    assert "PROBE-skipped" in shown and "PROBE-function" not in shown
    assert env["HOME"] != str(machine_home)


async def test_scripted_write_then_bash_then_text_really_runs(fake_model, fake_model_env, tmp_path):
    target = tmp_path / "notes.txt"
    script = fake_model.rule(
        tool_use("Write", {"file_path": str(target), "content": "written by the fake model\n"}),
        tool_use(
            "Bash",
            {"command": "wc -c notes.txt > size.txt && echo BASH-RAN-$((6*7))", "description": "count"},
            usage={"input_tokens": 190_000},
        ),
        text("All done."),
        when=prompt_contains("write the notes"),
    )
    messages, error = await run("write the notes", tmp_path, env=fake_model_env)

    assert error is None and results(messages)[-1].result == "All done."
    assert target.read_text() == "written by the fake model\n"
    assert (tmp_path / "size.txt").read_text().split()[0] == "26"
    first, second, third = script.requests
    assert [r.reply_index for r in script.requests] == [0, 1, 2] and [r.turn for r in script.requests] == [0, 1, 2]
    assert "BASH-RAN-42" in third.shown and "BASH-RAN-42" not in second.shown
    assert '"content": "written by the fake model\\n"' in second.shown
    assert ("Bash", "BASH-RAN-42") in third.tool_results
    # What the CLI sends: the path, the beta flag, our key, the whole conversation, the tools.
    assert (first.method, first.path, first.query) == ("POST", "/v1/messages", {"beta": "true"})
    assert first.headers["x-api-key"] == FAKE_API_KEY and first.body["stream"] is True
    assert {"Bash", "Write"} <= set(first.tools) and len(third.messages) > len(first.messages)
    # Usage: estimated from the request size unless the reply forces it.
    usages = [m.usage["input_tokens"] for m in assistant(messages)]
    assert usages[1] == 190_000 and 1000 < usages[0] < 190_000 and usages[2] > usages[0]


async def test_coordinator_and_subagent_follow_their_own_scripts(fake_model, fake_model_env, tmp_path):
    finish = hold()
    coordinator = fake_model.rule(
        tool_use(
            "Agent",
            {"description": "sub job", "prompt": "SUB-MARKER make sub.txt", "subagent_type": "general-purpose"},
        ),
        text("The worker is on it."),
        text("The worker finished."),
        when=prompt_contains("delegate"),
    )
    worker = fake_model.rule(
        tool_use("Bash", {"command": "echo from-worker > sub.txt"}),
        text("sub.txt is made", fault=finish),
        when=prompt_contains("SUB-MARKER"),
    )
    step = asyncio.create_task(run("delegate the job", tmp_path, env=fake_model_env))
    # The worker's last reply waits until the coordinator has asked for its turn 1, so the
    # completion notice cannot arrive early and be folded into that turn.
    await fake_model.wait_for(lambda r: "delegate the job" in r.prompt and r.turn == 1)
    finish.release()
    messages, error = await step

    assert error is None and (tmp_path / "sub.txt").read_text() == "from-worker\n"
    assert [r.reply_index for r in worker.requests] == [0, 1]
    assert "cc_is_subagent=true" in worker.requests[0].system
    # The worker runs in the background; its completion notice starts the coordinator's turn 2.
    assert [r.reply_index for r in coordinator.requests] == [0, 1, 2]
    assert "sub.txt is made" in coordinator.requests[2].shown
    assert [r.result for r in results(messages)] == ["The worker is on it.", "The worker finished."]


@pytest.mark.parametrize(
    "fault, status, error, words",
    [
        (overloaded(), 529, "server_error", "529 Overloaded"),
        (rate_limited(retry_after=3), 429, "rate_limit", "429"),
        (unauthorized(), 401, "authentication_failed", "Invalid API key"),
        (prompt_too_long(), 400, "invalid_request", "Prompt is too long"),
        (cut_stream(after_events=4), None, "server_error", "Connection dropped"),
    ],
)
async def test_each_fault_reaches_the_sdk_as_an_api_error(
    fake_model, fake_model_env, tmp_path, fault, status, error, words
):
    fake_model.rule(text("never " * 50), fault=fault)
    messages, raised = await run("hello", tmp_path, env=fake_model_env)

    synthetic = assistant(messages)[-1]
    assert synthetic.model == "<synthetic>" and synthetic.error == error
    assert words in synthetic.content[0].text
    assert raised is not None and raised.api_error_status == status
    assert results(messages)[-1].is_error
    # MAX_RETRIES=0: one request; a broken stream is retried once without streaming.
    expected = [True, False] if status is None else [True]
    assert [r.body["stream"] for r in fake_model.message_requests] == expected


async def test_a_fault_once_then_the_normal_reply(fake_model, fake_model_env, tmp_path):
    fake_model.rule(text("second time lucky", fault=overloaded(times=1)))
    _, first = await run("hello", tmp_path, env=fake_model_env)
    messages, second = await run("hello", tmp_path, env=fake_model_env)
    assert first is not None and first.api_error_status == 529
    assert second is None and results(messages)[-1].result == "second time lucky"
    assert [r.outcome for r in fake_model.message_requests] == ["http 529", "reply"]


async def test_a_stream_cut_once_is_recovered_by_the_cli(fake_model, fake_model_env, tmp_path):
    fake_model.rule(text("whole answer", fault=cut_stream(after_events=3, times=1)))
    messages, error = await run("hello", tmp_path, env=fake_model_env)
    assert error is None and results(messages)[-1].result == "whole answer"
    tries = [(r.body["stream"], r.outcome) for r in fake_model.message_requests]
    assert tries == [(True, "cut_stream"), (False, "reply")]


async def test_held_reply_waits_for_release(fake_model, fake_model_env, tmp_path):
    h = hold()
    fake_model.rule(
        tool_use("Bash", {"command": "echo first > first.txt"}),
        text("released", fault=h),  # turn 1 is held until the test says so
        when=prompt_contains("go"),
    )
    step = asyncio.create_task(run("go", tmp_path, env=fake_model_env))

    held = await h.arrived()
    assert (tmp_path / "first.txt").exists() and not step.done()
    assert held.turn == 1 and held.tool_results == [("Bash", "(Bash completed with no output)")]
    h.release()
    messages, error = await step
    assert error is None and results(messages)[-1].result == "released"


async def test_unreachable_then_back_on_the_same_port(fake_model, fake_model_env, tmp_path):
    fake_model.rule(text("back online"))
    port = fake_model.port
    fake_model.go_offline()
    messages, error = await run("hello", tmp_path, env=fake_model_env)
    assert error is not None and "ECONNREFUSED" in assistant(messages)[-1].content[0].text
    assert fake_model.requests == []

    fake_model.go_online()
    messages, error = await run("hello", tmp_path, env=fake_model_env)
    assert fake_model.port == port and error is None and results(messages)[-1].result == "back online"


async def test_unmatched_request_fails_the_step_with_a_message(fake_model, fake_model_env, tmp_path):
    fake_model.rule(text("judge says yes"), when=system_contains("You are the judge"))
    fake_model.rule(text("not this"), when=last_user_contains("absent words"))
    messages, error = await run("hello", tmp_path, env=fake_model_env)
    assert error is not None and "no rule matched request #0" in error.result
    assert len(fake_model.unmatched) == 1 == len(fake_model.requests)  # refused once, not retried


async def test_recorded_bodies_are_the_full_json(fake_model, fake_model_env, tmp_path):
    both = reply("two blocks", tool_use("Bash", {"command": "echo a"}), tool_use("Bash", {"command": "echo b"}))
    fake_model.rule(both, text("end"))
    messages, error = await run("hello", tmp_path, env=fake_model_env)
    assert error is None
    last = fake_model.last_request()
    assert json.loads(json.dumps(last.body)) == last.body and last.body["model"]
    assert sorted(text for _, text in last.tool_results) == ["a", "b"]
    assert fake_model.requests_where(lambda r: r.turn == 1) == [last]


KILLABLE = """
import asyncio, sys
from claude_agent_sdk import ClaudeAgentOptions, query

async def main():
    options = ClaudeAgentOptions(cwd=sys.argv[2], permission_mode="bypassPermissions")
    async for _ in query(prompt=sys.argv[1], options=options):
        pass

asyncio.run(main())
"""


async def test_a_held_step_can_be_killed_mid_step(fake_model, tmp_path):
    h = hold()
    fake_model.rule(
        tool_use("Bash", {"command": "echo one > one.txt"}),
        text("never delivered", fault=h),
        when=prompt_contains("first run"),
    )
    # No env= here: the fixture put the offline environment in os.environ; the child inherits it.
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", KILLABLE, "first run", str(tmp_path), start_new_session=True
    )
    try:
        held = await h.arrived()
        assert (tmp_path / "one.txt").read_text() == "one\n" and proc.returncode is None
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the SDK's CLI child shares the process group
        await proc.wait()
    dropped = await fake_model.wait_for(lambda r: r.outcome == "dropped")
    assert dropped is held and held.headers["X-Claude-Code-Session-Id"]

"""The ask and inbox tools through the real Claude Code CLI, against the offline fake model.

What is asserted is what the model was shown in the request after its tool call, and what the
channel wrote to its Q&A log.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

from engine._human.channel import ASK_DESCRIPTION, HumanChannel, span
from engine._lang.zh import LIMIT_TEXT, TIMEOUT_DEFAULT_TEXT, TIMEOUT_TEXT
from engine._events import AskEvent, Event
from engine._human.transports import ScriptedTransport
from engine.testing import FakeModel, prompt_contains, text, tool_results, tool_use


async def _run(prompt: str, ws: Path, env: dict[str, str], ch: HumanChannel, **options: Any) -> list[ResultMessage]:
    opts = ClaudeAgentOptions(
        cwd=str(ws),
        env=env,
        mcp_servers=ch.mcp_servers(asked_by="协调者"),
        allowed_tools=[ch.tool_name, ch.inbox_tool_name],
        **options,
    )
    return [m async for m in query(prompt=prompt, options=opts) if isinstance(m, ResultMessage)]


def _results_after(fm: FakeModel, rule_name: str, reply_index: int) -> list[tuple[str, str]]:
    """The tool results in the last message of the request answered by ``reply_index``."""
    (req,) = [r for r in fm.message_requests if r.rule == rule_name and r.reply_index == reply_index]
    return tool_results(req.body, last_only=True)


async def test_the_model_asks_a_person_answers_and_the_next_request_carries_it(
    tmp_path: Path, fake_model: FakeModel, fake_model_env: dict[str, str]
) -> None:
    transport = ScriptedTransport()  # no script: each question waits for answer() below
    events: list[Event] = []
    log = tmp_path / ".flower" / "notes" / "问答记录.md"
    ch = HumanChannel(transport=transport, log_path=log, timeout_s=None, on_event=events.append)
    ch.post("the staging DB is read-only today", by="bob")
    main = fake_model.rule(
        tool_use(ch.tool_name, {"question": "Which database?", "options": ["PostgreSQL", "SQLite"]}),
        tool_use(ch.inbox_tool_name, {}),
        tool_use(ch.inbox_tool_name, {}),
        text("going with the answer"),
        when=prompt_contains("ASK-IT"),
        name="main",
    )
    fake_model.fallback(text("ok"), repeat_last=True)

    async def person() -> None:
        q = await transport.next_question()
        transport.answer(q.key, "SQLite", by="alice")

    answering = asyncio.create_task(person())
    results = await _run("ASK-IT", tmp_path, fake_model_env, ch)
    await answering

    assert results and not results[-1].is_error
    assert len(main.requests) == 4
    offered = {t["name"]: t.get("description", "") for t in main.requests[0].body.get("tools") or []}
    assert offered[ch.tool_name] == ASK_DESCRIPTION and ch.inbox_tool_name in offered  # loaded, not deferred
    (q,) = transport.asked
    assert (q.text, q.options, q.asked_by) == ("Which database?", ("PostgreSQL", "SQLite"), "协调者")
    assert q.timeout_s is None
    assert _results_after(fake_model, "main", 1) == [(ch.tool_name, "SQLite\n(回答人:alice)")]
    ((tool, inbox),) = _results_after(fake_model, "main", 2)
    assert tool == ch.inbox_tool_name and "- bob: the staging DB is read-only today" in inbox
    assert _results_after(fake_model, "main", 3) == [(ch.inbox_tool_name, "(空) nothing new")]  # drained once
    written = log.read_text(encoding="utf-8")
    assert "### Q1 (" in written and ", 协调者)" in written
    assert "1. PostgreSQL\n2. SQLite\n" in written and "**A**: SQLite — _answered by alice_" in written
    assert [(e.kind, e.step, e.phase, e.answer) for e in events] == [
        ("ask", "协调者", "asked", ""),
        ("ask", "协调者", "answered", "SQLite"),
    ]


async def test_nobody_answers_in_time_and_the_model_is_told_to_assume(
    tmp_path: Path, fake_model: FakeModel, fake_model_env: dict[str, str]
) -> None:
    transport = ScriptedTransport()  # nobody ever answers
    ch = HumanChannel(transport=transport, log_path=tmp_path / "qa.md", timeout_s=0.05, max_asks=1)
    main = fake_model.rule(
        tool_use(ch.tool_name, {"question": "Deploy on Friday?"}),
        tool_use(ch.tool_name, {"question": "Then on Monday?", "options": ["yes", "no"]}),
        text("assumed and noted"),
        when=prompt_contains("NOBODY-THERE"),
        name="main",
    )
    fake_model.fallback(text("ok"), repeat_last=True)

    results = await _run("NOBODY-THERE", tmp_path, fake_model_env, ch)

    assert results and not results[-1].is_error
    assert len(main.requests) == 3
    assert _results_after(fake_model, "main", 1) == [(ch.tool_name, TIMEOUT_TEXT.format(span=span(0.05)))]
    # past max_asks the tool refuses without asking anyone
    assert _results_after(fake_model, "main", 2) == [(ch.tool_name, LIMIT_TEXT.format(limit=1))]
    assert [q.text for q in transport.asked] == ["Deploy on Friday?"] and transport.waiting == []
    written = (tmp_path / "qa.md").read_text(encoding="utf-8")
    assert "Deploy on Friday?" in written and "_timeout; timeout after 0.05 s_" in written
    assert "Then on Monday?" not in written


async def test_a_question_with_a_default_and_deadline_goes_on_with_the_default(
    tmp_path: Path, fake_model: FakeModel, fake_model_env: dict[str, str]
) -> None:
    transport = ScriptedTransport()  # nobody answers
    events: list[Event] = []
    ch = HumanChannel(transport=transport, log_path=tmp_path / "qa.md", timeout_s=600,
                      on_event=events.append)
    fake_model.rule(
        tool_use(ch.tool_name, {"question": "Which port?", "options": ["8080", "9090"],
                                "default": "8080", "deadline_minutes": 0.001}),
        text("went on with 8080"),
        when=prompt_contains("DEADLINE"),
        name="main",
    )
    results = await _run("DEADLINE", tmp_path, fake_model_env, ch)
    assert results and not results[-1].is_error
    (asked,) = transport.asked
    assert asked.default == "8080" and asked.timeout_s == 0.06  # the question's own deadline
    shown = _results_after(fake_model, "main", 1)
    assert shown == [(ch.tool_name, TIMEOUT_DEFAULT_TEXT.format(span=span(0.06), default="8080"))]
    done = [e for e in events if isinstance(e, AskEvent) and e.phase == "answered"]
    assert done[0].state == "timeout" and done[0].answer == "8080"


def test_deadline_never_exceeds_the_channels_limit() -> None:
    assert HumanChannel(timeout_s=60).deadline(5) == 60
    assert HumanChannel(timeout_s=600).deadline(2) == 120
    assert HumanChannel(timeout_s=0).deadline(2) == 0
    assert HumanChannel(timeout_s=None).deadline(2) == 120
    assert HumanChannel(timeout_s=60).deadline("soon") == 60
    assert HumanChannel(timeout_s=60).deadline(None) == 60

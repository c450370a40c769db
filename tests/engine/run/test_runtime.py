"""Runtime and Workflow through the real CLI and the offline model (issue 3's proofs)."""

from __future__ import annotations

import json
import shutil

import pytest

from engine import AgentSpec, Resilience, Runtime, Step, Workflow
from engine.events import HandoffEvent, Interrupted, SessionStarted
from engine.authoring import HandoffPolicy
from engine._run.manifest import read_manifest
from engine.testing import (
    compaction,
    hold,
    overloaded,
    prompt_contains,
    prompt_too_long,
    text,
    tool_use,
    unauthorized,
)

FAST = Resilience(base_delay=0.01, max_delay=0.05, probe_interval=0.05, probe_timeout=0.5)

terse = AgentSpec(
    name="terse",
    instructions="回答极简,一行以内,不解释不寒暄。",
    allowed_tools=["Read", "Glob"],
    max_turns=4,
)


def conversation(request) -> str:
    """The user/assistant turns of a request (not the CLI's system text, which names paths)."""
    return json.dumps([m for m in request.messages if m.get("role") != "system"], ensure_ascii=False)


def assistant_messages(request) -> list:
    return [m for m in request.messages if m.get("role") == "assistant"]


def seed_step() -> Step:
    return Step("取词", terse, "读 seed.txt,只回文件里那个词。")


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "seed.txt").write_text("banana\n")
    return ws


def runtime(ws, **kw) -> Runtime:
    kw.setdefault("resilience", FAST)
    return Runtime(workspace=ws, run_dir=ws / "runs", **kw)


async def run_flow(ws, wf_steps=None, **kw):
    rt = runtime(ws, **kw)
    try:
        ctx = await Workflow(wf_steps or [seed_step()]).run(rt)
    finally:
        rt.close()
    return ctx, rt


async def test_minimal_example_twice_resumes_the_same_session(fake_model, ws):
    fake_model.rule(
        tool_use("Read", {"file_path": str(ws / "seed.txt")}), text("banana"),
        when=prompt_contains("seed.txt"))
    ctx1, _ = await run_flow(ws)
    ctx2, _ = await run_flow(ws)
    assert ctx1["_woke"] == 1 and ctx2["_woke"] == 2
    assert ctx1["_sessions"]["取词"] == ctx2["_sessions"]["取词"]
    assert ctx2["取词"] == "banana"
    # The second process really continued: the model was shown the first run's tool result.
    last = fake_model.message_requests[-1]
    assert "banana" in last.shown and len(last.messages) > 3
    lineage = json.loads((ws / "runs" / "lineage.json").read_text())
    assert lineage == {"workspace": str(ws.resolve()), "woke": 2,
                       "steps": {"取词": ctx1["_sessions"]["取词"]}}
    rows = read_manifest(ws / "runs" / "manifest.json")
    assert [r["step"] for r in rows] == ["取词", "取词"] and len({r["run"] for r in rows}) == 2
    assert all(r["ok"] and r["duration_s"] >= 0 for r in rows)


async def test_529_then_success_resumes_without_error_detail(fake_model, ws):
    fake_model.rule(
        text("banana", fault=overloaded(times=1)), when="seed.txt")
    events = []
    rt = runtime(ws)
    try:
        r = await rt.run(terse, "读 seed.txt,只回文件里那个词。", on_event=events.append)
    finally:
        rt.close()
    assert r.ok and r.attempts == 2 and r.resumed and r.text == "banana"
    assert len(r.errors) == 1
    assert [e.kind for e in events].count("retry") == 1
    sessions = [e.session_id for e in events if isinstance(e, SessionStarted)]
    assert sessions and set(sessions) == {r.session_id}  # each attempt's CLI named the one resumed session
    after = conversation(fake_model.message_requests[-1])
    assert "Overloaded" not in after and "529" not in after and "API Error" not in after
    assert "没有做完" in after  # the resume prompt, which carries no error detail


async def test_401_is_fatal_and_not_retried(fake_model, ws):
    fake_model.rule(text("never", fault=unauthorized()))
    rt = runtime(ws)
    try:
        r = await rt.run(terse, "hello")
    finally:
        rt.close()
    assert not r.ok and r.attempts == 1
    assert r.error and "API key" in r.error
    assert r.error_kind == "authentication_failed"  # structured: a front end says why without matching text
    assert read_manifest(ws / "runs" / "manifest.json")[-1]["error_kind"] == "authentication_failed"
    assert len(fake_model.message_requests) == 1


async def test_unreachable_endpoint_waits_then_continues(fake_model, ws):
    fake_model.rule(text("back"), when="ping")
    fake_model.go_offline()
    events = []

    def on_event(e):
        events.append(e)
        if e.kind == "offline":
            fake_model.go_online()

    rt = runtime(ws)
    try:
        r = await rt.run(terse, "ping", on_event=on_event)
    finally:
        rt.close()
    assert r.ok and r.text == "back" and r.attempts >= 2
    assert any(e.kind == "offline" for e in events)


async def test_prompt_too_long_hands_off_to_a_new_session(fake_model, ws):
    big = AgentSpec(name="big", instructions="", allowed_tools=["Read"], max_turns=4)
    fake_model.rule(text("continued fine"), when=prompt_contains("交接"))
    fake_model.rule(text("x", fault=prompt_too_long(times=1)), when=prompt_contains("long task"))
    rt = runtime(ws, workbench=True)
    events = []
    try:
        r = await rt.run(big, "long task: do it", on_event=events.append)
    finally:
        rt.close()
    assert r.ok and r.text == "continued fine"
    assert len(r.retired) == 1 and r.session_id not in r.retired
    doc = rt.workbench.notes / "交接-big.md"
    assert doc.is_file() and "long task" in doc.read_text()  # degraded: the task is in the scene
    first = [q for q in fake_model.message_requests if "交接" in q.prompt][0]
    assert "long task" in first.prompt
    phases = [e.phase for e in events if isinstance(e, HandoffEvent)]
    assert phases == ["writing", "done"]
    row = read_manifest(ws / "runs" / "manifest.json")[-1]
    assert row["retired"] == r.retired


async def test_context_threshold_has_the_session_write_its_handoff(fake_model, ws):
    spec = AgentSpec(name="干活", instructions="", allowed_tools=["Read"], max_turns=6)
    handoff = ("## 在做什么\n把 seed 读出来\n## 已定的事\n用 Read\n## 走不通的路\n无\n"
               "## 下一步\n回答 banana\n## 现场\nseed.txt 在根目录")
    fake_model.rule(text("done after handoff"), when=prompt_contains("回答 banana"))
    fake_model.rule(text(handoff), when=prompt_contains("交接文档"))
    fake_model.rule(
        tool_use("Read", {"file_path": str(ws / "seed.txt")}, usage={"input_tokens": 190_000}),
        text("never reached"),
        when=prompt_contains("big step"))
    rt = runtime(ws, workbench=True, handoff=HandoffPolicy(window=200_000, headroom=50_000))
    events = []
    try:
        r = await rt.run(spec, "big step", on_event=events.append)
    finally:
        rt.close()
    assert r.ok and r.text == "done after handoff" and len(r.retired) == 1
    phases = [e.phase for e in events if isinstance(e, HandoffEvent)]
    assert phases == ["near", "writing", "done"]
    done = [e for e in events if isinstance(e, HandoffEvent)][-1]
    assert done.degraded is False and done.retired == r.retired[0]
    doc = rt.workbench.notes / "交接-干活.md"
    assert "回答 banana" in doc.read_text()
    first_new = [q for q in fake_model.message_requests if "回答 banana" in q.prompt][0]
    assert not assistant_messages(first_new)  # a brand-new session whose first prompt is the handoff


@pytest.mark.parametrize("damage", ["copied", "no-db", "corrupt"])
async def test_lineage_guard_starts_fresh_without_error(fake_model, ws, tmp_path, damage):
    fake_model.rule(text("banana"), when=prompt_contains("seed.txt"))
    ctx1, _ = await run_flow(ws)
    first = ctx1["_sessions"]["取词"]
    target = ws
    if damage == "copied":
        target = tmp_path / "copy"
        shutil.copytree(ws, target)
    elif damage == "no-db":
        (ws / "runs" / "sessions.db").unlink()
    else:
        (ws / "runs" / "lineage.json").write_text("{not json")
    ctx2, _ = await run_flow(target)
    assert ctx2["_sessions"]["取词"] != first
    # Another workspace path or an unreadable file is no lineage at all; a lost sessions.db
    # only loses the sessions, the wake count of this folder goes on.
    assert ctx2["_woke"] == (2 if damage == "no-db" else 1)
    assert not assistant_messages(fake_model.message_requests[-1])  # fresh: nothing earlier


async def test_judge_like_run_inside_gate_stays_out_of_lineage(fake_model, ws):
    fake_model.rule(text("banana"), when=prompt_contains("seed.txt"))
    fake_model.rule(text("ok"), when=prompt_contains("judge me"))

    async def gate(result, ctx):
        judged = await ctx["_runtime"].run(terse, "judge me", step_name="取词·判定#1")
        return judged.ok

    step = seed_step()
    step.gate = gate
    ctx, rt = await run_flow(ws, [step])
    lineage = json.loads((ws / "runs" / "lineage.json").read_text())
    assert lineage["steps"] == {"取词": ctx["_sessions"]["取词"]}
    labels = [r["step"] for r in read_manifest(ws / "runs" / "manifest.json")]
    assert labels == ["取词", "取词·判定#1"]


async def test_gate_false_with_on_reject_continues_same_session_as_rounds(fake_model, ws):
    fake_model.rule(text("first"), when=prompt_contains("seed.txt"))
    fake_model.rule(text("second"), when=prompt_contains("try again"))
    step = seed_step()
    step.retries = 1
    step.gate = lambda result, ctx: result.text == "second"
    step.on_reject = lambda result, ctx: "try again"
    ctx, _ = await run_flow(ws, [step])
    assert ctx["_ok"] and ctx["取词"] == "second"
    labels = [r["step"] for r in read_manifest(ws / "runs" / "manifest.json")]
    assert labels == ["取词", "取词#round2"]
    rows = read_manifest(ws / "runs" / "manifest.json")
    assert rows[0]["session_id"] == rows[1]["session_id"]


async def test_interrupt_resumes_the_same_session_with_the_persons_words(fake_model, ws):
    held = hold()
    fake_model.rule(text("working", fault=held), when=prompt_contains("long job"))
    fake_model.rule(text("adjusted"), when=prompt_contains("use blue"))
    rt = runtime(ws)
    events = []
    try:
        import asyncio

        task = asyncio.create_task(rt.run(terse, "long job", on_event=events.append))
        await held.arrived()
        assert rt.interrupt("use blue")
        r = await task
    finally:
        held.release()
        rt.close()
    assert r.ok and r.text == "adjusted" and r.attempts == 1
    last = fake_model.message_requests[-1]
    assert "use blue" in last.prompt and "interrupted" in last.prompt
    assert "long job" in last.shown  # same session: the earlier prompt is still there
    assert [e.said for e in events if isinstance(e, Interrupted)] == ["use blue"]


def test_no_credentials_raise_at_construction(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "empty-config"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RuntimeError, match="ANTHROPIC_API_KEY"):
        Runtime(workspace=tmp_path, run_dir=tmp_path / "runs")


async def test_overflow_mid_conversation_hands_off_instead_of_cli_compaction(fake_model, ws):
    fake_model.rule(text("summary"), when=compaction())
    fake_model.rule(text("after handoff"), when=prompt_contains("交接"))
    fake_model.rule(
        tool_use("Read", {"file_path": str(ws / "seed.txt")}),
        text("x", fault=prompt_too_long(times=1)),
        when=prompt_contains("big task"))
    rt = runtime(ws)
    try:
        r = await rt.run(AgentSpec(name="big", instructions="", allowed_tools=["Read"]), "big task")
    finally:
        rt.close()
    assert r.ok and r.text == "after handoff" and len(r.retired) == 1
    assert not [q for q in fake_model.message_requests if compaction()(q.body)]

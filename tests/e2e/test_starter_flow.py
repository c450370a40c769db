"""A whole starter_flow through the real CLI and the offline model: clarify -> goal -> work ->
judge "not yet" -> round 2 -> judge "achieved"; then a wake with one more sentence; then --new."""

from __future__ import annotations

import json

import pytest

from engine import Resilience, Runtime, wake_state
from engine.events import StepStarted, VerdictGiven
from engine.authoring import starter_flow
from engine._run.manifest import read_manifest
from engine._human.transports import ScriptedTransport
from engine.testing import prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, JUDGE, COORDINATOR, WORKER
from engine._flow.starter import starter_paths


BRIEF = ("## 目标\n写一个 hello.txt\n## 验收标准\nhello.txt 内容是 hi\n## 边界\n只动 hello.txt\n"
         "## 未知与假设\n用 {lang}")
GOAL = "## 目标\n工作区里有 hello.txt\n## 判定清单\n- hello.txt 存在\n- 内容是 hi"
NOT_YET = "## 结论\n未达成\n## 理由\n内容不对\n## 未通过\n- 内容是 hi"
ACHIEVED = "## 结论\n达成\n## 理由\n都通过了\n## 未通过\n无"


def script(fm, ws):
    fm.rule(tool_use("mcp__human__ask", {"question": "用什么语言?", "options": ["Python", "Go"]}),
            text(BRIEF.format(lang="Python")), when=CLARIFIER)
    fm.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fm.rule(text(NOT_YET), text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")],
            sequence="call", repeat_last=True)
    fm.rule(tool_use("Write", {"file_path": str(ws / "hello.txt"), "content": "hi"}),
            tool_use("Bash", {"command": "cat hello.txt"}), text("wrote hello.txt"), when=WORKER)
    fm.rule(text("fixed in round 2"), when=[COORDINATOR, prompt_contains("还没有达成")])
    fm.rule(text("continued after wake"), when=[COORDINATOR, prompt_contains("补充一句")])
    fm.rule(tool_use("Write", {"file_path": str(ws / "x.txt"), "content": "no"}),
            tool_use("Agent", {"subagent_type": "coder", "description": "write hello",
                               "prompt": "Write hello.txt with hi, then cat it."}),
            text("round 1 done"), when=COORDINATOR, repeat_last=True)


async def run(ws, ask, transport=None, **kw):
    rt = Runtime(workspace=ws, run_dir=ws / "runs", workbench=starter_paths(ws).workbench,
                 resilience=Resilience(base_delay=0.01))
    events = []
    try:
        wf = starter_flow(ask, workspace=ws, run_dir=ws / "runs", transport=transport, **kw)
        ctx = await wf.run(rt, on_event=events.append)
    finally:
        rt.close()
    return ctx, events


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "proj"
    ws.mkdir()
    return ws


async def test_whole_starter_flow_then_wake_then_new(fake_model, ws):
    script(fake_model, ws)
    transport = ScriptedTransport(["Python"])
    ctx, events = await run(ws, "写个 hello.txt", transport)
    paths = starter_paths(ws)

    assert ctx["_ok"], (ctx.get("_failed"), ctx.get("_aborted"))
    assert [q.text for q in transport.asked] == ["用什么语言?"]
    assert (ws / "hello.txt").read_text() == "hi"
    assert not (ws / "x.txt").exists()  # the coordinator's own Write was denied
    assert "Python" in paths.brief.read_text() and "hello.txt 存在" in paths.goal.read_text()
    log = paths.log.read_text()
    assert "用什么语言?" in log and "Python" in log
    labels = [r["step"] for r in read_manifest(ws / "runs" / "manifest.json")]
    assert labels == ["确认需求", "设定目标", "干活", "干活·判定#1", "干活#round2", "干活·判定#2"]

    reqs = fake_model.message_requests
    clar = [r for r in reqs if CLARIFIER(r.body)]
    assert any("Python" in t for _, t in clar[-1].tool_results)  # the answer reached the model
    coord = [r for r in reqs if COORDINATOR(r.body)]
    assert "hello.txt 内容是 hi" in coord[0].prompt and "hello.txt 存在" in coord[0].prompt
    denied = [t for r in coord for _, t in r.tool_results if "Agent" in t and "x.txt" not in t]
    assert any("Agent" in t for t in denied)  # the delegate text points at the Agent tool
    judges = [r for r in reqs if JUDGE(r.body) and "判定这一轮" in r.prompt]
    assert len(judges) >= 2
    assert all(not [m for m in j.messages if m.get("role") == "assistant"] for j in judges[:1])
    round2 = [r for r in coord if "还没有达成" in r.prompt][0]
    assert "内容是 hi" in round2.prompt and "round 1 done" in round2.shown  # same session
    verdicts = [e.state for e in events if isinstance(e, VerdictGiven)]
    assert verdicts == ["not_yet", "achieved"]
    lineage = json.loads((ws / "runs" / "lineage.json").read_text())
    assert set(lineage["steps"]) == {"确认需求", "设定目标", "干活"}  # never the judge

    # Wake with one more sentence: it lands in all three places; clarify is skipped.
    state = wake_state(ws, run_dir=ws / "runs")
    assert state["waking"] and state["checks"] == 2 and state["woke"] == 1
    clar_before = len([r for r in fake_model.message_requests if CLARIFIER(r.body)])
    goal_before = len([r for r in fake_model.message_requests if "设定目标" in r.prompt])
    ctx2, events2 = await run(ws, "顺便加一个 bye.txt", ScriptedTransport([]))
    assert ctx2["_woke"] == 2
    assert "顺便加一个 bye.txt" in paths.brief.read_text()
    assert "唤醒时追加" in paths.brief.read_text()
    reqs = fake_model.message_requests
    assert len([r for r in reqs if CLARIFIER(r.body)]) == clar_before
    goal_reqs = [r for r in reqs if "设定目标" in r.prompt]
    assert len(goal_reqs) == goal_before + 1 and "顺便加一个 bye.txt" in goal_reqs[-1].prompt
    woke = [r for r in reqs if COORDINATOR(r.body) and "补充一句" in r.prompt][0]
    assert "顺便加一个 bye.txt" in woke.prompt and "round 1 done" in woke.shown
    assert [e.resumed for e in events2 if isinstance(e, StepStarted)][-1] is True

    # --new archives brief, goal and lineage together and starts fresh.
    starter_flow("另一件事", workspace=ws, run_dir=ws / "runs", new=True)
    archived = list((paths.workbench.notes / "archive").iterdir())
    assert len(archived) == 1
    assert sorted(p.name for p in archived[0].iterdir()) == ["lineage.json", "目标.md", "需求.md"]
    assert not paths.brief.exists() and (ws / "runs" / "sessions.db").exists()
    assert wake_state(ws, run_dir=ws / "runs")["waking"] is False


async def test_brief_missing_sections_is_sent_back_not_crashed(fake_model, ws):
    fake_model.rule(text("## 目标\n写个东西"), text(BRIEF.format(lang="Go")), when=CLARIFIER,
                    sequence="call")
    ctx, _ = await run(ws, "写个东西", clarify_only=True)
    assert ctx["_ok"]
    labels = [r["step"] for r in read_manifest(ws / "runs" / "manifest.json")]
    assert labels == ["确认需求", "确认需求#round2"]
    resent = [r for r in fake_model.message_requests if "缺少这几节" in r.prompt][0]
    assert "验收标准" in resent.prompt


async def test_hand_edited_brief_with_placeholder_reasks(fake_model, ws):
    paths = starter_paths(ws)
    paths.brief.parent.mkdir(parents=True)
    paths.brief.write_text("## 目标\n写个东西\n## 验收标准\n(未填)\n## 边界\n无\n## 未知与假设\n无\n")
    fake_model.rule(text(BRIEF.format(lang="Go")), when=CLARIFIER)
    ctx, _ = await run(ws, "写个东西", clarify_only=True)
    assert ctx["_ok"] and "用 Go" in paths.brief.read_text()
    first = [r for r in fake_model.message_requests if CLARIFIER(r.body)][0]
    assert "(未填)" in first.prompt  # the partial brief was shown to the clarifier


def test_empty_request_on_fresh_workspace_says_what_to_type(ws):
    with pytest.raises(ValueError, match="flower '帮我做一个 X'"):
        starter_flow("", workspace=ws, run_dir=ws / "runs")


def test_isolate_outside_git_raises_at_once(ws):
    with pytest.raises(ValueError, match="git"):
        starter_flow("x", workspace=ws, run_dir=ws / "runs", isolate=True)

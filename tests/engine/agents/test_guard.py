"""The hook layer, unit level: each guard's callback called with real-shaped hook inputs.

The input dicts follow what the CLI sends (see test_guard_e2e.py for the real thing): the main
thread's tool hooks carry no ``agent_id``, a subagent's do.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import AgentDefinition, HookMatcher

from engine._agents.guard import (
    BULKY,
    HANDS_ON,
    WRITE_ONLY,
    _is_main_thread,
    delegate_guard,
    index_guard,
    isolate_guard,
    isolated,
    merge_hooks,
    spill_guard,
    wants_isolation,
    whitelist_guard,
    workbench_hooks,
)
from engine._agents.workbench import Workbench


def _input(event: str, tool: str, tool_input: dict[str, Any], *, cwd: str = "/ws", agent: str | None = None,
           response: Any = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "session_id": "s-1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01",
    }
    if agent:
        data["agent_id"] = agent
        data["agent_type"] = "coder"
    if event == "PostToolUse":
        data["tool_response"] = response
    return data


async def _call(matcher: HookMatcher, data: dict[str, Any]) -> dict[str, Any]:
    (hook,) = matcher.hooks
    out = await hook(data, data.get("tool_use_id"), {"signal": None})
    assert isinstance(out, dict)  # None would count as a failure in the CLI
    return out


def _decision(out: dict[str, Any]) -> tuple[str | None, str]:
    spec = out.get("hookSpecificOutput") or {}
    return spec.get("permissionDecision"), spec.get("permissionDecisionReason", "")


# ── constants and the main-thread test ────────────────────────────────────────


def test_tool_groups() -> None:
    assert HANDS_ON == "Bash|Write|Edit|NotebookEdit"
    assert WRITE_ONLY == "Write|Edit|NotebookEdit"
    assert BULKY == "Bash|Read|Grep|Glob|WebFetch|WebSearch"


@pytest.mark.parametrize(
    ("extra", "main"),
    [({}, True), ({"agent_id": "a1b2"}, False), ({"agent_id": ""}, True), ({"agent_id": None}, True),
     ({"agent_type": "coder"}, True)],  # --agent sessions carry agent_type without agent_id
)
def test_is_main_thread(extra: dict[str, Any], main: bool) -> None:
    assert _is_main_thread({"tool_name": "Bash", **extra}) is main


# ── whitelist_guard ───────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("allowed", "matcher"),
    [
        (None, "Bash|Write|Edit|NotebookEdit"),
        ([], "Bash|Write|Edit|NotebookEdit"),
        (["Read", "Glob", "Grep"], "Bash|Write|Edit|NotebookEdit"),
        (["Read", "Bash"], "Write|Edit|NotebookEdit"),
        (["Write", "Edit"], "Bash|NotebookEdit"),
    ],
)
def test_whitelist_matcher(allowed: list[str] | None, matcher: str) -> None:
    m = whitelist_guard(allowed)
    assert m is not None and m.matcher == matcher


def test_whitelist_nothing_to_ban_is_none() -> None:
    assert whitelist_guard(["Read", "Bash", "Write", "Edit", "NotebookEdit"]) is None


async def test_whitelist_denies_main_thread_only() -> None:
    m = whitelist_guard(["Read"], role="确认者")
    assert m is not None
    decision, reason = _decision(await _call(m, _input("PreToolUse", "Write", {"file_path": "/ws/a"})))
    assert decision == "deny"
    assert reason.startswith("确认者没有 Write。")
    assert "有意的" in reason and "回复正文" in reason and "不要换个说法绕过" in reason
    assert await _call(m, _input("PreToolUse", "Write", {"file_path": "/ws/a"}, agent="a1")) == {}


# ── delegate_guard ────────────────────────────────────────────────────────────


@pytest.mark.parametrize("tool", ["Bash", "Write", "Edit", "NotebookEdit"])
async def test_delegate_denies_with_the_next_step(tool: str) -> None:
    m = delegate_guard()
    assert m.matcher == HANDS_ON
    decision, reason = _decision(await _call(m, _input("PreToolUse", tool, {"command": "ls"})))
    assert decision == "deny"
    assert tool in reason and "Agent" in reason and "subagent" in reason
    assert "验收标准" in reason and ".flower/artifacts/" in reason and "路径与结论" in reason


async def test_delegate_lets_subagents_through() -> None:
    m = delegate_guard()
    assert await _call(m, _input("PreToolUse", "Write", {"file_path": "/ws/a"}, agent="a1")) == {}


async def test_delegate_custom_tools() -> None:
    assert delegate_guard(tools=WRITE_ONLY).matcher == WRITE_ONLY


@pytest.mark.parametrize(
    ("command", "passes"),
    [
        ("git status", True),
        ("ls -la", True),
        ("git log --oneline -5 && git diff --stat", True),
        ("rm -rf build", False),
        ("git commit -m x", False),
        ("pytest -q", False),
        ("cat a > b", False),
        ("", False),
    ],
)
async def test_delegate_glance(command: str, passes: bool) -> None:
    data = _input("PreToolUse", "Bash", {"command": command})
    glance = await _call(delegate_guard(allow_glance=True), data)
    assert (glance == {}) is passes
    # without allow_glance even a glance is denied
    assert _decision(await _call(delegate_guard(), data))[0] == "deny"


async def test_delegate_glance_never_lets_writes_through() -> None:
    out = await _call(delegate_guard(allow_glance=True), _input("PreToolUse", "Write", {"command": "ls"}))
    assert _decision(out)[0] == "deny"


# ── spill_guard ───────────────────────────────────────────────────────────────


def _spilled(out: dict[str, Any]) -> Any:
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "PostToolUse"
    return spec["updatedToolOutput"]


def _spill_file(wb: Workbench, text: str) -> Path:
    return wb.spill / (hashlib.sha256(text.encode()).hexdigest()[:16] + ".txt")


async def test_spill_bash_stdout(tmp_path: Path) -> None:
    wb = Workbench(tmp_path)
    big = "".join(f"line {i:05d}\n" for i in range(1000))  # 11,000 chars
    response = {"stdout": big, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
    out = _spilled(await _call(spill_guard(wb), _input("PostToolUse", "Bash", {"command": "x"}, response=response)))
    f = _spill_file(wb, big)
    assert f.read_text(encoding="utf-8") == big
    assert set(out) == set(response)  # same keys
    assert out["stderr"] == "" and out["interrupted"] is False and out["isImage"] is False
    assert str(f) in out["stdout"]
    assert out["stdout"].endswith(big[:400])
    assert "11000" in out["stdout"]
    assert len(out["stdout"]) < 600


async def test_spill_leaves_small_and_threshold_results(tmp_path: Path) -> None:
    wb = Workbench(tmp_path)
    m = spill_guard(wb, threshold=100)
    for text in ("", "short", "x" * 100):
        assert await _call(m, _input("PostToolUse", "Bash", {}, response={"stdout": text, "stderr": ""})) == {}
    assert not wb.spill.exists()


async def test_spill_nested_read_file_keeps_structure(tmp_path: Path) -> None:
    wb = Workbench(tmp_path)
    content = "y" * 5000
    response = {"type": "text", "file": {"filePath": "/ws/big.txt", "content": content, "numLines": 1,
                                         "startLine": 1, "totalLines": 1}}
    data = _input("PostToolUse", "Read", {"file_path": "/ws/big.txt"}, response=response)
    out = _spilled(await _call(spill_guard(wb), data))
    assert out["type"] == "text"
    assert set(out["file"]) == set(response["file"])
    assert out["file"]["filePath"] == "/ws/big.txt" and out["file"]["numLines"] == 1
    assert str(_spill_file(wb, content)) in out["file"]["content"]
    assert response["file"]["content"] == content  # the input was not mutated


async def test_spill_never_touches_lists(tmp_path: Path) -> None:
    wb = Workbench(tmp_path)
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 9000}}
    files = ["/ws/" + "f" * 50 + str(i) for i in range(200)]
    response = {"content": [image], "filenames": files, "mode": "files_with_matches", "numFiles": 200}
    assert await _call(spill_guard(wb), _input("PostToolUse", "Grep", {}, response=response)) == {}
    # a bare list answer is left alone too
    assert await _call(spill_guard(wb), _input("PostToolUse", "WebSearch", {}, response=[image])) == {}


@pytest.mark.parametrize(
    "response",
    [
        # a Read of an image or PDF: the CLI turns file.base64 into an image/document block
        {"type": "image", "file": {"base64": "iVBOR" * 2000, "type": "image/png", "originalSize": 9000}},
        {"type": "pdf", "file": {"filePath": "/ws/a.pdf", "base64": "JVBER" * 2000, "originalSize": 9000}},
        # Bash output that is an image data URI
        {"stdout": "data:image/png;base64," + "A" * 9000, "stderr": "", "interrupted": False, "isImage": True},
        # a nested source block
        {"source": {"type": "base64", "media_type": "image/png", "data": "A" * 9000}},
    ],
)
async def test_spill_never_cuts_images(tmp_path: Path, response: dict[str, Any]) -> None:
    wb = Workbench(tmp_path)
    assert await _call(spill_guard(wb), _input("PostToolUse", "Read", {"file_path": "/ws/x"}, response=response)) == {}
    assert not wb.spill.exists()


async def test_spill_plain_string_response(tmp_path: Path) -> None:
    wb = Workbench(tmp_path)
    text = "z" * 4500
    out = _spilled(await _call(spill_guard(wb), _input("PostToolUse", "WebFetch", {}, response=text)))
    assert isinstance(out, str) and str(_spill_file(wb, text)) in out


async def test_spill_each_long_field_separately(tmp_path: Path) -> None:
    wb = Workbench(tmp_path)
    response = {"stdout": "o" * 5000, "stderr": "e" * 5000, "interrupted": False}
    out = _spilled(await _call(spill_guard(wb), _input("PostToolUse", "Bash", {}, response=response)))
    assert str(_spill_file(wb, "o" * 5000)) in out["stdout"]
    assert str(_spill_file(wb, "e" * 5000)) in out["stderr"]


async def test_spill_same_content_same_file(tmp_path: Path) -> None:
    wb = Workbench(tmp_path)
    data = _input("PostToolUse", "Bash", {}, response={"stdout": "q" * 5000, "stderr": ""})
    first = _spilled(await _call(spill_guard(wb), data))
    second = _spilled(await _call(spill_guard(wb), data))
    assert first == second
    assert len(list(wb.spill.iterdir())) == 1


@pytest.mark.parametrize("relative", [False, True])
async def test_spill_read_back_is_exempt(tmp_path: Path, relative: bool) -> None:
    wb = Workbench(tmp_path)
    big = "w" * 8000
    m = spill_guard(wb)
    await _call(m, _input("PostToolUse", "Bash", {}, response={"stdout": big, "stderr": ""}))
    f = _spill_file(wb, big)
    path = str(f.relative_to(tmp_path)) if relative else str(f)
    response = {"type": "text", "file": {"filePath": str(f), "content": big, "numLines": 1}}
    read_back = _input("PostToolUse", "Read", {"file_path": path}, cwd=str(tmp_path), response=response)
    assert await _call(m, read_back) == {}
    # a Read elsewhere, or a Grep of the spill folder, is still spilled
    other = _input("PostToolUse", "Read", {"file_path": str(tmp_path / "x.txt")}, cwd=str(tmp_path),
                   response=response)
    assert "hookSpecificOutput" in await _call(m, other)
    grep = _input("PostToolUse", "Grep", {"path": str(wb.spill)}, response={"content": big, "filenames": []})
    assert "hookSpecificOutput" in await _call(m, grep)


async def test_spill_main_only(tmp_path: Path) -> None:
    wb = Workbench(tmp_path)
    m = spill_guard(wb, main_only=True, tools="Bash")
    assert m.matcher == "Bash"
    response = {"stdout": "s" * 5000, "stderr": ""}
    assert await _call(m, _input("PostToolUse", "Bash", {}, agent="a1", response=response)) == {}
    assert "hookSpecificOutput" in await _call(m, _input("PostToolUse", "Bash", {}, response=response))
    # by default subagents are spilled too
    assert "hookSpecificOutput" in await _call(
        spill_guard(wb), _input("PostToolUse", "Bash", {}, agent="a1", response=response))


# ── index_guard ───────────────────────────────────────────────────────────────


async def test_index_refreshes_on_write_inside(tmp_path: Path) -> None:
    wb = Workbench(tmp_path).ensure()
    m = index_guard(wb)
    assert m.matcher == "Write|Edit"
    note = wb.notes / "决定.md"
    note.write_text("# 选 SQLite\n", encoding="utf-8")
    assert await _call(m, _input("PostToolUse", "Write", {"file_path": str(note)}, response={})) == {}
    assert "notes/决定.md — 选 SQLite" in wb.index_path.read_text(encoding="utf-8")
    # a relative path is resolved against the hook's cwd
    script = wb.scripts / "count.py"
    script.write_text("# desc: count things\n", encoding="utf-8")
    rel = _input("PostToolUse", "Edit", {"file_path": ".flower/scripts/count.py"}, cwd=str(tmp_path), response={})
    assert await _call(m, rel) == {}
    assert "scripts/count.py — count things" in wb.index_path.read_text(encoding="utf-8")


async def test_index_ignores_writes_outside(tmp_path: Path) -> None:
    wb = Workbench(tmp_path / "ws")
    m = index_guard(wb)
    for path in (str(tmp_path / "ws" / "src" / "a.py"), str(tmp_path / "ws" / ".flower-not" / "a"), ""):
        assert await _call(m, _input("PostToolUse", "Write", {"file_path": path}, response={})) == {}
    assert await _call(m, _input("PostToolUse", "Write", {}, response={})) == {}
    assert not wb.index_path.exists()


# ── isolated / wants_isolation / isolate_guard ────────────────────────────────


def _agent(name: str = "coder") -> AgentDefinition:
    return AgentDefinition(description=f"{name} role", prompt="do the work", tools=["Read", "Write"])


def test_isolated_mark() -> None:
    a = _agent()
    assert not wants_isolation(a)
    assert isolated(a) is a
    assert wants_isolation(a)
    assert "_flower_isolate" not in dataclasses.asdict(a)  # never reaches the CLI
    assert not wants_isolation(dataclasses.replace(a))  # the documented cost
    isolated(a, False)
    assert not wants_isolation(a)
    assert not wants_isolation(None)


def _agent_call(tool_input: dict[str, Any], tool: str = "Agent") -> dict[str, Any]:
    return _input("PreToolUse", tool, tool_input)


async def test_isolate_injects_worktree() -> None:
    seen: list[str] = []
    m = isolate_guard({"coder": isolated(_agent()), "reader": _agent("reader")}, on_inject=seen.append)
    assert m.matcher == "Agent"
    call = {"subagent_type": "coder", "description": "fix", "prompt": "fix the bug"}
    out = await _call(m, _agent_call(call))
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse" and spec["permissionDecision"] == "allow"
    assert spec["updatedInput"] == {**call, "isolation": "worktree"}
    assert "isolation" not in call  # the model's input dict was not mutated
    assert seen == ["coder"]
    # the model passed isolation None: still injected (a measured case)
    out = await _call(m, _agent_call({**call, "isolation": None}))
    assert out["hookSpecificOutput"]["updatedInput"]["isolation"] == "worktree"


@pytest.mark.parametrize(
    "tool_input",
    [
        {"subagent_type": "reader", "prompt": "look"},  # role not marked
        {"subagent_type": "ghost", "prompt": "look"},  # role unknown
        {"prompt": "no type"},
        {"subagent_type": "coder", "prompt": "p", "cwd": "/elsewhere"},  # cwd and isolation exclude
        {"subagent_type": "coder", "prompt": "p", "isolation": "none"},  # the model chose
    ],
)
async def test_isolate_leaves_alone(tool_input: dict[str, Any]) -> None:
    seen: list[str] = []
    m = isolate_guard({"coder": isolated(_agent()), "reader": _agent("reader")}, on_inject=seen.append)
    assert await _call(m, _agent_call(tool_input)) == {}
    assert seen == []


async def test_isolate_only_for_the_agent_tool() -> None:
    m = isolate_guard({"coder": isolated(_agent())})
    assert await _call(m, _agent_call({"subagent_type": "coder"}, tool="Task")) == {}


# ── workbench_hooks / merge_hooks ─────────────────────────────────────────────


def test_workbench_hooks_default(tmp_path: Path) -> None:
    hooks = workbench_hooks(Workbench(tmp_path))
    assert [m.matcher for m in hooks["PreToolUse"]] == [HANDS_ON]
    assert [m.matcher for m in hooks["PostToolUse"]] == ["Write|Edit", BULKY]


def test_workbench_hooks_variants(tmp_path: Path) -> None:
    wb = Workbench(tmp_path)
    assert set(workbench_hooks(wb, delegate_only=False)) == {"PostToolUse"}  # no empty lists
    assert [m.matcher for m in workbench_hooks(wb, spill_threshold=None)["PostToolUse"]] == ["Write|Edit"]
    assert [m.matcher for m in workbench_hooks(wb, spill_threshold=0)["PostToolUse"]] == ["Write|Edit"]
    plain = {"reader": _agent("reader")}
    assert len(workbench_hooks(wb, agents=plain)["PreToolUse"]) == 1  # nothing marked: no guard
    marked = {"reader": _agent("reader"), "coder": isolated(_agent())}
    assert [m.matcher for m in workbench_hooks(wb, agents=marked)["PreToolUse"]] == [HANDS_ON, "Agent"]
    only_iso = workbench_hooks(wb, delegate_only=False, agents=marked)
    assert [m.matcher for m in only_iso["PreToolUse"]] == ["Agent"]


async def test_workbench_hooks_glance(tmp_path: Path) -> None:
    (pre,) = workbench_hooks(Workbench(tmp_path), allow_glance=True)["PreToolUse"]
    assert await _call(pre, _input("PreToolUse", "Bash", {"command": "git status"})) == {}
    (strict,) = workbench_hooks(Workbench(tmp_path))["PreToolUse"]
    assert _decision(await _call(strict, _input("PreToolUse", "Bash", {"command": "git status"})))[0] == "deny"


async def test_workbench_hooks_spill_threshold(tmp_path: Path) -> None:
    wb = Workbench(tmp_path)
    spill = workbench_hooks(wb, spill_threshold=50)["PostToolUse"][1]
    out = await _call(spill, _input("PostToolUse", "Bash", {}, response={"stdout": "x" * 51, "stderr": ""}))
    assert "hookSpecificOutput" in out


def test_merge_hooks() -> None:
    a, b, c = HookMatcher(matcher="A"), HookMatcher(matcher="B"), HookMatcher(matcher="C")
    merged = merge_hooks({"PreToolUse": [a]}, None, {"PreToolUse": [b], "PostToolUse": [c]}, {}, {"PreToolUse": [a]})
    assert merged == {"PreToolUse": [a, b, a], "PostToolUse": [c]}  # extend, no dedup
    assert merge_hooks() == {}
    group = {"PreToolUse": [a]}
    merge_hooks(group, {"PreToolUse": [b]})
    assert group == {"PreToolUse": [a]}  # inputs are not mutated

"""The hook layer through the real Claude Code CLI, against the offline fake model.

What is asserted is what the model was shown in the next request and what is on disk.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import struct
import zlib
from pathlib import Path
from typing import Any

from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions, ResultMessage, query

from engine._agents.guard import isolate_guard, isolated, merge_hooks, workbench_hooks
from engine._agents.workbench import Workbench
from engine.testing import FakeModel, prompt_contains, system_contains, text, tool_results, tool_use


async def _run(prompt: str, ws: Path, env: dict[str, str], **options: Any) -> list[ResultMessage]:
    opts = ClaudeAgentOptions(cwd=str(ws), env=env, permission_mode="bypassPermissions", **options)
    return [m async for m in query(prompt=prompt, options=opts) if isinstance(m, ResultMessage)]


def _results_after(fm: FakeModel, rule_name: str, reply_index: int) -> list[tuple[str, str]]:
    """The tool results in the last message of the request answered by ``reply_index``."""
    (req,) = [r for r in fm.message_requests if r.rule == rule_name and r.reply_index == reply_index]
    return tool_results(req.body, last_only=True)


async def test_main_thread_write_is_denied_with_the_delegate_text(
    tmp_path: Path, fake_model: FakeModel, fake_model_env: dict[str, str]
) -> None:
    wb = Workbench(tmp_path).ensure()
    target = tmp_path / "hello.py"
    main = fake_model.rule(
        tool_use("Write", {"file_path": str(target), "content": "print('hi')\n"}),
        text("understood, I will delegate"),
        when=prompt_contains("WRITE-IT"),
        name="main",
    )
    fake_model.fallback(text("ok"), repeat_last=True)
    await _run("WRITE-IT", tmp_path, fake_model_env, hooks=workbench_hooks(wb))

    assert len(main.requests) == 2
    ((tool, shown),) = _results_after(fake_model, "main", 1)
    assert tool == "Write"
    assert "协调者不直接使用 Write" in shown
    assert "Agent 工具" in shown and ".flower/artifacts/" in shown and "路径与结论" in shown
    assert not target.exists()


async def test_big_bash_result_spills_and_reads_back_whole(
    tmp_path: Path, fake_model: FakeModel, fake_model_env: dict[str, str]
) -> None:
    wb = Workbench(tmp_path).ensure()
    lines = [f"row {i:04d} " + "." * 90 for i in range(100)]
    lines[-1] = "THE-LAST-LINE " + "." * 86
    big = "\n".join(lines)  # 10,000 chars; no final newline, so stdout is exactly this text
    (tmp_path / "big.txt").write_text(big, encoding="utf-8")
    spill_file = wb.spill / (hashlib.sha256(big.encode()).hexdigest()[:16] + ".txt")
    main = fake_model.rule(
        # `cat` is a glance (is_ephemeral), so allow_glance lets the main thread run it
        tool_use("Bash", {"command": "cat big.txt", "description": "show the big file"}),
        tool_use("Read", {"file_path": str(spill_file)}),
        tool_use("Read", {"file_path": str(tmp_path / "big.txt")}),
        text("read it all"),
        when=prompt_contains("SPILL-IT"),
        name="main",
    )
    fake_model.fallback(text("ok"), repeat_last=True)
    await _run("SPILL-IT", tmp_path, fake_model_env, hooks=workbench_hooks(wb, allow_glance=True))

    assert len(main.requests) == 4
    assert spill_file.read_text(encoding="utf-8") == big
    ((tool, shown),) = _results_after(fake_model, "main", 1)
    assert tool == "Bash"
    assert len(big) == 10_000
    assert str(spill_file) in shown and "10000" in shown
    assert lines[0] in shown  # the first 400 characters stay in context
    assert "THE-LAST-LINE" not in shown and len(shown) < 1000
    ((tool, read_back),) = _results_after(fake_model, "main", 2)
    assert tool == "Read"
    assert "THE-LAST-LINE" in read_back and "已存到" not in read_back  # not spilled a second time
    # any other big Read is spilled: the CLI accepts the rewritten nested {"file": {"content"}}
    ((tool, other),) = _results_after(fake_model, "main", 3)
    assert tool == "Read"
    assert "已存到" in other and str(wb.spill) in other and "THE-LAST-LINE" not in other


def _png(width: int, height: int) -> bytes:
    """A valid RGB PNG of random pixels (random, so it does not compress below the threshold)."""
    rows = b"".join(b"\x00" + os.urandom(width * 3) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


async def test_image_read_is_never_spilled(
    tmp_path: Path, fake_model: FakeModel, fake_model_env: dict[str, str]
) -> None:
    wb = Workbench(tmp_path).ensure()
    (tmp_path / "shot.png").write_bytes(_png(60, 60))  # about 11k bytes, 15k of base64
    main = fake_model.rule(
        tool_use("Read", {"file_path": str(tmp_path / "shot.png")}),
        text("seen"),
        when=prompt_contains("LOOK"),
        name="main",
    )
    fake_model.fallback(text("ok"), repeat_last=True)
    await _run("LOOK", tmp_path, fake_model_env, hooks=workbench_hooks(wb, spill_threshold=100))

    assert len(main.requests) == 2
    (result,) = [b for b in main.requests[1].messages[-1]["content"] if b.get("type") == "tool_result"]
    (image,) = [b for b in result["content"] if b.get("type") == "image"]
    data = image["source"]["data"]
    assert len(data) > 100 and base64.b64decode(data, validate=True)[:4] == b"\x89PNG"
    assert not wb.spill.exists()


async def test_subagent_passes_delegate_guard_and_its_write_refreshes_the_index(
    tmp_path: Path, fake_model: FakeModel, fake_model_env: dict[str, str]
) -> None:
    wb = Workbench(tmp_path).ensure()
    # not "report.md": the CLI refuses a subagent's Write of REPORT*/SUMMARY*/FINDINGS*/ANALYSIS*.md
    report = wb.artifacts / "sqlite-choice.md"
    coder = AgentDefinition(description="writes code", prompt="SUB-MARK you are the coder.", tools=["Write", "Read"])
    fake_model.rule(
        tool_use("Agent", {"subagent_type": "coder", "description": "write report", "prompt": "write the report"}),
        text("dispatched"),
        when=prompt_contains("DISPATCH"),
        name="main",
    )
    sub = fake_model.rule(
        tool_use("Write", {"file_path": str(report), "content": "# 调研结论:用 SQLite\n"}),
        text("wrote .flower/artifacts/sqlite-choice.md"),
        when=system_contains("SUB-MARK"),
        name="sub",
    )
    fake_model.fallback(text("ok"), repeat_last=True)
    await _run("DISPATCH", tmp_path, fake_model_env, hooks=workbench_hooks(wb), agents={"coder": coder})

    assert len(sub.requests) == 2
    ((tool, shown),) = _results_after(fake_model, "sub", 1)
    assert tool == "Write" and "协调者" not in shown  # the subagent was not denied
    assert report.read_text(encoding="utf-8") == "# 调研结论:用 SQLite\n"
    assert "- artifacts/sqlite-choice.md — 调研结论:用 SQLite" in wb.index_path.read_text(encoding="utf-8")


async def test_isolated_role_runs_in_its_own_worktree(
    tmp_path: Path, fake_model: FakeModel, fake_model_env: dict[str, str]
) -> None:
    ws = tmp_path / "repo"
    ws.mkdir()
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "init"]):
        if args[0] == "add":
            (ws / "README.md").write_text("repo\n", encoding="utf-8")
        proc = await asyncio.create_subprocess_exec(
            "git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args, cwd=ws
        )
        assert await proc.wait() == 0
    wb = Workbench(ws, home=tmp_path / ".flower-repo").ensure()  # isolation needs it outside the repo
    coder = isolated(AgentDefinition(description="writes code", prompt="ISO-MARK coder.", tools=["Bash"]))
    reader = AgentDefinition(description="reads code", prompt="PLAIN-MARK reader.", tools=["Bash"])
    injected: list[str] = []
    hooks = merge_hooks(workbench_hooks(wb, delegate_only=False), {"PreToolUse": [isolate_guard(
        {"coder": coder, "reader": reader}, on_inject=injected.append)]})
    fake_model.rule(
        tool_use("Agent", {"subagent_type": "coder", "description": "code", "prompt": "go code"}),
        tool_use("Agent", {"subagent_type": "reader", "description": "read", "prompt": "go read"}),
        text("dispatched"),
        when=prompt_contains("ISOLATE"),
        name="main",
    )
    for role, mark in (("coder", "ISO-MARK"), ("reader", "PLAIN-MARK")):
        fake_model.rule(
            tool_use("Bash", {"command": "pwd", "description": "where am I"}),
            text(f"{role} done"),
            when=system_contains(mark),
            name=role,
        )
    fake_model.fallback(text("ok"), repeat_last=True)
    await _run("ISOLATE", ws, fake_model_env, hooks=hooks, agents={"coder": coder, "reader": reader})

    assert injected == ["coder"]
    ((_, coder_pwd),) = _results_after(fake_model, "coder", 1)
    ((_, reader_pwd),) = _results_after(fake_model, "reader", 1)
    assert reader_pwd.strip() == str(ws.resolve())
    assert coder_pwd.strip() != str(ws.resolve()) and "worktree" in coder_pwd

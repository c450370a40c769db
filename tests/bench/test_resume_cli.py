"""``bench.resume_cli.resume_session`` on a hand-made transcript, through the real CLI and the fake model."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from bench.resume_cli import resume_session
from engine.testing import FakeModel, text

SID = "0b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
BIG = "build log line\n" * 2000  # 30,000 characters: far over the trim's 2,000
SMALL_CALLS = 21  # one more than the trim keeps whole, so the big result is old enough to spill


def _entry(kind: str, parent: str | None, content: Any, **extra: Any) -> dict[str, Any]:
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message = {"id": f"msg_{uuid.uuid4().hex[:20]}", "type": "message", "model": "claude-opus-4-5",
                   "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 10}, **message}
    return {"type": kind, "uuid": str(uuid.uuid4()), "parentUuid": parent, "sessionId": SID,
            "isSidechain": False, "userType": "external", "cwd": "/elsewhere/project", "version": "2.1.39",
            "timestamp": "2026-01-01T00:00:00.000Z", "message": message, **extra}


def transcript() -> list[dict[str, Any]]:
    """A first prompt, one Bash call with a big result, then small calls, and a last answer."""
    entries = [_entry("user", None, "Build the project and tell me how it went.")]
    for i in range(SMALL_CALLS + 1):
        call = f"toolu_{i:02d}{uuid.uuid4().hex[:16]}"
        command = "make all" if i == 0 else f"echo step {i}"
        entries.append(_entry("assistant", entries[-1]["uuid"], [
            {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}]))
        entries.append(_entry("user", entries[-1]["uuid"], [
            {"type": "tool_result", "tool_use_id": call, "content": BIG if i == 0 else f"step {i}"}],
            toolUseResult={"stdout": BIG if i == 0 else f"step {i}", "stderr": ""}))
    entries.append(_entry("assistant", entries[-1]["uuid"], [{"type": "text", "text": "All steps ran."}]))
    return entries


async def test_the_trimmed_request_is_smaller_and_the_prompt_reaches_the_model(
    tmp_path: Path, fake_model: FakeModel
) -> None:
    fake_model.fallback(text("ok"))
    got = await resume_session(fake_model, transcript(), tmp_path, "hand-made", prompt="Go on, please.")
    raw, trimmed = got["raw"], got["trimmed"]
    assert raw["error"] == trimmed["error"] == ""
    assert raw["session"] == trimmed["session"] == SID  # the CLI resumed it, no new session
    assert raw["prompt_reached"] and trimmed["prompt_reached"]
    assert raw["tool_result"] > len(BIG) > trimmed["tool_result"]  # the big result was spilled
    assert trimmed["chars"] < raw["chars"] - 25_000
    assert got["report"]["spilled"] == 1
    assert raw["calls_missing"] == trimmed["calls_missing"] == 0

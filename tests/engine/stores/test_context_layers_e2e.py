"""The load-time context layers end to end: the real CLI, the fake model, resume from the store alone.

One session gathers everything the layers exist for: many ``git status``/``ls`` glances, a large
tool result, three calls denied by a PreToolUse hook (one of them beside a parallel allowed call),
a Bash call interrupted while it runs, and a 529 answered with a synthetic API-error message.
Then the CLI's own transcript folder is deleted and the session is resumed from
``PruningSessionStore`` alone (on SQLite, then on PostgreSQL: ``backend``); the assertions read
what the model was shown in that request.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    ResultMessage,
    project_key_for_directory,
    query,
)

from engine._resume.policies import TrimPolicy
from engine.testing import FakeModel, overloaded, prompt_contains, reply, text, tool_use
from tests.engine.stores.backends import Backend

NOTE = "[上一轮在此中断,这个工具结果没有产生]"
BIG = "python3 -c \"print('B' * 5000)\""


def bash(cmd: str) -> Any:
    return tool_use("Bash", {"command": cmd, "description": "step"})


async def deny_rm(inp: dict[str, Any], tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
    if not inp["tool_input"]["command"].startswith("rm "):
        return {}
    return {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "rm is not allowed in this workspace (DENY-MARK)",
    }}


def tool_pairs(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(tool_use id, tool_result text) for every call; fails if a call lacks its result next."""
    pairs = []
    for i, m in enumerate(messages):
        if m["role"] != "assistant" or not isinstance(m["content"], list):
            continue
        for use in (b for b in m["content"] if b["type"] == "tool_use"):
            nxt = messages[i + 1]["content"]
            (res,) = [b for b in nxt if b.get("type") == "tool_result" and b["tool_use_id"] == use["id"]]
            body = res["content"]
            pairs.append((json.dumps(use["input"]), body if isinstance(body, str) else json.dumps(body)))
    return pairs


async def test_resume_from_the_store_shows_the_model_a_clean_history(
    tmp_path: Path, fake_model: FakeModel, fake_model_env: dict[str, str], backend: Backend
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    # `ls` prints more than the expiry note, or expiring it would add characters (not done)
    (ws / "a-file-whose-name-is-longer-than-the-expiry-note.txt").write_text("x")
    running = asyncio.Event()
    server = await asyncio.start_server(lambda r, w: (running.set(), w.close()), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    fake_model.rule(
        bash("git status"), bash("ls"), bash("git status"), bash(BIG), bash("rm -rf build1"),
        reply(bash("ls -la"), bash("rm -rf build2")), bash("ls"), bash("git status"),
        bash("rm -rf build3"), bash("ls"), bash("git status"), bash("pwd"), text("work done"),
        when=prompt_contains("START-TASK"), name="work",
    )
    fake_model.rule(bash(f"echo up > /dev/tcp/127.0.0.1/{port}; sleep 30"), text("slept"),
                    when=prompt_contains("SLEEP-NOW"), name="sleep")
    resumed = fake_model.rule(text("resumed"), when=prompt_contains("RESUME-NOW"), name="resume")
    fake_model.rule(overloaded(), when=prompt_contains("OVERLOAD-NOW"), name="busy", repeat_last=True)
    fake_model.fallback(text("ok"), repeat_last=True)

    store = backend.pruning(ws, TrimPolicy(keep_recent=5))
    options = dict(cwd=str(ws), env=fake_model_env, permission_mode="bypassPermissions",
                   session_store=store, session_store_flush="eager",
                   hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[deny_rm])]})
    results: list[ResultMessage] = []
    async with ClaudeSDKClient(ClaudeAgentOptions(**options)) as client:
        await client.query("START-TASK: tidy the repo")
        results += [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
        await client.query("SLEEP-NOW")
        await asyncio.wait_for(running.wait(), 120)  # the sleep command is running now
        await client.interrupt()
        results += [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
        await client.query("OVERLOAD-NOW")
        results += [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
    server.close()
    session_id = results[0].session_id
    assert [r.is_error for r in results] == [False, True, True]

    shutil.rmtree(Path(fake_model_env["CLAUDE_CONFIG_DIR"]) / "projects")  # only the store is left
    async for _ in query(prompt="RESUME-NOW", options=ClaudeAgentOptions(**options, resume=session_id)):
        pass

    (request,) = resumed.requests
    shown, messages = request.shown, request.messages
    pairs = tool_pairs(messages)  # every call still has its result right after it
    bodies = [body for _, body in pairs]
    assert "START-TASK" in json.dumps(messages[0])  # the chain reaches back to the first prompt
    # The CLI also leaves its own error message out on resume, so the store's count is the proof
    # that the layer found it in the real transcript and dropped it.
    assert "API Error" not in shown and "Overloaded" not in shown
    report = store.last_report
    assert (report["api_errors"], report["denials"], report["interrupted"]) == (1, 2, 1)
    assert (report["expired"], report["spilled"]) == (3, 1)
    # one denial stays (the newest), the others went with their calls; the parallel ls stayed
    assert sum("DENY-MARK" in b for b in bodies) == 1 and shown.count("DENY-MARK") == 1
    assert "build1" not in shown and "build2" not in shown and "rm -rf build3" in shown
    assert any('"ls -la"' in use for use, _ in pairs)
    # the interrupted call keeps its entry, with the neutral note as its body
    assert [b for use, b in pairs if "sleep 30" in use] == [NOTE]
    assert "STOP what you are doing" not in shown
    # the three oldest of the nine glances expired; the newest six are whole
    assert sum("的结果已过期" in b for b in bodies) == 3
    assert ["的结果已过期" in b for use, b in pairs if "git status" in use] == [
        True, True, False, False
    ]
    # the big result is a pointer to a spill file that holds the full text
    (pointer,) = [b for b in bodies if b.startswith("[Tool result trimmed on resume")]
    spill = Path(pointer.split(" are in ")[1].split(". Read")[0])
    assert spill.parent == (ws / ".flower" / "spill").resolve()
    assert spill.read_text().rstrip("\n") == "B" * 5000
    assert "B" * 401 not in shown
    # the archive is untouched: the error and all three denials are still stored
    raw = backend.raw()
    key = {"project_key": project_key_for_directory(ws), "session_id": session_id}
    archive = json.dumps(await raw.load(key))
    raw.close()
    assert "API Error" in archive and all(f"rm -rf build{i}" in archive for i in (1, 2, 3))
    assert "print('B' * 5000)" in archive and "B" * 5000 in archive
    store.close()


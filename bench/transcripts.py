"""Realistic transcript entries, shaped like the lines Claude Code (CLI 2.1.332) mirrors to a store.

What a real session's store holds (measured: a Runtime step against the fake model, and the
CLI's own JSONL files): a header of ``attachment`` entries at each process start (one of them a
~50 KB ``prompt_snapshot`` listing every tool), then per prompt a ``queue-operation`` pair and a
``user`` prompt, then model calls: one ``assistant`` entry per content block (same message id,
``usage`` on each), a ``last-prompt`` / ``atis-latch`` / ``tools-used`` after each, and one
``user`` ``tool_result`` entry per call whose ``toolUseResult`` repeats the output (so a Bash
output is stored twice). Tool mix: many short glances (``git status``, ``ls``), test and build
logs, some 5-20k-character Bash outputs, Read of whole files, Write and Edit. A few denials, API
errors and interruptions give the pruning pass real work. Deterministic for a given seed.
"""

from __future__ import annotations

import random
import uuid as uuidlib
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

__all__ = ["generate", "CLI_VERSION"]

CLI_VERSION = "2.1.332"
MODEL = "claude-opus-5-5"
_WORDS = (
    "the test fails because config loader reads the path before workspace exists so we "
    "create it first then retry parser handles empty lines module returns none when key "
    "missing update function add case check output compare expected value fix import order"
).split()
_GLANCES = ("git status", "ls -la", "git diff --stat", "git log --oneline -5", "ls src",
            "grep -rn TODO src", "wc -l src/app.py", "git branch --show-current", "pwd")
_LONG_CMDS = ("python -m pytest -q", "make build", "npm test -- --verbose", "cargo build 2>&1",
              "python -m pytest tests/ -x -v", "find . -name '*.py' | xargs wc -l")
_FILES = ("src/app.py", "src/config.py", "src/parser.py", "tests/test_app.py", "README.md",
          "src/cli.py", "src/store.py", "docs/notes.md")


class _Gen:
    """One transcript being written: the clock, the parent chain and the random source."""

    def __init__(self, seed: int, cwd: str) -> None:
        self.rnd = random.Random(seed)
        self.cwd = cwd
        self.sid = str(uuidlib.UUID(int=self.rnd.getrandbits(128), version=4))
        self.clock = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
        self.parent: str | None = None
        self.prompt_id = ""
        self.prompt = ""
        self.n_req = 0

    def uid(self) -> str:
        return str(uuidlib.UUID(int=self.rnd.getrandbits(128), version=4))

    def ts(self) -> str:
        self.clock += timedelta(milliseconds=self.rnd.randint(5, 4000))
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def words(self, n: int) -> str:
        return " ".join(self.rnd.choices(_WORDS, k=n))

    def lines(self, n: int, width: int) -> str:
        """``n`` log-like lines of about ``width`` characters."""
        out = []
        for i in range(n):
            head = f"{self.rnd.choice(_FILES)}:{i + 1}: "
            out.append((head + self.words(width // 5))[:width])
        return "\n".join(out)

    def chained(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Add the envelope every chained entry carries, and advance the parent chain."""
        uid = self.uid()
        entry = {"parentUuid": self.parent, "isSidechain": False, **entry, "uuid": uid,
                 "timestamp": self.ts(), "userType": "external", "entrypoint": "sdk-py",
                 "cwd": self.cwd, "sessionId": self.sid, "version": CLI_VERSION,
                 "gitBranch": "main"}
        self.parent = uid
        return entry


def _header(g: _Gen) -> Iterator[dict[str, Any]]:
    """The attachments the CLI writes when a process starts (environment, skills, tool list)."""
    tools = [{"name": f"Tool{i}", "description": g.words(220),
              "input_schema": {"type": "object", "properties": {"arg": {"type": "string"}}}}
             for i in range(30)]
    payloads = [
        {"type": "environment", "snapshot": {"workingDirectory": g.cwd, "isGitRepo": True,
                                              "platform": "linux", "shell": "bash"}},
        {"type": "model", "identity": {"modelId": MODEL}, "text": g.words(80)},
        {"type": "skill_listing", "content": g.words(2200), "skillCount": 12, "isInitial": True},
        {"type": "date", "date": g.clock.date().isoformat()},
        {"type": "prompt_snapshot", "systemPrompt": [""], "tools": tools, "reminderFold": False},
    ]
    for payload in payloads:
        yield g.chained({"attachment": payload, "type": "attachment"})


def _prompt(g: _Gen, index: int) -> Iterator[dict[str, Any]]:
    g.prompt, g.prompt_id = "Please " + g.words(g.rnd.randint(8, 60)), g.uid()
    for op in ("enqueue", "dequeue"):
        yield {"type": "queue-operation", "operation": op, "timestamp": g.ts(), "sessionId": g.sid}
    yield g.chained({
        "promptId": g.prompt_id, "type": "user", "message": {"role": "user", "content": g.prompt},
        "permissionMode": "acceptEdits", "promptSource": "sdk", "sentAtMs": 1796013135413,
        "rowSource": "local", "turnOrigin": "sdk",
        "turnPosition": {"promptIndex": index, "turnIndex": 1},
    })


def _assistant(g: _Gen, msg_id: str, index: int, block: dict[str, Any], stop: str) -> dict[str, Any]:
    usage = {"input_tokens": 10_000 + 40 * g.n_req, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 8_000 + 40 * g.n_req, "output_tokens": g.rnd.randint(20, 900),
             "service_tier": "standard",
             "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0}}
    return g.chained({
        "message": {"id": msg_id, "type": "message", "role": "assistant", "model": MODEL,
                    "content": [block], "stop_reason": stop, "stop_sequence": None,
                    "usage": usage, "stop_details": None},
        "apiBlockIndex": index, "requestId": f"req_{g.n_req:06d}", "requestRef": g.uid(),
        "requestedModel": MODEL, "promptCacheRequested": "5m", "type": "assistant",
        "effort": "medium", "perTurnEffort": "medium", "madeBy": "model",
    })


def _call(g: _Gen) -> tuple[str, dict[str, Any], str, Any]:
    """A tool call: (name, input, the result text the model sees, toolUseResult)."""
    r = g.rnd.random()
    path = f"{g.cwd}/{g.rnd.choice(_FILES)}"
    if r < 0.30:  # a glance: short, ephemeral
        cmd = g.rnd.choice(_GLANCES)
        out = g.lines(g.rnd.randint(2, 25), 60)
    elif r < 0.45:  # a test or build log, mid-sized
        cmd, out = g.rnd.choice(_LONG_CMDS), g.lines(g.rnd.randint(10, 60), 80)
    elif r < 0.53:  # a big one: 5-20k characters
        cmd, out = g.rnd.choice(_LONG_CMDS), g.lines(g.rnd.randint(60, 220), 90)
    else:
        cmd = ""
    if cmd:
        result = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False,
                  "noOutputExpected": False}
        return "Bash", {"command": cmd, "description": g.words(4)}, out, result
    if r < 0.78:
        body = g.lines(g.rnd.randint(20, 120), 60)
        shown = "\n".join(f"{i + 1:>6}\t{line}" for i, line in enumerate(body.split("\n")))
        result = {"type": "text", "file": {"filePath": path, "content": body,
                                           "numLines": body.count("\n") + 1, "startLine": 1}}
        return "Read", {"file_path": path}, shown, result
    if r < 0.88:
        body = g.lines(g.rnd.randint(5, 60), 60)
        result = {"type": "create", "filePath": path, "content": body, "structuredPatch": [],
                  "originalFile": None, "userModified": False}
        return "Write", {"file_path": path, "content": body}, f"File created successfully at: {path}", result
    old, new = g.words(6), g.words(7)
    original = g.lines(g.rnd.randint(20, 100), 60)
    result = {"filePath": path, "oldString": old, "newString": new, "originalFile": original,
              "structuredPatch": [{"oldStart": 3, "oldLines": 1, "newStart": 3, "newLines": 1,
                                   "lines": [f"-{old}", f"+{new}"]}],
              "userModified": False, "replaceAll": False}
    return "Edit", {"file_path": path, "old_string": old, "new_string": new}, (
        f"The file {path} has been updated successfully."), result


def _result(g: _Gen, use_uuid: str, tool_id: str, name: str, shown: str, tur: Any) -> dict[str, Any]:
    r = g.rnd.random()
    block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": shown,
                             "is_error": False}
    extra: dict[str, Any] = {"toolUseResult": tur, "sourceToolAssistantUUID": use_uuid,
                             "permissionDecision": {"decision": "accept", "source": "config"}}
    if r < 0.02:  # a PreToolUse hook refused it
        reason = f"PreToolUse:{name} hook error: not allowed in this role"
        block.update(content=reason, is_error=True)
        extra.update(toolUseResult=f"Error: {reason}", toolDenialKind="permission-rule")
    elif r < 0.025:  # interrupted while running
        block.update(is_error=True, content="The user doesn't want to proceed with this tool use. "
                     "Correction to the text above: this call was stopped while running.")
        extra.update(toolDenialKind="user-rejected")
    if name == "Bash":
        extra["sandboxed"] = False
    g.parent = use_uuid  # parallel results hang off their own tool_use entry, as the CLI writes them
    return g.chained({"promptId": g.prompt_id, "type": "user",
                      "message": {"role": "user", "content": [block]}, **extra})


def _model_call(g: _Gen, final: bool) -> Iterator[dict[str, Any]]:
    """One API response: its block entries, the bookkeeping lines, then the tool results."""
    g.n_req += 1
    msg_id = f"msg_{g.n_req:08d}{g.rnd.getrandbits(40):010x}"
    if g.rnd.random() < 0.004:  # a synthetic API error (529 with retries off)
        entry = _assistant(g, msg_id, 0, {"type": "text", "text": "API Error: 529 Overloaded."},
                           "stop_sequence")
        entry["message"]["model"] = "<synthetic>"
        yield {**entry, "error": "server_error", "isApiErrorMessage": True, "apiErrorStatus": 529}
        return
    blocks: list[dict[str, Any]] = []
    if final or g.rnd.random() < 0.4:
        blocks.append({"type": "text", "text": g.words(g.rnd.randint(10, 150 if final else 60))})
    calls = [] if final else [_call(g) for _ in range(g.rnd.choice((1, 1, 1, 2, 3)))]
    for name, inp, _, _ in calls:
        blocks.append({"type": "tool_use", "id": f"toolu_{g.uid().replace('-', '')[:24]}",
                       "name": name, "input": inp})
    stop = "tool_use" if calls else "end_turn"
    uses = []
    for i, block in enumerate(blocks):
        entry = _assistant(g, msg_id, i, block, stop)
        if block["type"] == "tool_use":
            uses.append((entry["uuid"], block["id"]))
        yield entry
    yield {"type": "last-prompt", "lastPrompt": g.prompt[:200], "leafUuid": g.parent, "sessionId": g.sid}
    yield {"type": "atis-latch", "atis": "", "sessionId": g.sid}
    if calls:
        yield {"type": "tools-used", "tools": sorted({c[0] for c in calls}), "sessionId": g.sid}
    for (use_uuid, tool_id), (name, _, shown, tur) in zip(uses, calls):
        yield _result(g, use_uuid, tool_id, name, shown, tur)


def _stream(g: _Gen) -> Iterator[dict[str, Any]]:
    prompt = 0
    while True:
        if prompt % 25 == 0:  # a new process (a resume) writes its header again
            yield from _header(g)
        yield from _prompt(g, prompt)
        for _ in range(g.rnd.randint(3, 30)):
            yield from _model_call(g, final=False)
        yield from _model_call(g, final=True)
        prompt += 1


def generate(n: int, *, seed: int = 0, cwd: str = "/workspace/project") -> list[dict[str, Any]]:
    """Exactly ``n`` entries of one session, in the order the CLI would mirror them."""
    g = _Gen(seed, cwd)
    out = []
    for entry in _stream(g):
        if len(out) >= n:
            break
        out.append(entry)
    return out

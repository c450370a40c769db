"""Small hand-made transcripts shaped like the CLI's: linked by parentUuid, one entry per block.

``Transcript`` appends entries the way Claude Code writes them: a prompt, per model turn one
assistant entry per tool call (same API message id), each result hanging off its own call, the
next turn off the last result; a subagent's entries (``isSidechain``) can be written into the
same file, and a compaction starts a new root whose ``logicalParentUuid`` points back.
"""

from __future__ import annotations

import itertools
from typing import Any

Entry = dict[str, Any]


class Transcript:
    """A transcript under construction; ``entries`` is the file, in order."""

    def __init__(self, prompt: str = "do the thing", *, version: str = "2.1.39") -> None:
        self.version = version
        self._ids = itertools.count()
        self.entries: list[Entry] = []
        self.parent: str | None = None
        self.user(prompt)

    def _uid(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    def _add(self, entry: Entry, *, parent: str | None = None, sidechain: bool = False) -> Entry:
        entry.setdefault("uuid", self._uid(entry["type"][:1]))
        entry.update(parentUuid=self.parent if parent is None else parent, isSidechain=sidechain,
                     sessionId="sess-1", version=self.version)
        self.entries.append(entry)
        return entry

    def user(self, text: str) -> Entry:
        e = self._add({"type": "user", "message": {"role": "user", "content": text}})
        self.parent = e["uuid"]
        return e

    def say(self, text: str, *, mid: str | None = None) -> Entry:
        e = self._add({"type": "assistant", "message": {
            "id": mid or self._uid("msg"), "role": "assistant", "content": [{"type": "text", "text": text}]}})
        self.parent = e["uuid"]
        return e

    def think(self, text: str, *, mid: str | None = None) -> Entry:
        """A thinking block, its own entry as the CLI writes it (``mid``: the response it opens)."""
        e = self._add({"type": "assistant", "message": {
            "id": mid or self._uid("msg"), "role": "assistant",
            "content": [{"type": "thinking", "thinking": text, "signature": "c2ln"}]}})
        self.parent = e["uuid"]
        return e

    def turn(self, *calls: tuple[str, dict[str, Any], Any], sidechain: bool = False,
             is_error: bool = False, extra: dict[str, Any] | None = None) -> list[Entry]:
        """One model response making ``calls`` (tool, input, result content) in parallel."""
        mid, parent, results = self._uid("msg"), self.parent, []
        uses = []
        for tool, inp, _ in calls:
            use_id = self._uid("toolu")
            uses.append(use_id)
            a = self._add({"type": "assistant", "message": {"id": mid, "role": "assistant", "content": [
                {"type": "tool_use", "id": use_id, "name": tool, "input": inp}]}},
                parent=parent, sidechain=sidechain)
            parent = a["uuid"]
            results.append(a)
        out = []
        for a, use_id, (_, _, content) in zip(results, uses, calls):
            u = self._add({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": use_id, "content": content, "is_error": is_error}]},
                **(extra or {})}, parent=a["uuid"], sidechain=sidechain)
            out.append(u)
        if not sidechain:
            self.parent = out[-1]["uuid"]
        return results + out

    def attachment(self, payload: dict[str, Any]) -> Entry:
        e = self._add({"type": "attachment", "attachment": payload})
        self.parent = e["uuid"]
        return e

    def compact(self, summary: str = "summary of the work so far") -> Entry:
        """A compaction: a boundary with no parent (logically after the old leaf), then the summary."""
        boundary = self._add({"type": "system", "subtype": "compact_boundary",
                              "logicalParentUuid": self.parent, "content": "Conversation compacted"},
                             parent="")
        boundary["parentUuid"] = None
        self.parent = boundary["uuid"]
        e = self._add({"type": "user", "isCompactSummary": True,
                       "message": {"role": "user", "content": summary}})
        self.parent = e["uuid"]
        return boundary

    def subagent(self, *calls: tuple[str, dict[str, Any], Any]) -> list[Entry]:
        """A subagent's turn written into this (main) file, as CLI 1.x and 2.0 did."""
        start = self._add({"type": "user", "message": {"role": "user", "content": "worker brief"}},
                          parent="", sidechain=True)
        start["parentUuid"] = None
        saved, self.parent = self.parent, start["uuid"]
        out = [start] + self.turn(*calls, sidechain=True)
        self.parent = saved
        return out


def bash(cmd: str, output: Any) -> tuple[str, dict[str, Any], Any]:
    return ("Bash", {"command": cmd, "description": "d"}, output)


def results_of(entries: list[Entry]) -> list[dict[str, Any]]:
    """Every tool_result block, in file order."""
    return [b for e in entries if e.get("type") == "user" and isinstance(e["message"]["content"], list)
            for b in e["message"]["content"] if b.get("type") == "tool_result"]

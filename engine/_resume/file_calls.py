"""What a transcript did to each file: its Read, Write and Edit calls, in order, and how they ended.

The shrink and spill passes ask one question of it: did a later call show this file again or
change it? Built from the shown chain (``engine._resume.chain``) only, so a call off the chain
(a subagent's, an abandoned branch's) proves nothing about what the model saw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine._resume.entries import Calls, Entry, calls_of

__all__ = ["WRITE_FIELDS", "FileCall", "file_calls", "later"]

# The input fields holding the text a call wrote (MultiEdit is gone from CLI 2.x: left alone).
WRITE_FIELDS = {"Write": ("content",), "Edit": ("old_string", "new_string")}
_FILE_TOOLS = ("Read", *WRITE_FIELDS)


@dataclass
class FileCall:
    """One call on a file: ``index``, its place among the chain's calls, the ``tool_use`` block,
    its ``tool_result`` block (None when the result is missing), and whether it succeeded."""

    index: int
    use: dict[str, Any]
    result: dict[str, Any] | None

    @property
    def name(self) -> str:
        return self.use["name"]

    @property
    def path(self) -> str:
        return self.use["input"]["file_path"]

    @property
    def ok(self) -> bool:
        return self.result is not None and not self.result.get("is_error")

    def covers(self, read: FileCall) -> bool:
        """This call shows or changes at least what the earlier Read ``read`` showed: a change
        (the old text is stale), a whole-file Read, or a Read of the same lines."""
        if not self.ok:
            return False
        if self.name != "Read":
            return True
        return self.span == (None, None) or self.span == read.span

    @property
    def span(self) -> tuple[Any, Any]:
        """The lines a Read asked for (``offset``, ``limit``); ``(None, None)``: the whole file."""
        return self.use["input"].get("offset"), self.use["input"].get("limit")


def file_calls(entries: list[Entry], calls: Calls | None = None) -> dict[str, list[FileCall]]:
    """Every Read/Write/Edit call of the chain ``entries`` (``calls``: its index, when the caller
    has one), by path, in order."""
    calls = calls or calls_of(entries)
    results = {b.get("tool_use_id"): b for _e, b in calls.results}
    found: dict[str, list[FileCall]] = {}
    for index, (use_id, use) in enumerate(calls.uses.items()):
        inp = use.get("input")
        if use.get("name") in _FILE_TOOLS and isinstance(inp, dict) and isinstance(inp.get("file_path"), str):
            found.setdefault(inp["file_path"], []).append(FileCall(index, use, results.get(use_id)))
    return found


def later(calls: list[FileCall], call: FileCall) -> list[FileCall]:
    """The calls on the same file after ``call``."""
    return [c for c in calls if c.index > call.index]

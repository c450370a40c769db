"""What a transcript did to each file: its Read, Write and Edit calls, in order, and how they ended.

The shrink and spill passes ask one question of it: did a later call show this file again or
change it? Built from the shown chain (``engine._stores.chain``) only, so a call off the chain
(a subagent's, an abandoned branch's) proves nothing about what the model saw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine._stores.entries import Entry, blocks_of, tool_results

__all__ = ["WRITE_FIELDS", "FileCall", "file_calls", "later"]

# The input fields holding the text a call wrote (MultiEdit is gone from CLI 2.x: left alone).
WRITE_FIELDS = {"Write": ("content",), "Edit": ("old_string", "new_string")}
_FILE_TOOLS = ("Read", *WRITE_FIELDS)


@dataclass
class FileCall:
    """One call on a file: ``index`` of its assistant entry in the chain, the ``tool_use`` block,
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
        span = lambda c: (c.use["input"].get("offset"), c.use["input"].get("limit"))  # noqa: E731
        return span(self) == (None, None) or span(self) == span(read)


def file_calls(entries: list[Entry]) -> dict[str, list[FileCall]]:
    """Every Read/Write/Edit call of the chain ``entries``, by path, in order."""
    results = {b.get("tool_use_id"): b for _e, b in tool_results(entries)}
    found: dict[str, list[FileCall]] = {}
    for index, entry in enumerate(entries):
        if entry.get("type") != "assistant":
            continue
        for block in blocks_of(entry) or []:
            if not (isinstance(block, dict) and block.get("type") == "tool_use"
                    and block.get("name") in _FILE_TOOLS):
                continue
            inp = block.get("input")
            if isinstance(inp, dict) and isinstance(inp.get("file_path"), str):
                found.setdefault(inp["file_path"], []).append(
                    FileCall(index, block, results.get(block.get("id"))))
    return found


def later(calls: list[FileCall], call: FileCall) -> list[FileCall]:
    """The calls on the same file after ``call``."""
    return [c for c in calls if c.index > call.index]

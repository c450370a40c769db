"""Two trim passes that need no spill file: old Write/Edit inputs, superseded attachments.

- A Write or Edit call carries the whole text it wrote in its input, and the model is shown it on
  every resumed round. Once the file was written and then read back (a later Read of the same
  path), the Read shows what the file holds; the old input shrinks to a pointer (path, size,
  sha256 prefix). Without a read-back the input stays: it is the only copy the model has.
- The CLI re-attaches a skill listing, an @-mentioned file, a memory file or a hook's context when
  it changes or a process starts: older copies of the same attachment stay in the transcript next
  to the fresh one. Only the newest copy of each is shown; the older entries are left out (their
  children re-linked, so the chain holds).

Both act only on the chain the CLI resumes (``engine._stores.chain``) and never on compact
summaries.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from engine._stores.entries import Entry, blocks_of, relink

__all__ = ["drop_superseded_attachments", "shrink_written_inputs"]

_WRITE_FIELDS = {"Write": ("content",), "Edit": ("old_string", "new_string")}
_MIN_CHARS = 300  # a shorter input costs less than the pointer that would replace it
# Attachments of which only the newest copy counts, and the field naming "the same one".
_SUPERSEDABLE = {
    # Only an identical copy: CLI 2.1.332 marks listings ``isInitial`` and may send deltas, so an
    # older listing that differs may hold skills the newer one does not repeat.
    "skill_listing": "content",
    "file": "filename",
    "nested_memory": "path",
    "compact_file_reference": "filename",
    "hook_additional_context": "hookName",
    "plan_file_reference": "planFilePath",
}


def _pointer(path: str, text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return (f"[{len(text)} characters written to {path} (sha256 {digest}); left out on resume: "
            "the file was read back after this, and that Read shows what it holds]")


def shrink_written_inputs(entries: list[Entry]) -> dict[str, int]:
    """Shrink the text inputs of Write/Edit calls whose file a later Read showed, in place.

    ``entries``: the shown chain, in order. Returns ``{"shrunk": calls, "shrunk_chars": n}``.
    """
    last_read: dict[str, int] = {}  # path -> index of its newest Read call
    calls: list[tuple[int, dict[str, Any]]] = []
    for index, entry in enumerate(entries):
        if entry.get("type") != "assistant":
            continue
        for block in blocks_of(entry) or []:
            if not (isinstance(block, dict) and block.get("type") == "tool_use"):
                continue
            inp = block.get("input")
            path = inp.get("file_path") if isinstance(inp, dict) else None
            if not isinstance(path, str):
                continue
            if block.get("name") == "Read":
                last_read[path] = index
            elif block.get("name") in _WRITE_FIELDS:
                calls.append((index, block))
    report = {"shrunk": 0, "shrunk_chars": 0}
    for index, block in calls:
        inp = block["input"]
        if last_read.get(inp["file_path"], -1) <= index:
            continue  # never read back since: this input is the model's only copy
        saved = 0
        for name in _WRITE_FIELDS[block["name"]]:
            text = inp.get(name)
            if isinstance(text, str) and len(text) >= _MIN_CHARS:
                pointer = _pointer(inp["file_path"], text)
                inp[name] = pointer
                saved += len(text) - len(pointer)
        if saved:
            report["shrunk"] += 1
            report["shrunk_chars"] += saved
    return report


def _identity(entry: Entry) -> tuple[str, Any] | None:
    payload = entry.get("attachment")
    if entry.get("type") != "attachment" or not isinstance(payload, dict):
        return None
    kind = payload.get("type")
    if kind not in _SUPERSEDABLE:
        return None
    field = _SUPERSEDABLE[kind]
    name = payload.get(field)
    if not isinstance(name, str):
        return None  # cannot tell which one it is: keep it
    return kind, name


def drop_superseded_attachments(entries: list[Entry], shown: list[Entry]) -> tuple[list[Entry], dict[str, int]]:
    """``entries`` without the older shown copies of an attachment, and counts
    ``{"attachments": n, "attachment_chars": n}``; children of a dropped one are re-linked."""
    newest: dict[tuple[str, Any], int] = {}
    for entry in reversed(shown):
        key = _identity(entry)
        if key is not None and key not in newest:
            newest[key] = id(entry)
    dropped = [e for e in shown if (k := _identity(e)) is not None and newest[k] != id(e)]
    report = {"attachments": len(dropped), "attachment_chars": sum(_size(e) for e in dropped)}
    if not dropped:
        return entries, report
    gone = {id(e) for e in dropped}
    kept = [e for e in entries if id(e) not in gone]
    relink(kept, {e["uuid"]: e.get("parentUuid") for e in dropped if e.get("uuid")})
    shown[:] = [e for e in shown if id(e) not in gone]
    return kept, report


def _size(entry: Entry) -> int:
    return len(json.dumps(entry.get("attachment"), ensure_ascii=False))

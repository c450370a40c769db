"""Trim passes that need no spill file: what a later call or attachment made obsolete.

- A Write or Edit call carries the whole text it wrote in its input, and the model is shown it on
  every resumed round. Once a later call read the file back or changed it again, the old input
  is history: it shrinks to a pointer (path, size, sha256 prefix). Without such a call the input
  stays here (it is the only copy the model was shown; the spill pass moves it out once it is old,
  ``engine._stores.trim``).
- An old view of a file (a Read result, an Edit's snippet of the edited file) that a later call
  showed again or changed is left out with a one-line note: the later call shows what the file
  holds. This is supersession, not expiry: the spec keeps Read out of the ephemeral rule because a
  file's text does not go stale by itself, and a view nothing replaced stays. (After a resume the
  CLI asks for a fresh Read before any Edit anyway.)
- The CLI re-attaches a skill listing, an @-mentioned file, a memory file or a hook's context when
  it changes or a process starts: older copies of the same attachment stay in the transcript next
  to the fresh one. Only the newest copy of each is shown; the older entries are left out (their
  children re-linked, so the chain holds).

All act only on the chain the CLI resumes (``engine._stores.chain``) and never on compact
summaries.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from engine._stores.entries import Entry, relink, replace_text, result_text, tool_results
from engine._stores.file_calls import WRITE_FIELDS, FileCall, file_calls, later

__all__ = ["drop_stale_views", "drop_superseded_attachments", "shrink_written_inputs", "written_pointer"]

_MIN_CHARS = 300  # a shorter input costs less than the pointer that would replace it
_VIEWS = ("Read", "Edit")  # results that show a file's text (an Edit result shows a snippet)
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


def written_pointer(path: str, text: str, why: str) -> str:
    """The line that replaces ``text`` a call wrote to ``path``; ``why`` ends the sentence."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"[{len(text)} characters written to {path} (sha256 {digest}); left out on resume: {why}]"


def _why_written(call: FileCall, calls: list[FileCall]) -> str | None:
    after = [c for c in later(calls, call) if c.ok]
    if any(c.name == "Read" for c in after):
        return "the file was read back after this, and that Read shows what it holds"
    if after:
        return "the file was changed again after this; Read it for what it holds now"
    return None


def shrink_written_inputs(entries: list[Entry]) -> dict[str, int]:
    """Shrink the text inputs of Write/Edit calls whose file a later call read back or changed
    again, in place. ``entries``: the shown chain, in order. Returns ``{"shrunk": calls,
    "shrunk_chars": n}``."""
    report = {"shrunk": 0, "shrunk_chars": 0}
    for calls in file_calls(entries).values():
        for call in calls:
            if call.name not in WRITE_FIELDS or (why := _why_written(call, calls)) is None:
                continue  # never read back or changed since: this input is the model's only copy
            saved = 0
            for name in WRITE_FIELDS[call.name]:
                text = call.use["input"].get(name)
                if isinstance(text, str) and len(text) >= _MIN_CHARS:
                    pointer = written_pointer(call.path, text, why)
                    call.use["input"][name] = pointer
                    saved += len(text) - len(pointer)
            if saved:
                report["shrunk"] += 1
                report["shrunk_chars"] += saved
    return report


def drop_stale_views(entries: list[Entry], keep_recent: int) -> dict[str, int]:
    """Replace old views of a file that a later call showed again or changed with a note, in place.

    Only views among the results older than the ``keep_recent`` newest (``TrimPolicy``'s window),
    only text, and only when the note is shorter. Returns ``{"stale_views": n, "stale_view_chars": n}``.
    """
    results = [b for _e, b in tool_results(entries)]
    old = {id(b) for b in results[: max(len(results) - max(keep_recent, 0), 0)]}
    report = {"stale_views": 0, "stale_view_chars": 0}
    for path, calls in file_calls(entries).items():
        for call in calls:
            if call.name not in _VIEWS or call.result is None or id(call.result) not in old:
                continue
            newer = [c for c in later(calls, call) if c.covers(call)]
            text = result_text(call.result)
            if not newer or text is None:
                continue
            how = "read again" if all(c.name == "Read" for c in newer) else "changed"
            note = (f"[An older view of {path}, left out on resume: the file was {how} after this; "
                    "Read it for what it holds now]")
            if len(note) < len(text):
                replace_text(call.result, note)
                report["stale_views"] += 1
                report["stale_view_chars"] += len(text) - len(note)
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

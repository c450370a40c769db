"""Trim passes that need no spill file: what a later call or attachment made obsolete.

- A Write or Edit call carries the whole text it wrote in its input, and the model is shown it on
  every resumed round. Once a later call read the file back or changed it again, the old input
  is history: it shrinks to a pointer (path, size, sha256 prefix). Without such a call the input
  stays here (it is the only copy the model was shown; the spill pass moves it out once it is old,
  ``engine._resume.spill``).
- An old view of a file (a Read result, an Edit's snippet of the edited file) that a later call
  showed again or changed is left out with a one-line note: the later call shows what the file
  holds. This is supersession, not expiry: the spec keeps Read out of the ephemeral rule because a
  file's text does not go stale by itself, and a view nothing replaced stays. (After a resume the
  CLI asks for a fresh Read before any Edit anyway.)
- The old output of a Bash command run again later, word for word, is left out with a one-line
  note: the newer run shows what it prints now.
- Every TodoWrite call sends the whole list: only the newest call (and its result) is shown.
- The CLI re-attaches a skill listing, an @-mentioned file, a memory file or a hook's context when
  it changes or a process starts: older copies of the same attachment stay in the transcript next
  to the fresh one. Only the newest copy of each is shown; the older entries are left out (their
  children re-linked, so the chain holds).

All act only on the chain the CLI resumes (``engine._resume.chain``) and never on compact
summaries.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from engine._resume.entries import (
    Calls,
    Entry,
    calls_of,
    command_of,
    drop_calls,
    leave_out,
    replace_text,
    result_text,
)
from engine._resume.file_calls import WRITE_FIELDS, FileCall, file_calls, later

__all__ = [
    "RERUN_NOTE",
    "drop_rerun_outputs",
    "drop_stale_views",
    "drop_superseded_attachments",
    "drop_superseded_todos",
    "shrink_written_inputs",
    "written_pointer",
]

_MIN_CHARS = 300  # a shorter input costs less than the pointer that would replace it
_VIEWS = ("Read", "Edit")  # results that show a file's text (an Edit result shows a snippet)
RERUN_NOTE = "[Output of an earlier run of this command, left out on resume: it was run again later]"
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


def shrink_written_inputs(entries: list[Entry], calls: Calls | None = None) -> dict[str, int]:
    """Shrink the text inputs of Write/Edit calls whose file a later call read back or changed
    again, in place. ``entries``: the shown chain, in order. Returns ``{"shrunk": calls,
    "shrunk_chars": n}``; ``calls``: the chain's index, when the caller has one."""
    report = {"shrunk": 0, "shrunk_chars": 0}
    for same_file in file_calls(entries, calls).values():
        for call in same_file:
            if call.name not in WRITE_FIELDS or (why := _why_written(call, same_file)) is None:
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


def drop_stale_views(entries: list[Entry], keep_recent: int, calls: Calls | None = None) -> dict[str, int]:
    """Replace old views of a file that a later call showed again or changed with a note, in place.

    Only views among the results older than the ``keep_recent`` newest (``TrimPolicy``'s window),
    only text, and only when the note is shorter. Returns ``{"stale_views": n, "stale_view_chars": n}``.
    """
    calls = calls or calls_of(entries)
    results = [b for _e, b in calls.results]
    old = {id(b) for b in results[: max(len(results) - max(keep_recent, 0), 0)]}
    report = {"stale_views": 0, "stale_view_chars": 0}
    for path, same_file in file_calls(entries, calls).items():
        for call in same_file:
            if call.name not in _VIEWS or call.result is None or id(call.result) not in old:
                continue
            newer = [c for c in later(same_file, call) if c.covers(call)]
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


def drop_rerun_outputs(entries: list[Entry], keep_recent: int, calls: Calls | None = None) -> dict[str, int]:
    """Replace the old output of a Bash command that was run again later with a note, in place.

    The same command, word for word, run again with a result: the newer output shows what it
    prints now (a test run, a build, a retried push). Only results older than the
    ``keep_recent`` newest, only text, never a background start. Returns ``{"reruns": n,
    "rerun_chars": n}``.
    """
    calls = calls or calls_of(entries)
    results = [b for _e, b in calls.results]
    commands = [_foreground_command(calls.uses.get(b.get("tool_use_id", ""))) for b in results]
    last_run = {cmd: i for i, cmd in enumerate(commands) if cmd}
    report = {"reruns": 0, "rerun_chars": 0}
    for i, block in enumerate(results[: max(len(results) - max(keep_recent, 0), 0)]):
        text = result_text(block)
        if not commands[i] or last_run[commands[i]] == i or text is None or len(text) <= len(RERUN_NOTE):
            continue
        replace_text(block, RERUN_NOTE)
        report["reruns"] += 1
        report["rerun_chars"] += len(text) - len(RERUN_NOTE)
    return report


def _foreground_command(use: dict[str, Any] | None) -> str:
    inp = use.get("input") if isinstance(use, dict) and use.get("name") == "Bash" else None
    if not isinstance(inp, dict) or inp.get("run_in_background"):
        return ""
    return command_of(use)


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
    return leave_out(entries, shown, dropped), report


def drop_superseded_todos(
    entries: list[Entry], shown: list[Entry], calls: Calls | None = None
) -> tuple[list[Entry], dict[str, int]]:
    """``entries`` without every shown TodoWrite call but the newest, each with its result, and
    counts ``{"todos": n, "todo_chars": n}``: a TodoWrite sends the whole list, so the newest one
    holds every item's state and an older one only what the list was once. ``calls``: the shown
    chain's index, when the caller has one."""
    todos = [use_id for use_id, use in (calls or calls_of(shown)).uses.items() if use.get("name") == "TodoWrite"]
    dropped: list[Entry] = []
    chars = drop_calls(shown, set(todos[:-1]), dropped) if len(todos) > 1 else 0
    return leave_out(entries, shown, dropped), {"todos": max(len(todos) - 1, 0), "todo_chars": chars}


def _size(entry: Entry) -> int:
    return len(json.dumps(entry.get("attachment"), ensure_ascii=False))

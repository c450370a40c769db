"""``drop_old_thinking``: on resume, the model's reasoning of old turns is left out.

A thinking block is the model's scratch work for one response. Its outcome stays: the text it
said, the calls it made and their results. The API lets a caller omit thinking blocks of earlier
turns (only the newest assistant turn's must come back unchanged), and for most models it strips
them from the context itself, so re-sending them buys nothing. The turns inside
``TrimPolicy``'s window (the ``keep_recent`` newest results) keep theirs: the model is most
likely to build on that reasoning, and a resume in the middle of a tool loop needs the newest.
Signatures are never edited: a block is sent whole or not at all.
"""

from __future__ import annotations

import json

from engine._resume.entries import Entry, blocks_of, leave_out, window_start

__all__ = ["drop_old_thinking"]

_THINKING = ("thinking", "redacted_thinking")


def _message_id(entry: Entry) -> object:
    message = entry.get("message")
    return message.get("id") if isinstance(message, dict) else None


def drop_old_thinking(entries: list[Entry], shown: list[Entry], keep_recent: int) -> tuple[list[Entry], dict[str, int]]:
    """``entries`` without the thinking blocks of shown assistant turns before the window (the
    newest assistant message always keeps its own), and ``{"thinking": blocks, "thinking_chars":
    n}``. An entry left without blocks is dropped and its children re-linked."""
    start = window_start(shown, keep_recent)
    newest = next((_message_id(e) for e in reversed(shown) if e.get("type") == "assistant"), None)
    report = {"thinking": 0, "thinking_chars": 0}
    dropped: list[Entry] = []
    for entry in shown[:start]:
        blocks = blocks_of(entry)
        if entry.get("type") != "assistant" or not blocks or _message_id(entry) in (newest, None):
            continue
        old = [b for b in blocks if isinstance(b, dict) and b.get("type") in _THINKING]
        if not old:
            continue
        report["thinking"] += len(old)
        report["thinking_chars"] += sum(len(json.dumps(b, ensure_ascii=False)) for b in old)
        blocks[:] = [b for b in blocks if not (isinstance(b, dict) and b.get("type") in _THINKING)]
        if not blocks:
            dropped.append(entry)
    return leave_out(entries, shown, dropped), report

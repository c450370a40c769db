"""``drop_old_images``: on resume, an image shown long ago becomes a note naming its file.

An image is sent again with every request of its session (about 1,600 tokens for a screenshot,
and its base64 rides in every frame), long after the model looked at it. Images in the entries
before ``TrimPolicy``'s window (older than the ``keep_recent`` newest tool results) are replaced,
each by one text block: the person's images by a note naming the file their label gave
(``engine._media.image``: "Image: <path>" just before the image), a Read of an image file by a
note naming the file read, any other by a note saying where the files people share are. The
model can Read the file again.

An image block is atomic: it is replaced whole or kept whole, its base64 never cut (a block with
half its data is refused by the API, and so is every later request of the session). Only image
blocks are replaced: their label, the tool_result holding one (the red line of
``engine._resume.passes``) and documents stay.
"""

from __future__ import annotations

import json
from typing import Any

from engine._lang import LANGUAGES, words
from engine._resume.entries import Calls, Entry, blocks_of, calls_of, window_start

__all__ = ["drop_old_images", "image_label_name"]


def image_label_name(text: Any) -> str | None:
    """The file a label block names ("Image: <path>", in either language), or None."""
    if not isinstance(text, str):
        return None
    for code in LANGUAGES:
        head, _, tail = words(code).IMAGE_LABEL.partition("{name}")
        if text.startswith(head) and text.endswith(tail) and len(text) > len(head) + len(tail):
            return text[len(head):len(text) - len(tail)].strip() or None
    return None


def _note(name: str | None) -> dict[str, str]:
    w = words()
    return {"type": "text", "text": w.IMAGE_LEFT_OUT.format(name=name) if name else w.IMAGE_LEFT_OUT_UNNAMED}


def _is_image(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "image"


def _replace_images(blocks: list[Any], named: str | None, report: dict[str, int]) -> None:
    """Replace every image block of ``blocks`` in place; ``named``: the file they all show (a
    Read's), else each is named by the label block just before it, if any."""
    for i, block in enumerate(blocks):
        if not _is_image(block):
            continue
        before = blocks[i - 1] if i else None
        label = before.get("text") if isinstance(before, dict) and before.get("type") == "text" else None
        note = _note(named or image_label_name(label))
        report["images"] += 1
        report["image_chars"] += max(len(json.dumps(block)) - len(json.dumps(note, ensure_ascii=False)), 0)
        blocks[i] = note


def _read_path(calls: Calls, block: dict[str, Any]) -> str | None:
    use = calls.uses.get(block.get("tool_use_id", "")) or {}
    path = (use.get("input") or {}).get("file_path") if use.get("name") == "Read" else None
    return path if isinstance(path, str) and path else None


def drop_old_images(shown: list[Entry], keep_recent: int, calls: Calls | None = None) -> dict[str, int]:
    """Replace the image blocks of the shown entries before the window with notes, in place:
    in a message's content and inside a tool_result's. Returns ``{"images": n, "image_chars":
    characters removed}``; ``calls``: the chain's index, when the caller has one."""
    calls = calls or calls_of(shown)
    report = {"images": 0, "image_chars": 0}
    for entry in shown[:window_start(shown, keep_recent)]:
        blocks = blocks_of(entry)
        if not blocks:
            continue
        _replace_images(blocks, None, report)
        for block in blocks:
            inner = block.get("content") if isinstance(block, dict) and block.get("type") == "tool_result" else None
            if isinstance(inner, list):
                _replace_images(inner, _read_path(calls, block), report)
    return report

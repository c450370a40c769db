"""Encode an assistant message as the Messages API's server-sent events.

The sequence is the real API's: ``message_start``, ``ping``, per block ``content_block_start`` /
``content_block_delta`` (``text_delta`` or ``input_json_delta`` chunks) /
``content_block_stop``, then ``message_delta`` (stop reason and usage) and ``message_stop``.
"""

from __future__ import annotations

import json
from typing import Any

Event = tuple[str, dict[str, Any]]

CHUNK = 40  # characters per delta: small enough that every block streams in several pieces


def _chunks(text: str) -> list[str]:
    return [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)] or [""]


def _block_events(index: int, block: dict[str, Any]) -> list[Event]:
    kind = block.get("type")
    if kind == "text":
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": c} for c in _chunks(block.get("text", ""))]
    elif kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        raw = json.dumps(block.get("input", {}), ensure_ascii=False)
        deltas = [{"type": "input_json_delta", "partial_json": c} for c in _chunks(raw)]
    else:
        # Any other block (thinking, server tools) is sent whole in its start event.
        return [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events: list[Event] = [
        ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
    ]
    for d in deltas:
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def message_events(message: dict[str, Any]) -> list[Event]:
    """The SSE events for a complete message dict (as ``message_json`` returns)."""
    usage = message["usage"]
    start = dict(message, content=[], stop_reason=None, stop_sequence=None)
    start["usage"] = dict(usage, output_tokens=1)
    events: list[Event] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for i, block in enumerate(message["content"]):
        events.extend(_block_events(i, block))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": usage,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def message_json(
    *, id: str, model: str, content: list[dict[str, Any]], stop_reason: str, usage: dict[str, int]
) -> dict[str, Any]:
    """A complete (non-streaming) Messages API response body."""
    return {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


def encode(event: Event) -> bytes:
    """One SSE frame: ``event: NAME`` and ``data: JSON`` lines, then a blank line."""
    name, data = event
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def error_event(error_type: str, message: str) -> Event:
    """The SSE ``error`` event the API sends when a stream fails after it started."""
    return ("error", {"type": "error", "error": {"type": error_type, "message": message}})

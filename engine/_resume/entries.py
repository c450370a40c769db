"""Reading and editing transcript entries: content blocks, tool calls and their results.

Shared by the passes ``load()`` runs (expire, spill, shrink, prune). Every edit here changes only
a block's ``content`` in place: a ``tool_result`` block itself always stays.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Calls",
    "Entry",
    "blocks_of",
    "call_id",
    "calls_of",
    "command_of",
    "drop_calls",
    "leave_out",
    "relink",
    "replace_text",
    "result_text",
    "text_parts",
    "tool_results",
    "tool_uses",
    "window_start",
]

Entry = dict[str, Any]
_LINK_FIELDS = ("parentUuid", "logicalParentUuid", "leafUuid")


def blocks_of(entry: Entry) -> list[dict[str, Any]] | None:
    """The content block list of a user/assistant entry, or None (string content, other types)."""
    if entry.get("type") not in ("user", "assistant") or entry.get("isCompactSummary"):
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else None


@dataclass
class Calls:
    """The tool calls of a chain and their results, found in one scan. The passes that edit blocks
    in place (and drop none) share one: a scan per pass was a large part of a load."""

    uses: dict[str, dict[str, Any]]  # tool_use blocks by id, in file order
    results: list[tuple[Entry, dict[str, Any]]]  # (entry, tool_result block), in file order


def calls_of(entries: list[Entry]) -> Calls:
    """``Calls`` of ``entries``: ``tool_uses`` and ``tool_results`` in one scan."""
    found = Calls({}, [])
    for entry in entries:
        kind = entry.get("type")
        for block in blocks_of(entry) or []:
            if not isinstance(block, dict):
                continue
            if kind == "assistant" and block.get("type") == "tool_use" and "id" in block:
                found.uses[block["id"]] = block
            elif kind == "user" and block.get("type") == "tool_result":
                found.results.append((entry, block))
    return found


def tool_results(entries: list[Entry]) -> Iterator[tuple[Entry, dict[str, Any]]]:
    """Every ``(entry, tool_result block)`` in file order; compact summaries are skipped."""
    yield from calls_of(entries).results


def tool_uses(entries: list[Entry]) -> dict[str, dict[str, Any]]:
    """``tool_use`` blocks by id, from every assistant entry."""
    return calls_of(entries).uses


def window_start(shown: list[Entry], keep_recent: int) -> int:
    """Index of the first shown entry inside ``TrimPolicy``'s window (the entries from the
    ``keep_recent``-th newest tool result on); ``len(shown)`` when the window is empty."""
    holders = {id(e) for e, _b in tool_results(shown)}
    at = [i for i, e in enumerate(shown) if id(e) in holders]
    if keep_recent <= 0:
        return len(shown)
    return at[-keep_recent] if len(at) > keep_recent else 0


def result_text(block: dict[str, Any]) -> str | None:
    """The text of a tool_result's content, or None when it holds anything but text blocks."""
    content = block.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" for b in content
    ):
        return "\n".join(str(b.get("text", "")) for b in content)
    return None


def text_parts(block: dict[str, Any]) -> str:
    """The text blocks of a tool_result joined (images and documents left out)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(
        str(b.get("text", "")) for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )


def replace_text(block: dict[str, Any], new: str) -> None:
    """Put ``new`` where the text was; image/document blocks stay, in order."""
    content = block.get("content")
    if not isinstance(content, list):
        block["content"] = new
        return
    out, placed = [], False
    for b in content:
        if isinstance(b, dict) and b.get("type") == "text":
            if not placed:
                out.append({"type": "text", "text": new})
                placed = True
        else:
            out.append(b)
    block["content"] = out


def command_of(use: dict[str, Any] | None) -> str:
    """The ``command`` of a Bash ``tool_use`` block, or ``''``."""
    inp = use.get("input") if isinstance(use, dict) else None
    cmd = inp.get("command") if isinstance(inp, dict) else None
    return cmd if isinstance(cmd, str) else ""


def relink(entries: list[Entry], dropped_parent: dict[str, str | None]) -> None:
    """Point every link to a dropped entry at its nearest surviving ancestor, in place."""
    def survivor(uuid: str | None) -> str | None:
        seen = set()
        while uuid in dropped_parent and uuid not in seen:
            seen.add(uuid)
            uuid = dropped_parent[uuid]
        return uuid

    for entry in entries:
        for name in _LINK_FIELDS:
            if entry.get(name) in dropped_parent:
                entry[name] = survivor(entry[name])


def leave_out(entries: list[Entry], shown: list[Entry], dropped: list[Entry]) -> list[Entry]:
    """``entries`` without ``dropped`` (also taken out of ``shown``, in place), children re-linked
    to their nearest surviving ancestor so the chain the CLI walks holds."""
    if not dropped:
        return entries
    gone = {id(e) for e in dropped}
    kept = [e for e in entries if id(e) not in gone]
    relink(kept, {e["uuid"]: e.get("parentUuid") or e.get("logicalParentUuid")
                  for e in dropped if e.get("uuid")})
    shown[:] = [e for e in shown if id(e) not in gone]
    return kept


def drop_calls(entries: list[Entry], ids: set[str | None], dropped: list[Entry]) -> int:
    """Remove the tool_use and tool_result blocks of ``ids``; emptied entries join ``dropped``.

    The call and its result go together, so every remaining call keeps its result. Returns the
    characters removed.
    """
    ids = ids - {None}
    if not ids:
        return 0
    chars = 0
    for entry in entries:
        blocks = blocks_of(entry)
        if not blocks or not any(call_id(b) in ids for b in blocks):
            continue
        chars += sum(len(json.dumps(b, ensure_ascii=False)) for b in blocks if call_id(b) in ids)
        blocks[:] = [b for b in blocks if call_id(b) not in ids]
        if not blocks:
            dropped.append(entry)
    return chars


def call_id(block: Any) -> str | None:
    """The call a ``tool_use`` or ``tool_result`` block belongs to, or None for other blocks."""
    if not isinstance(block, dict):
        return None
    if block.get("type") == "tool_use":
        return block.get("id")
    if block.get("type") == "tool_result":
        return block.get("tool_use_id")
    return None

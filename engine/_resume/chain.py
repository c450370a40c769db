"""``resume_chain``: the entries of a transcript the CLI will actually show the model on resume.

The CLI does not send a transcript file as it is: it picks the newest main-thread message (the
leaf), walks ``parentUuid`` back to the root, and sends what lies after the newest compaction
(a ``compact_boundary`` has no ``parentUuid``; its ``logicalParentUuid`` points at the history it
replaced, which stays in the file but is not sent). Parallel tool calls are written as sibling
branches (each call an assistant entry of the same API message, each result hanging off its own
call), and the CLI shows them all: the calls sharing a message id with one on the walk, and the
results answering a call it shows, join the chain. Everything else in the file (subagent entries
written into the main file, abandoned branches, history before a compaction, progress and
bookkeeping lines) is off the chain: the trim and prune policies neither count nor cut it, since
cutting it saves nothing and counting it (in "keep the newest N") spends the allowance on results
the model never sees.

A transcript without a linked leaf (hand-made entries without uuids) is shown whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ResumeChain", "ShownSize", "resume_chain", "shown_chars"]

Entry = dict[str, Any]
_MESSAGE_TYPES = ("user", "assistant")


@dataclass
class ResumeChain:
    """What ``resume_chain`` found: ``shown`` (file order), and how the walk went.

    ``walked``: entries reached from the leaf, history before compactions included;
    ``broken``: a link pointed at a uuid missing from the file (the walk stopped there);
    ``compactions``: compaction boundaries crossed.
    """

    shown: list[Entry] = field(default_factory=list)
    leaf: Entry | None = None
    walked: int = 0
    broken: bool = False
    compactions: int = 0


def _leaf(entries: list[Entry], main_thread: bool) -> Entry | None:
    """The newest message entry with a uuid: main-thread only, unless none is (a subagent file)."""
    fallback = None
    for entry in reversed(entries):
        if entry.get("type") not in _MESSAGE_TYPES or not isinstance(entry.get("uuid"), str):
            continue
        if not entry.get("isSidechain") or not main_thread:
            return entry
        fallback = fallback or entry
    return fallback


def resume_chain(entries: list[Entry], *, main_thread: bool = True) -> ResumeChain:
    """The entries the CLI shows on resume, in file order (the same dict objects).

    ``main_thread=False`` (a subagent transcript, all of whose entries are sidechain) takes the
    newest message of any thread as the leaf. Without a leaf carrying a uuid, every entry counts.
    """
    leaf = _leaf(entries, main_thread)
    if leaf is None:
        return ResumeChain(shown=list(entries))
    by_uuid: dict[str, Entry] = {}
    for entry in entries:
        uuid = entry.get("uuid")
        if isinstance(uuid, str):
            by_uuid[uuid] = entry
    out = ResumeChain(leaf=leaf)
    on: set[int] = set()
    seen: set[str] = set()
    current: Entry | None = leaf
    shown_part = True
    while current is not None:
        out.walked += 1
        if shown_part:
            on.add(id(current))
        seen.add(current["uuid"])
        parent = current.get("parentUuid")
        if not parent and current.get("logicalParentUuid"):
            parent = current["logicalParentUuid"]  # a compaction: what lies before is not sent
            out.compactions += 1
            shown_part = False
        if not isinstance(parent, str) or parent in seen:
            break
        current = by_uuid.get(parent)
        out.broken = current is None
    _add_parallel_siblings(entries, on)
    out.shown = [e for e in entries if id(e) in on]
    return out


def _add_parallel_siblings(entries: list[Entry], on: set[int]) -> None:
    """Add the other calls of a shown API message and the results of every shown call."""
    message_ids: set[str] = set()
    for entry in entries:
        if id(entry) in on and entry.get("type") == "assistant":
            message = entry.get("message")
            mid = message.get("id") if isinstance(message, dict) else None
            if isinstance(mid, str):
                message_ids.add(mid)
    call_ids: set[str] = set()
    for entry in entries:
        message = entry.get("message")
        if entry.get("type") != "assistant" or not isinstance(message, dict):
            continue
        if id(entry) in on or message.get("id") in message_ids:
            on.add(id(entry))
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    call_ids.add(block.get("id"))
    for entry in entries:
        if id(entry) in on or entry.get("type") != "user":
            continue
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in call_ids
            for b in content
        ):
            on.add(id(entry))


def _shown_part(entry: Entry) -> Any:
    message = entry.get("message")
    return message.get("content") if isinstance(message, dict) else entry.get("attachment", entry.get("content"))


_JSON = json.JSONEncoder(ensure_ascii=False).encode  # one encoder: json.dumps builds one per call


def _size(part: Any) -> int:
    if part is None:
        return 0
    return len(part) if isinstance(part, str) else len(_JSON(part))


def shown_chars(entries: list[Entry]) -> int:
    """Characters of what the model is shown of ``entries``: message content as JSON text
    (tool inputs and results included), attachments' payloads, system entries' content."""
    return sum(_size(_shown_part(e)) for e in entries)


def _parts(part: Any) -> tuple[Any, ...]:
    """The objects an edit of ``part`` replaces: its blocks and each block's fields (a pass edits
    by assigning a block's content or an input's field, or by dropping blocks, never deeper)."""
    if not isinstance(part, list):
        return (part,)
    out: list[Any] = [part, len(part)]
    for block in part:
        out.append(block)
        if isinstance(block, dict):
            out.extend(block.values())
            if isinstance(block.get("input"), dict):
                out.extend(block["input"].values())
    return tuple(out)


class ShownSize:
    """``shown_chars`` of a chain, then of what is left of it after edits in place: the second
    figure measures again only the entries whose content changed (measuring all twice was a
    third of a load's time)."""

    def __init__(self, shown: list[Entry]) -> None:
        self._entries = [(e, _parts(part), _size(part)) for e in shown for part in (_shown_part(e),)]
        self.before = sum(size for _e, _p, size in self._entries)

    def after(self, kept: list[Entry]) -> int:
        """``shown_chars`` of the measured entries still in ``kept``, as they are now."""
        alive = {id(e) for e in kept}
        total = 0
        for entry, parts, size in self._entries:
            if id(entry) in alive:
                part = _shown_part(entry)
                total += size if _parts(part) == parts else _size(part)
        return total

"""Reply builders: the assistant messages the fake model streams back.

A ``Reply`` is one assistant message: content blocks (text, tool_use), an optional usage
override and optional faults. Builders: ``text``, ``tool_use``, and ``reply`` to put several
blocks in one message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.testing.faults import Fault


@dataclass(frozen=True)
class Reply:
    """One scripted assistant message.

    ``blocks`` are API content blocks; a ``tool_use`` block without an ``id`` gets a fresh one
    each time it is served. ``usage`` entries (``input_tokens``, ``output_tokens``,
    ``cache_read_input_tokens``, ...) override the estimate the server makes from the request
    size. ``stop_reason`` None means ``tool_use`` if a tool_use block is present, else
    ``end_turn``. ``faults`` run before the reply is sent (see ``engine.testing.faults``).
    """

    blocks: tuple[dict[str, Any], ...]
    usage: Mapping[str, int] | None = None
    stop_reason: str | None = None
    faults: tuple[Fault, ...] = field(default=())

    @property
    def final_stop_reason(self) -> str:
        """The stop reason sent: the explicit one, else derived from the blocks."""
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if any(b.get("type") == "tool_use" for b in self.blocks) else "end_turn"

    def output_tokens(self) -> int:
        """A rough output token count (four characters a token), at least 1."""
        return max(1, len(json.dumps(self.blocks, ensure_ascii=False)) // 4)


def _faults(fault: Fault | tuple[Fault, ...] | list[Fault] | None) -> tuple[Fault, ...]:
    if fault is None:
        return ()
    if isinstance(fault, Fault):
        return (fault,)
    return tuple(fault)


def text(
    content: str,
    *,
    usage: Mapping[str, int] | None = None,
    fault: Fault | list[Fault] | None = None,
) -> Reply:
    """A reply of one text block; the turn ends (``end_turn``)."""
    return Reply(({"type": "text", "text": content},), usage=usage, faults=_faults(fault))


def tool_use(
    name: str,
    input: Mapping[str, Any] | None = None,
    *,
    id: str | None = None,
    usage: Mapping[str, int] | None = None,
    fault: Fault | list[Fault] | None = None,
) -> Reply:
    """A reply that calls tool ``name`` with ``input`` (``stop_reason`` ``tool_use``).

    ``id`` None gives a fresh ``toolu_...`` id every time the reply is served.
    """
    block = {"type": "tool_use", "id": id, "name": name, "input": dict(input or {})}
    return Reply((block,), usage=usage, faults=_faults(fault))


def reply(
    *parts: str | Reply | Mapping[str, Any],
    usage: Mapping[str, int] | None = None,
    stop_reason: str | None = None,
    fault: Fault | list[Fault] | None = None,
) -> Reply:
    """One assistant message made of several blocks, in order.

    Each part is a string (a text block), a ``Reply`` (its blocks; its usage and faults are
    ignored, give them here) or a raw content block dict. Example:
    ``reply("Two tools at once", tool_use("Bash", {...}), tool_use("Read", {...}))``.
    """
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, str):
            out.append({"type": "text", "text": part})
        elif isinstance(part, Reply):
            out.extend(part.blocks)
        elif isinstance(part, Mapping):
            out.append(dict(part))
        else:
            raise TypeError(
                f"reply() takes strings, Reply objects or content block dicts; got {part!r}. "
                "Wrap text in a string and tool calls in tool_use(...)."
            )
    return Reply(tuple(out), usage=usage, stop_reason=stop_reason, faults=_faults(fault))

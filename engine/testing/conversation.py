"""Read a Messages API request body: its system prompt, prompt, turns, tool calls and results.

Pure functions over the JSON body the CLI sends (``{"system": ..., "messages": [...], "tools": [...]}``).
They tolerate the shapes the API accepts: a content given as a string or as a list of blocks, a
system prompt given as a string or as a list of text blocks, and ``role: "system"`` entries the
CLI puts inside ``messages``.
"""

from __future__ import annotations

import json
from typing import Any

REMINDER_PREFIX = "<system-reminder>"
INTERRUPT_PREFIX = "[Request interrupted by user"


def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The content blocks of one message; a plain string content becomes one text block."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def system_text(body: dict[str, Any]) -> str:
    """The system prompt as one string (text blocks joined by newlines); empty if absent."""
    system = body.get("system")
    if isinstance(system, str):
        return system
    return "\n".join(b.get("text", "") for b in system or [] if isinstance(b, dict))


def tool_result_text(block: dict[str, Any]) -> str:
    """The text inside one ``tool_result`` block (string content or its text blocks)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for b in content or []:
        if isinstance(b, dict):
            parts.append(b.get("text", "") if b.get("type") == "text" else f"[{b.get('type')}]")
    return "\n".join(parts)


def block_text(block: dict[str, Any]) -> str:
    """What the model reads of one block: text, a tool call's name and input, a tool result."""
    kind = block.get("type")
    if kind == "text":
        return block.get("text", "")
    if kind == "thinking":
        return block.get("thinking", "")
    if kind in ("tool_use", "server_tool_use"):
        inp = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
        return f"[tool_use {block.get('name')}] {inp}"
    if kind == "tool_result":
        err = " error" if block.get("is_error") else ""
        return f"[tool_result{err}] {tool_result_text(block)}"
    return f"[{kind}]"


def message_text(message: dict[str, Any]) -> str:
    """Every block of one message as text, one block a line."""
    return "\n".join(block_text(b) for b in blocks(message))


def is_tool_result_message(message: dict[str, Any]) -> bool:
    """True for a user message that carries at least one ``tool_result`` block."""
    return message.get("role") == "user" and any(b.get("type") == "tool_result" for b in blocks(message))


def is_prompt_message(message: dict[str, Any]) -> bool:
    """True for a user message that starts a turn: it holds words from the person.

    Text blocks that are only ``<system-reminder>`` or an interrupt marker (``[Request
    interrupted by user...]``) do not count, so the reminders the CLI adds do not reset turn
    indexing. A tool-result message that also carries such words (the CLI merges the prompt
    sent after an interrupt into the pending tool results) does count.
    """
    if message.get("role") != "user":
        return False
    for b in blocks(message):
        if b.get("type") == "text":
            t = b.get("text", "").lstrip()
            if t and not t.startswith(REMINDER_PREFIX) and not t.startswith(INTERRUPT_PREFIX):
                return True
        elif b.get("type") in ("image", "document"):
            return True
    return False


def last_prompt_index(body: dict[str, Any]) -> int | None:
    """Index in ``messages`` of the latest prompt message (see ``is_prompt_message``), or None."""
    messages = body.get("messages") or []
    for i in range(len(messages) - 1, -1, -1):
        if is_prompt_message(messages[i]):
            return i
    return None


def prompt_text(body: dict[str, Any]) -> str:
    """The text of the latest prompt message (the request that started this turn); empty if none."""
    i = last_prompt_index(body)
    return "" if i is None else message_text(body["messages"][i])


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user message, whatever it holds (a prompt or tool results)."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return message_text(message)
    return ""


def assistant_turns(body: dict[str, Any], *, since_prompt: bool = True) -> int:
    """How many assistant messages the request holds, after the latest prompt or in all."""
    messages = body.get("messages") or []
    start = 0
    if since_prompt:
        i = last_prompt_index(body)
        start = 0 if i is None else i + 1
    return sum(1 for m in messages[start:] if m.get("role") == "assistant")


def tool_names(body: dict[str, Any]) -> dict[str, str]:
    """Map each ``tool_use`` id in the conversation to its tool name."""
    names: dict[str, str] = {}
    for message in body.get("messages") or []:
        if message.get("role") == "assistant":
            for b in blocks(message):
                if b.get("type") == "tool_use":
                    names[b.get("id", "")] = b.get("name", "")
    return names


def tool_results(body: dict[str, Any], *, last_only: bool = False) -> list[tuple[str, str]]:
    """``(tool name, result text)`` for every tool result, or only those of the last message."""
    names = tool_names(body)
    messages = body.get("messages") or []
    if last_only:
        messages = messages[-1:]
    found = []
    for message in messages:
        if message.get("role") == "user":
            for b in blocks(message):
                if b.get("type") == "tool_result":
                    found.append((names.get(b.get("tool_use_id", ""), ""), tool_result_text(b)))
    return found


def offered_tools(body: dict[str, Any]) -> list[str]:
    """Names of the tools the request offers the model."""
    return [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]


def shown(body: dict[str, Any]) -> str:
    """Everything the model was shown in one request, as one string.

    The system prompt, then each message as ``[role]`` followed by its blocks: text, tool calls
    with their JSON input, tool results with their content. Tool definitions are left out (use
    ``offered_tools``). Accepts a request body or anything with a ``body`` attribute.
    """
    body = getattr(body, "body", body)
    parts = [f"[system]\n{system_text(body)}"]
    for message in body.get("messages") or []:
        parts.append(f"[{message.get('role')}]\n{message_text(message)}")
    return "\n".join(parts)

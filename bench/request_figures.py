"""What one Messages API request shows the model, set against the chain a store's ``load()`` returned.

Pure functions over a request body the CLI sent on resume and the loaded chain it was resumed from
(``engine._resume.chain.resume_chain``), for ``bench.resume_cli``. Sizes are characters of JSON
text, the measure ``shown_chars`` uses, so the two sides compare.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

__all__ = ["KINDS", "block_chars", "history", "sent"]

Entry = dict[str, Any]
KINDS = ("tool_use", "tool_result", "text", "thinking")
REMINDER = "<system-reminder>"  # how the CLI opens the context blocks it adds to a turn
COMMAND_OUTPUT = "<local-command-stdout>"  # a slash command's output, kept in the transcript as a user message


def json_len(value: Any) -> int:
    """Characters of ``value`` as the model gets it: a string as is, anything else as JSON."""
    return len(value) if isinstance(value, str) else len(json.dumps(value, ensure_ascii=False))


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def block_chars(contents: list[Any]) -> Counter[str]:
    """Characters per block kind over message contents, and ``n_<kind>`` counts of blocks.

    tool_use: its input as JSON; tool_result: its content; text, thinking: their text; any other
    kind: the block as JSON. A string content is one text block; ``n_blank_text`` counts the text
    blocks that are only whitespace (the API refuses those, so the CLI may leave them out).
    """
    out: Counter[str] = Counter()
    for block in (b for content in contents for b in _blocks(content)):
        kind = block.get("type", "?")
        part = {"tool_use": block.get("input"), "tool_result": block.get("content"),
                "text": block.get("text"), "thinking": block.get("thinking")}.get(kind, block)
        out[kind] += json_len(part if part is not None else "")
        out[f"n_{kind}"] += 1
        if kind == "text" and not str(block.get("text") or "").strip():
            out["n_blank_text"] += 1
    return out


def chain_contents(chain: list[Entry]) -> list[Any]:
    """The message contents of a chain's user and assistant entries, in order."""
    return [e["message"].get("content") for e in chain
            if e.get("type") in ("user", "assistant") and isinstance(e.get("message"), dict)]


def _texts(contents: list[Any]) -> list[str]:
    """Every text the model reads in ``contents``: text blocks, string contents, tool results."""
    out: list[str] = []
    for block in (b for content in contents for b in _blocks(content)):
        if block.get("type") == "text":
            out.append(str(block.get("text") or ""))
        elif block.get("type") == "tool_result":
            inner = block.get("content")
            out += _texts([inner]) if isinstance(inner, list) else [str(inner or "")]
    return out


def _call_ids(contents: list[Any]) -> set[str]:
    return {b.get("id") for content in contents for b in _blocks(content) if b.get("type") == "tool_use"}


def _is_added(block: Any, prompt: str) -> bool:
    """A block the CLI writes into the new turn itself: one of its reminders, or the prompt."""
    text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else block
    return isinstance(text, str) and (text.startswith(REMINDER) or text == prompt)


def history(messages: list[dict[str, Any]], prompt: str) -> list[dict[str, Any]]:
    """``messages`` without the blocks the CLI added to the new turn; a message left empty goes."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = [b for b in content if not _is_added(b, prompt)]
        elif _is_added(content, prompt):
            content = None
        if content:
            out.append({**message, "content": content})
    return out


def sent(body: dict[str, Any], chain: list[Entry], prompt: str) -> dict[str, Any]:
    """Figures of one request ``body``, and how its history differs from the loaded ``chain``.

    ``chars``: its ``messages`` as JSON; ``history``: the same without what the CLI added to the
    new turn (``added`` is the difference); ``history_content``: the history's contents alone
    (``shown_chars``'s measure, without the messages' role envelopes); ``chain_messages`` and
    ``history_messages``: the message entries on the chain and the messages they went as;
    ``command_output``: characters of slash-command output sent; ``body``, ``system``, ``tools``:
    the whole body and two of its parts; one figure per ``KINDS``; ``prompt_reached``: the last
    message is the user's and holds ``prompt`` as a block of its own. Against the chain: tool
    calls missing or extra, texts not found (``texts_missing``, the first one's first 100
    characters in ``text_missing_example``), and ``kinds_changed``: ``{kind: (blocks on the
    chain, blocks in the history)}`` where they differ.
    """
    messages = list(body.get("messages") or [])
    contents = [m.get("content") for m in messages]
    kinds, past = block_chars(contents), history(messages, prompt)
    on_chain = chain_contents(chain)
    chain_kinds, past_kinds = block_chars(on_chain), block_chars([m["content"] for m in past])
    joined = "\n".join(_texts(contents))
    missing = [t for t in _texts(on_chain) if t.strip() and t.strip()[:120] not in joined]
    last = messages[-1] if messages else {}
    return {
        "chars": json_len(messages), "messages": len(messages), "history": json_len(past),
        "history_content": sum(json_len(m["content"]) for m in past),
        "chain_messages": len(on_chain), "history_messages": len(past),
        "command_output": sum(len(b["text"]) for m in past for b in _blocks(m["content"])
                              if b.get("type") == "text" and str(b.get("text")).startswith(COMMAND_OUTPUT)),
        "added": json_len(messages) - json_len(past), "body": json_len(body),
        "system": json_len(body.get("system") or ""), "tools": json_len(body.get("tools") or []),
        "model": body.get("model", ""), **{k: kinds[k] for k in KINDS},
        "prompt_reached": last.get("role") == "user" and any(
            b.get("type") == "text" and b.get("text") == prompt for b in _blocks(last.get("content"))),
        "calls_missing": len(_call_ids(on_chain) - _call_ids(contents)),
        "calls_extra": len(_call_ids(contents) - _call_ids(on_chain)),
        "texts_missing": len(missing), "text_missing_example": missing[0][:100] if missing else "",
        "kinds_changed": {k[2:]: (chain_kinds[k], past_kinds[k]) for k in sorted(set(past_kinds) | set(chain_kinds))
                          if k.startswith("n_") and chain_kinds[k] != past_kinds[k]},
    }

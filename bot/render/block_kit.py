"""Block Kit pieces within Slack's limits: sections, context lines, buttons, and long text as blocks.

User-provided text goes through ``escape`` (``&``, ``<``, ``>``) everywhere here; the bot's own
markup (bold, mentions it builds) is passed as ``lead`` or built by the caller.
"""

from __future__ import annotations

from typing import Any, Literal

from bot.core.split_text import clip, escape, escaped_len, split_text, utf16_len
from bot.render import texts

__all__ = [
    "MAX_ACTIONS_ELEMENTS",
    "MAX_BLOCKS",
    "MAX_BUTTON_TEXT",
    "MAX_BUTTON_VALUE",
    "MAX_FALLBACK",
    "MAX_SECTION_TEXT",
    "Payload",
    "blocks_for",
    "button",
    "context",
    "fallback",
    "section",
]

Payload = dict[str, Any]  # chat.postMessage / chat.update arguments: text (the fallback) and blocks

# Slack's limits (api.slack.com/reference/block-kit): the bot stays under every one of them.
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_CONTEXT_TEXT = 3000
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_ACTIONS_ELEMENTS = 25
MAX_FALLBACK = 4000  # `text` is cut at 40,000, but long messages read badly: keep it short


def section(mrkdwn: str) -> dict[str, Any]:
    """A section block of ready mrkdwn (escape user text first), clipped to Slack's 3,000."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(mrkdwn, MAX_SECTION_TEXT)}}


def context(*mrkdwn: str) -> dict[str, Any]:
    """A context block (small grey line) of ready mrkdwn elements; empty ones are left out."""
    return {"type": "context",
            "elements": [{"type": "mrkdwn", "text": clip(t, MAX_CONTEXT_TEXT)} for t in mrkdwn if t][:10]}


def button(label: str, action_id: str, value: str, *, style: Literal["primary", "danger"] | None = None,
           confirm: tuple[str, str, str] | None = None) -> dict:
    """A button; ``label`` is plain text, whitespace folded and cut to 75 with an ellipsis.
    ``confirm`` (title, text, the confirming button's label) asks before the click counts."""
    text = clip(" ".join(label.split()) or texts.EMPTY, MAX_BUTTON_TEXT)
    out: dict[str, Any] = {"type": "button", "text": {"type": "plain_text", "text": text, "emoji": True},
                           "action_id": action_id, "value": clip(value, MAX_BUTTON_VALUE)}
    if style is not None:
        out["style"] = style
    if confirm is not None:
        title, body, yes = confirm
        out["confirm"] = {"title": _plain(title, 100), "text": _plain(body, 300), "confirm": _plain(yes, 30),
                          "deny": _plain(texts.CONFIRM_DENY, 30), **({"style": style} if style else {})}
    return out


def _plain(text: str, limit: int) -> dict:
    return {"type": "plain_text", "text": clip(text, limit)}


def fallback(text: str, limit: int = MAX_FALLBACK) -> str:
    """A message's ``text`` (notifications, screen readers): ``text`` escaped, cut to ``limit``."""
    return escape(clip(text, limit, measure=escaped_len))


def _chunks(text: str, lead: str) -> list[str]:
    return split_text(text, MAX_SECTION_TEXT - utf16_len(lead), measure=escaped_len)


def _sections(chunks: list[str], lead: str) -> list[dict[str, Any]]:
    if not chunks:
        return [section(lead.rstrip())] if lead.strip() else []
    return [section((lead if n == 0 else "") + escape(c)) for n, c in enumerate(chunks)]


def blocks_for(text: str, *, lead: str = "", max_blocks: int = MAX_BLOCKS) -> list[dict[str, Any]]:
    """``text`` (escaped) as section blocks of at most 3,000 characters each, code fences balanced.

    ``lead`` is ready mrkdwn put before the first block (e.g. a bold headline and a newline).
    Past ``max_blocks`` the last block says how much was left out. Blank text and lead give ``[]``.
    """
    chunks = _chunks(text, lead)
    if len(chunks) <= max_blocks:
        return _sections(chunks, lead)
    kept = chunks[: max(max_blocks - 1, 0)]
    left = sum(len(c) for c in chunks[len(kept):])
    return _sections(kept, lead) + [section(texts.MORE_NOT_SHOWN.format(left=left))][: max_blocks]

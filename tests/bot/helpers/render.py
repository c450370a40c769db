"""What Slack would refuse in a payload, checked independently of the code under test."""

from __future__ import annotations

import re

from bot.core.split_text import utf16_len
from bot.testing.limits import block_problems, check_message

OUR_MARKUP = re.compile(r"<@[UW][A-Z0-9]+>|<https://[^|<>\s]+\|[^<>]+>")  # a mention, or a link we made


def assert_slack_ok(payload: dict) -> None:
    """What Slack would refuse (bot.testing.limits), plus our own stricter rules."""
    text, blocks = payload.get("text"), payload.get("blocks")
    check_message(text, blocks)
    assert isinstance(text, str) and 0 < utf16_len(text) <= 4000
    if blocks is None:
        return
    assert block_problems(blocks) == [] and len(blocks) <= 50
    for block in blocks:
        texts = [block.get("text", {}).get("text", "")] + [e.get("text", "") for e in block.get("elements", [])
                                                           if block["type"] == "context"]
        for t in texts:
            assert utf16_len(t) <= 3000
            assert all(OUR_MARKUP.fullmatch(m) for m in re.findall(r"<[^>]*>", t)), t  # user text is escaped
        for element in block.get("elements", []):
            if element.get("type") == "button":
                assert utf16_len(element["text"]["text"]) <= 75
                assert len(element["value"]) <= 2000 and len(element["action_id"]) <= 255
        assert len(block.get("block_id", "")) <= 255

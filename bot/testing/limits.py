"""Slack's message limits, enforced so the bot's mistakes show up in tests as they would in Slack."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from bot.testing.agent_blocks import AGENT_BLOCKS, agent_block_problems

MAX_TEXT = 40_000  # chat.postMessage: longer text is msg_too_long
MAX_BLOCKS = 50  # per message (modals and Home tabs allow 100)
MAX_SECTION_TEXT = 3_000
MAX_FIELD_TEXT = 2_000
MAX_FIELDS = 10
MAX_HEADER_TEXT = 150
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2_000
MAX_ID = 255  # block_id and action_id
MAX_CONTEXT_ELEMENTS = 10
MAX_ACTIONS_ELEMENTS = 25
MAX_MARKDOWN_BLOCK_TEXT = 12_000
KNOWN_BLOCKS = {
    "section", "divider", "header", "context", "actions", "image", "rich_text", "input", "file", "video", "markdown",
    *AGENT_BLOCKS,
}  # fmt: skip


@dataclass
class ApiError(Exception):
    """An `{"ok": false, "error": ...}` answer; `extra` fields are merged into the response."""

    error: str
    extra: dict = field(default_factory=dict)

    def response(self) -> dict:
        """The JSON body Slack answers with."""
        return {"ok": False, "error": self.error, **self.extra}


def parse_json_field(value: object, *, name: str) -> object:
    """A JSON-valued argument (blocks, attachments, files) as sent form-encoded (a string) or in JSON."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        raise ApiError(f"invalid_{name}_format") from None


def check_message(text: object, blocks: object, *, attachments: object = None) -> None:
    """Raise ApiError when Slack would refuse this message; return None when it is fine.

    A message needs text, blocks or attachments; only text and blocks are checked in detail.
    """
    if not text and not blocks and not attachments:
        raise ApiError("no_text")
    if isinstance(text, str) and len(text) > MAX_TEXT:
        raise ApiError("msg_too_long")
    if blocks is None:
        return
    problems = block_problems(blocks)
    if problems:
        raise ApiError("invalid_blocks", {"errors": problems, "response_metadata": {"messages": problems}})


def block_problems(blocks: object) -> list[str]:
    """Every limit these blocks break, each with Slack's json-pointer style location."""
    if not isinstance(blocks, list):
        return ["must be an array [json-pointer:/blocks]"]
    problems: list[str] = []
    if len(blocks) > MAX_BLOCKS:
        problems.append(f"no more than {MAX_BLOCKS} items allowed [json-pointer:/blocks]")
    seen_block_ids: set[str] = set()
    for i, block in enumerate(blocks):
        where = f"/blocks/{i}"
        if not isinstance(block, dict) or block.get("type") not in KNOWN_BLOCKS:
            problems.append(f"unsupported block type [json-pointer:{where}/type]")
            continue
        block_id = block.get("block_id")
        if block_id is not None:
            _too_long(problems, block_id, MAX_ID, f"{where}/block_id")
            if block_id in seen_block_ids:
                problems.append(f"duplicate block_id [json-pointer:{where}/block_id]")
            seen_block_ids.add(block_id)
        problems.extend(_block_problems(block, where))
    return problems


def _block_problems(block: dict, where: str) -> list[str]:
    problems: list[str] = []
    kind = block["type"]
    if kind in AGENT_BLOCKS:
        problems.extend(agent_block_problems(block, where))
    elif kind == "section":
        if "text" not in block and "fields" not in block:
            problems.append(f"must provide text or fields [json-pointer:{where}]")
        _text_object(problems, block.get("text"), MAX_SECTION_TEXT, f"{where}/text")
        fields = block.get("fields") or []
        if len(fields) > MAX_FIELDS:
            problems.append(f"no more than {MAX_FIELDS} items allowed [json-pointer:{where}/fields]")
        for j, item in enumerate(fields):
            _text_object(problems, item, MAX_FIELD_TEXT, f"{where}/fields/{j}")
        if isinstance(block.get("accessory"), dict):
            problems.extend(_element_problems(block["accessory"], f"{where}/accessory"))
    elif kind == "header":
        _text_object(problems, block.get("text"), MAX_HEADER_TEXT, f"{where}/text", required=True)
    elif kind == "markdown":
        _too_long(problems, block.get("text", ""), MAX_MARKDOWN_BLOCK_TEXT, f"{where}/text")
    elif kind in ("context", "actions"):
        limit = MAX_CONTEXT_ELEMENTS if kind == "context" else MAX_ACTIONS_ELEMENTS
        elements = block.get("elements") or []
        if not elements:
            problems.append(f"must provide elements [json-pointer:{where}/elements]")
        if len(elements) > limit:
            problems.append(f"no more than {limit} items allowed [json-pointer:{where}/elements]")
        action_ids: set[str] = set()
        for j, element in enumerate(elements):
            if not isinstance(element, dict):
                problems.append(f"must be an object [json-pointer:{where}/elements/{j}]")
                continue
            problems.extend(_element_problems(element, f"{where}/elements/{j}"))
            action_id = element.get("action_id")
            if action_id is not None and action_id in action_ids:
                problems.append(f"duplicate action_id [json-pointer:{where}/elements/{j}/action_id]")
            action_ids.add(action_id)
    return problems


def _element_problems(element: dict, where: str) -> list[str]:
    problems: list[str] = []
    if element.get("action_id") is not None:
        _too_long(problems, element["action_id"], MAX_ID, f"{where}/action_id")
    if element.get("type") == "button":
        _text_object(problems, element.get("text"), MAX_BUTTON_TEXT, f"{where}/text", required=True)
        if element.get("value") is not None:
            _too_long(problems, element["value"], MAX_BUTTON_VALUE, f"{where}/value")
        if element.get("style") not in (None, "primary", "danger"):
            problems.append(f"must be primary or danger [json-pointer:{where}/style]")
        if element.get("confirm") is not None:
            problems.extend(_confirm_problems(element["confirm"], f"{where}/confirm"))
    return problems


def _confirm_problems(confirm: object, where: str) -> list[str]:
    """A confirmation dialog: title ≤ 100, text ≤ 300, confirm and deny ≤ 30 (plain text)."""
    if not isinstance(confirm, dict):
        return [f"must be an object [json-pointer:{where}]"]
    problems: list[str] = []
    for name, limit in (("title", 100), ("text", 300), ("confirm", 30), ("deny", 30)):
        _text_object(problems, confirm.get(name), limit, f"{where}/{name}", required=True)
    if confirm.get("style") not in (None, "primary", "danger"):
        problems.append(f"must be primary or danger [json-pointer:{where}/style]")
    return problems


def _text_object(problems: list[str], obj: object, limit: int, where: str, *, required: bool = False) -> None:
    if obj is None:
        if required:
            problems.append(f"must provide text [json-pointer:{where}]")
        return
    if not isinstance(obj, dict) or obj.get("type") not in ("plain_text", "mrkdwn"):
        problems.append(f"must be a plain_text or mrkdwn text object [json-pointer:{where}]")
        return
    text = obj.get("text", "")
    if not isinstance(text, str) or not text:
        problems.append(f"must be more than 0 characters [json-pointer:{where}/text]")
        return
    _too_long(problems, text, limit, f"{where}/text")


def _too_long(problems: list[str], value: object, limit: int, where: str) -> None:
    if isinstance(value, str) and len(value) > limit:
        problems.append(f"must be less than {limit + 1} characters [json-pointer:{where}]")

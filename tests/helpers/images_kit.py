"""What the image tests share: a person's screenshot in a workspace's inbox, and where an image
block (and its label) shows up in what the model was sent."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from PIL import Image as Pil

from engine import Image, load_image


def shared_png(ws: Path, name: str = "1-shot.png", color: str = "teal", size: tuple[int, int] = (48, 32)) -> Image:
    """A small PNG saved in ``ws``'s ``.flower/inbox/`` as the bot saves one, loaded as an ``Image``."""
    path = ws / ".flower" / "inbox" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    Pil.new("RGB", size, color).save(path, "PNG")
    return load_image(path, name=f".flower/inbox/{name}", anchor=ws)


def data_of(image: Image) -> str:
    return base64.b64encode(image.data).decode("ascii")


def _blocks(content: Any) -> list[dict[str, Any]]:
    if not isinstance(content, list):
        return []
    out = []
    for block in content:
        if isinstance(block, dict):
            out.append(block)
            if block.get("type") == "tool_result":
                out += _blocks(block.get("content"))
    return out


def image_blocks(messages: list[dict[str, Any]], image: Image) -> list[tuple[int, int]]:
    """(message index, block index) of every block showing ``image``'s exact bytes."""
    data = data_of(image)
    return [(i, j) for i, m in enumerate(messages) for j, b in enumerate(_blocks(m.get("content")))
            if b.get("type") == "image" and (b.get("source") or {}).get("data") == data]


def labelled(messages: list[dict[str, Any]], image: Image, label: str = "Image: {name}") -> bool:
    """Whether ``image``'s block follows the text block naming it, in one of ``messages``."""
    text = label.format(name=image.name)
    for i, j in image_blocks(messages, image):
        blocks = _blocks(messages[i].get("content"))
        if j and blocks[j - 1] == {"type": "text", "text": text}:
            return True
    return False


def any_image(messages: list[dict[str, Any]]) -> bool:
    return any(b.get("type") == "image" for m in messages for b in _blocks(m.get("content")))


def shown_json(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages, ensure_ascii=False)

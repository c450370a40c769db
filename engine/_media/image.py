"""``Image``: one picture a person shared, and the content blocks that show it to the model.

A step's prompt with images becomes a content list (the Messages API's shape, which the CLI's
streaming input takes in ``message.content`` as it is): the prompt's text, then for each image a
text block naming its file and the image block itself. The name comes first so that, once the
resume shaping replaces an old image by a note (``engine._resume.old_images``), the model still
knows which file to Read again.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engine._errors import FlowerError
from engine._lang import words

MediaType = Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
MEDIA_TYPES: tuple[MediaType, ...] = ("image/png", "image/jpeg", "image/gif", "image/webp")


class ImageRefused(FlowerError, ValueError):
    """An image that cannot be shown to the model: unreadable, not an image, or over the
    Messages API's limits even after resizing. The message names the file and the fix."""


@dataclass(frozen=True)
class Image:
    """An image as the model is shown it: ``media_type``, its bytes, and ``name``, the file's
    path relative to the workspace (``.flower/inbox/1-shot.png``), which the model can Read.

    Build one with ``load_image`` (it checks the type by the file's first bytes and fits it to
    the API's limits); a hand-made one is sent as it is. Raises ``ImageRefused`` for a
    ``media_type`` the API does not take.
    """

    media_type: MediaType
    data: bytes = field(repr=False)
    name: str

    def __post_init__(self) -> None:
        if self.media_type not in MEDIA_TYPES:
            raise ImageRefused(
                f"Image {self.name!r}: media_type must be one of {', '.join(MEDIA_TYPES)}; got "
                f"{self.media_type!r}. Use load_image(), which recognises the type by the file's bytes.")

    def blocks(self) -> list[dict[str, Any]]:
        """The two content blocks that show this image: its name (in the run's language), then
        the image itself as base64."""
        return [
            {"type": "text", "text": words().IMAGE_LABEL.format(name=self.name)},
            {"type": "image", "source": {"type": "base64", "media_type": self.media_type,
                                         "data": base64.b64encode(self.data).decode("ascii")}},
        ]


def prompt_content(prompt: str, images: Sequence[Image] = ()) -> str | list[dict[str, Any]]:
    """A user message's ``content``: ``prompt`` itself without images (the shape sent before
    images existed, byte for byte), else the prompt's text block and each image's blocks."""
    if not images:
        return prompt
    head = [{"type": "text", "text": prompt}] if prompt.strip() else []  # the API refuses empty text
    return [*head, *(block for image in images for block in image.blocks())]


def image_names(images: Sequence[Image]) -> str:
    """The images' names, comma separated: what a note says when it cannot carry the images."""
    return ", ".join(image.name for image in images)

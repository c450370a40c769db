"""What people said to a running step, words and images, kept until the step takes them in.

``Runtime.interrupt`` adds to it from any task of the loop; the step's loop takes it all at the
next message boundary and resumes the session with it. The images also stay with the step for
good (``shared``): a handoff's fresh session was never shown them, so it is shown them again.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine._media.image import Image


class Said:
    """Words and images said to one step since it last took them (``take``), and every image
    said to it at all (``shared``)."""

    def __init__(self, images: Sequence[Image] = ()) -> None:
        self._words: list[str] = []
        self._images: list[Image] = []
        self.shared: list[Image] = list(images)

    def add(self, words: str, images: Sequence[Image] = ()) -> bool:
        """Keep ``words`` and ``images``; False when there is nothing in them."""
        if not (words.strip() or images):
            return False
        if words.strip():
            self._words.append(words.strip())
        self._images += images
        self.shared += images
        return True

    def take(self) -> tuple[str, tuple[Image, ...]]:
        """The words said since the last take (one per line, "" for none) and their images."""
        words, images = "\n".join(self._words), tuple(self._images)
        self._words.clear()
        self._images.clear()
        return words, images

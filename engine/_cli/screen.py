"""The ``flower`` command's stderr: printed lines, plus one status line kept under them.

On a terminal the status line is drawn in place (``\\r``, clear the line, the text cut to the
terminal's width so it never wraps: a wrapped line cannot be cleared) and is cleared before any
other text is written through the screen, so a banner, a question or a prompt never lands in
the middle of it. When the stream is not a terminal there is no status line, only lines.
"""

from __future__ import annotations

import os
from typing import TextIO

from wcwidth import wcwidth

CLEAR = "\r\x1b[2K"  # carriage return, then erase the whole line


def fit(text: str, columns: int) -> str:
    """``text`` cut to at most ``columns`` terminal columns (a CJK character takes two)."""
    used, kept = 0, []
    for ch in text:
        w = max(wcwidth(ch), 0)
        if used + w > columns:
            break
        used += w
        kept.append(ch)
    return "".join(kept)


class Screen:
    """A text stream over ``out`` (``print(..., file=screen)`` works) that owns a status line.

    ``tty`` says whether ``out`` is a terminal (default: ask it). ``status`` draws the status line
    (a terminal only); ``clear`` removes it; any ``write`` clears it first.
    """

    def __init__(self, out: TextIO, *, tty: bool | None = None) -> None:
        self.out = out
        self.tty = _isatty(out) if tty is None else tty
        self.shown = False

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        if text:
            self.clear()
            self.out.write(text)
        return len(text)

    def flush(self) -> None:
        self.out.flush()

    def status(self, line: str) -> None:
        """Draw ``line`` as the status line, replacing the one shown (a terminal only)."""
        if not self.tty:
            return
        self.out.write(CLEAR + fit(line, self._columns() - 1))
        self.out.flush()
        self.shown = True

    def clear(self) -> None:
        """Remove the status line, if one is shown; the cursor is at the start of an empty line."""
        if self.shown:
            self.shown = False
            self.out.write(CLEAR)
            self.out.flush()

    def _columns(self) -> int:
        try:
            return os.get_terminal_size(self.out.fileno()).columns or 80
        except (OSError, ValueError, AttributeError):
            return 80


def _isatty(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (OSError, ValueError, AttributeError):
        return False

"""Spilled tool output on disk: one file per distinct text, named by its content, for any text.

A tool result can hold a lone UTF-16 surrogate (the CLI writes one when it cuts text through an
emoji); plain ``str.encode("utf-8")`` raises on it. The name hashes the text losslessly
(``surrogatepass``) and the file holds valid UTF-8 (a lone surrogate becomes U+FFFD), so a spill
never fails on what a tool returned. Shared by the cut made at once (``spill_guard``) and the cut
made on resume (``engine._resume.spill``), whose folders stay different.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from engine._files import write_text_atomic

__all__ = ["safe_text", "spill_name", "write_spill"]


def safe_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a split pair is joined again)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def spill_name(text: str) -> str:
    """``<sha256[:16]>.txt`` of ``text``; for text without surrogates, the sha256 of its UTF-8."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16] + ".txt"


def write_spill(folder: Path, text: str) -> Path:
    """Write ``text`` (made safe) to ``folder/spill_name(text)`` unless that file already holds
    it, and return the path. Raises OSError when the folder cannot be written."""
    path = folder / spill_name(text)
    data = safe_text(text)
    if not path.is_file() or path.stat().st_size != len(data.encode("utf-8")):
        write_text_atomic(path, data)
    return path

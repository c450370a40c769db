"""Spilled tool output on disk: one file per distinct text, named by its content, for any text.

A tool result can hold a lone UTF-16 surrogate (the CLI writes one when it cuts text through an
emoji); plain ``str.encode("utf-8")`` raises on it. The name hashes the text losslessly
(``surrogatepass``) and the file holds valid UTF-8 (a lone surrogate becomes U+FFFD), so a spill
never fails on what a tool returned. Shared by the cut made at once (``spill_guard``) and the cut
made on resume (``engine._resume.spill``), whose folders stay different. Both folders lie in the
run's workspace, so they are reached beneath a folder the host made (``engine._beneath``): a link
the run put there would make the host write text the run chose wherever it points.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from engine._beneath import open_dir, write_text

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


def write_spill(folder: Path, text: str, *, anchor: Path) -> Path:
    """Write ``text`` (made safe) to ``folder/spill_name(text)`` unless that file already holds
    it, and return the path. ``folder`` is reached beneath ``anchor`` following no link (made as
    needed). Raises OSError (``UnsafePath`` for a link on the way) when it cannot be written."""
    path = folder / spill_name(text)
    data = safe_text(text)
    if not _holds(anchor, path, len(data.encode("utf-8"))):
        write_text(anchor, path, data)
    return path


def _holds(anchor: Path, path: Path, size: int) -> bool:
    """Whether ``path`` is a regular file of ``size`` bytes already (same name: same text)."""
    try:
        fd = open_dir(anchor, path.parent)
    except OSError:
        return False  # missing (made by the write) or refused (the write says why)
    try:
        st = os.stat(path.name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return False
    finally:
        os.close(fd)
    return stat.S_ISREG(st.st_mode) and st.st_size == size

"""Atomic small-file writes: temp file in the same folder, fsync, os.replace.

A process killed mid-write leaves either the old file or the new one, never half of either.
Public (``engine``) for hosts too: the bot writes its bindings and saved questions this way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine._beneath import read_bytes, write_text


def keep_out_of_git(folder: str | Path, *, anchor: str | Path) -> None:
    """Create ``folder`` with a ``.gitignore`` of ``*``: nothing in it (spilled tool output can hold
    keys) reaches a commit, even a worker's ``git add -A``. Idempotent. ``folder`` lies in a run's
    workspace: it is reached beneath ``anchor`` following no link (``UnsafePath`` for one)."""
    ignore = Path(folder) / ".gitignore"
    try:
        read_bytes(anchor, ignore, limit=1)
    except OSError:  # missing, or a link or FIFO the run put there: replaced, never followed
        write_text(anchor, ignore, "*\n")


def write_text_atomic(path: str | Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically; creates the parent folder. Raises OSError."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path.parent, path, text)  # the caller trusts the folder: beneath it, the one atomic write


def write_json_atomic(path: str | Path, data: Any) -> None:
    """``write_text_atomic`` of ``data`` as indented UTF-8 JSON (Chinese step names stay readable)."""
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")

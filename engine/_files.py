"""Atomic small-file writes: temp file in the same folder, fsync, os.replace.

A process killed mid-write leaves either the old file or the new one, never half of either.
Public (``engine``) for hosts too: the bot writes its bindings and saved questions this way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine._beneath import write_text


def keep_out_of_git(folder: str | Path) -> None:
    """Create ``folder`` with a ``.gitignore`` of ``*``: nothing in it (spilled tool output can hold
    keys) reaches a commit, even a worker's ``git add -A``. Idempotent."""
    ignore = Path(folder) / ".gitignore"
    if not ignore.is_file():
        write_text_atomic(ignore, "*\n")


def write_text_atomic(path: str | Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically; creates the parent folder. Raises OSError."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path.parent, path, text)  # the caller trusts the folder: beneath it, the one atomic write


def write_json_atomic(path: str | Path, data: Any) -> None:
    """``write_text_atomic`` of ``data`` as indented UTF-8 JSON (Chinese step names stay readable)."""
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")

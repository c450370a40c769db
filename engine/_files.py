"""Atomic small-file writes: temp file in the same folder, fsync, os.replace.

A process killed mid-write leaves either the old file or the new one, never half of either.
Public (``engine``) for hosts too: the bot writes its bindings and saved questions this way.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


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
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass  # the temp file is already gone; the original error is what matters
        raise


def write_json_atomic(path: str | Path, data: Any) -> None:
    """``write_text_atomic`` of ``data`` as indented UTF-8 JSON (Chinese step names stay readable)."""
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")

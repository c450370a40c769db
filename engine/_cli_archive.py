"""The line ``flower --new`` prints: where the last run went, so it can be found again."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from engine._cli_texts import say

__all__ = ["ArchiveNotice"]


class ArchiveNotice:
    """With ``new``: once the flow has archived the last run into a new folder of ``archive``
    (``StarterRun.paths.archive``; the flow archives before its first event), the first call
    says where it went, or that there was nothing to archive. Without ``new`` it says nothing."""

    def __init__(self, archive: Path, new: bool) -> None:
        self.archive = archive
        self.before = set(self._folders()) if new else None

    def _folders(self) -> list[Path]:
        return [p for p in self.archive.iterdir() if p.is_dir()] if self.archive.is_dir() else []

    def __call__(self, out: TextIO) -> None:
        if self.before is None:
            return
        made = sorted(set(self._folders()) - self.before)
        self.before = None
        if made and any(made[-1].iterdir()):
            print(say("archived", path=made[-1]), file=out, flush=True)
        else:
            print(say("archived_nothing"), file=out, flush=True)

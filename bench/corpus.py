"""The corpus of real Claude Code session transcripts behind ``python -m bench resume``.

The files are not shipped (their licenses are not confirmed here): ``SOURCES`` names each one by
repository, commit and path, and ``rebuild`` fetches them into a folder of your choice, from a
local clone when given (``--clone owner/name=PATH``, read with ``git show``) or else from
``raw.githubusercontent.com`` at that exact commit. ``python -m bench corpus DEST`` runs it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SOURCES", "Source", "rebuild"]


@dataclass(frozen=True)
class Source:
    """One main-session transcript: where it lives, and the file name it gets in the corpus."""

    repo: str
    commit: str
    path: str

    @property
    def name(self) -> str:
        owner = self.repo.split("/")[0]
        stem = Path(self.path).stem if Path(self.path).stem != "transcript" else Path(self.path).parent.name
        return f"{owner}--{stem}.jsonl"


_SPOTTER = "test/fixtures/transcripts/"
_RELIABILITY = "snapshot-tests/tests/"
SOURCES: tuple[Source, ...] = (
    # marot/spotter: a developer's own sessions (CLI 2.1.39), each with a compaction
    *(Source("marot/spotter", c, f"{_SPOTTER}{sid}.jsonl") for sid, c in (
        ("4d5611e5-241a-462a-8d15-5122611a9569", "53a088d2335599db2a99d1099be22152d1785d6f"),
        ("ae4a77f8-aedd-4bc1-888f-c94edc91af04", "0c7102a37a16a869d8e069b168cb3ab0d7441c12"),
        ("258c7280-ae70-4798-800f-63464d01a85d", "0c7102a37a16a869d8e069b168cb3ab0d7441c12"),
        ("8463c716-a2ea-4c14-9efa-87158ebd9f20", "0c7102a37a16a869d8e069b168cb3ab0d7441c12"),
        ("fa812bfe-b295-4cca-9c2f-fdf01028cb46", "0c7102a37a16a869d8e069b168cb3ab0d7441c12"),
    )),
    # DRMacIver/claude-reliability: sessions recorded for snapshot tests (CLI 2.1.14)
    *(Source("DRMacIver/claude-reliability", "228d653b8d2aba8251eb3f3d4c222a2f652d7c60",
             f"{_RELIABILITY}{name}/transcript.jsonl") for name in (
        "coverage-test-fix", "hello-world-script", "python-to-rust-port", "stop-hook-fast-path-clean",
        "stop-hook-reflection-first-stop", "stop-hook-reflection-second-stop",
        "stop-hook-uncommitted-changes",
    )),
)


def _read(source: Source, clones: dict[str, Path]) -> bytes:
    clone = clones.get(source.repo)
    if clone is not None:
        git_dir = clone / ".git" if (clone / ".git").exists() else clone
        return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{source.commit}:{source.path}"],
                              check=True, capture_output=True).stdout
    url = f"https://raw.githubusercontent.com/{source.repo}/{source.commit}/{source.path}"
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.read()


def rebuild(dest: Path, clones: dict[str, Path] | None = None) -> list[Path]:
    """Write every source into ``dest`` (skipping files already there) and return their paths."""
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for source in SOURCES:
        path = dest / source.name
        if not path.is_file():
            path.write_bytes(_read(source, clones or {}))
        out.append(path)
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m bench corpus DEST [--clone owner/name=PATH ...]``."""
    parser = argparse.ArgumentParser(prog="python -m bench corpus", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dest", type=Path, help="folder to write the transcripts into")
    parser.add_argument("--clone", action="append", default=[], metavar="OWNER/NAME=PATH",
                        help="read that repository from a local clone or bare git folder")
    args = parser.parse_args(argv)
    clones = dict(c.split("=", 1) for c in args.clone)
    paths = rebuild(args.dest, {k: Path(v) for k, v in clones.items()})
    print(f"{len(paths)} transcripts in {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
_CHARMING = "experiments/2026-03-13-code-review-skills-our-data/"
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
    # tonyandrewmeyer/charming-with-claude: reviewing bug fixes across charm repositories (CLI 2.1.74-2.1.76)
    *(Source("tonyandrewmeyer/charming-with-claude", "f60ed1076c6d5da4dc9ae7afb352605baaead3dc",
             f"{_CHARMING}{folder}.claude/transcripts/{sid}/{sid}.jsonl") for folder, sid in (
        ("", "0a0eb7b7-3abb-4e69-aa2b-0ff2d27f24e8"),
        ("charming-analysis/", "0b6fff8a-4d86-4dbd-b022-9e7a745a9eae"),
        ("operator-analysis/", "8d655624-4852-4974-b2ed-bed5f3b9eacc"),
        ("charming-analysis/", "960cec30-d8bb-4d4c-92f3-ec634d923f8e"),
    )),
    # M-Thisness/M-Claude: a developer's own archived sessions, mostly system administration (CLI 2.0.64-2.1.6)
    *(Source("M-Thisness/M-Claude", c, path) for c, path in (
        ("47be98a70ffdfcffb590f318c42f1d633f52c580", "CHAT_LOGS/c7d2069e-c561-4759-8adf-b0745be78c29.jsonl"),
        ("4f919696628cc349db383672f64460b2c4f6d7ad", "CHAT_LOGS/0d510331-7c2a-45ab-850a-088f3499b4cc.jsonl"),
        ("659d89ad2e32d191478bc4e425347081ade2abd8", "CHAT_LOGS/e5821007-9ca0-4a36-afc0-94da583da0ea.jsonl"),
        ("48ee2694c8f3c1d8d42feabe50379b6d5a8f959c", "Archives/abc757d1-3da3-42fb-bb7b-ffa293a4ba29.jsonl"),
        ("ea46ee2cd5d33f692e469f1e4aa786110c6ddcb1", "Archives/3cfce0ff-0725-47be-a572-f8af8122b71e.jsonl"),
        ("63e9b42e5af72d32774027fc94fbf93ae85a4e09", "Archives/21e3c711-a412-4fe7-96ba-6f14004e1006.jsonl"),
    )),
    # kiliman/claude-transcript: an author's session kept as the converter's test input (CLI 1.0.57, subagents inline)
    Source("kiliman/claude-transcript", "0aadbfaecadf2e4d99522c22fe573c847ed8dffa", "test/test2.jsonl"),
    # boweiliu/idea-project-specs: a session planning project specs, saved into the repository (CLI 1.0.90)
    Source("boweiliu/idea-project-specs", "fd3f4221324d4d5ec38eb772258dff74d0498827",
           "chat-history/chat_20250824_232336.jsonl"),
    # d-kimuson/claude-code-viewer: the viewer's sample sessions, paths anonymised (CLI 1.0.98, 1.0.108)
    *(Source("d-kimuson/claude-code-viewer", "1a29bc9612fcb8792eb97a58d56b6cc3f359f11b",
             f"mock-global-claude-dir/projects/sample-project/{sid}.jsonl") for sid in (
        "fe5e1c67-53e7-4862-81ae-d0e013e3270b", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7",
    )),
    # jimmc414/cctrace: a session working on the export tool itself, as it exported it (CLI 2.0.76)
    Source("jimmc414/cctrace", "4b4d4add0bb3a65359ccf50501c6792e2fc13ba5",
           ".claude-sessions/phase0-investigation/raw_messages.jsonl"),
    # moredip/session-share: a short sample session that fans out web-search subagents (CLI 2.1.15-2.1.16)
    Source("moredip/session-share", "5bcd6c6fc60fe4a7d3aa8c68315b89103300be65",
           "samples/claude-code-projects/0ccf1a04-1b4c-43b6-8aa5-79e41db43a68.jsonl"),
)


def _check_names(sources: tuple[Source, ...]) -> None:
    """Raise if two sources would be written to one file of the corpus (``rebuild`` would keep the first)."""
    names = [source.name for source in sources]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"SOURCES gives two transcripts the corpus name {twice}: "
                         "extend Source.name so that each source gets its own file")


_check_names(SOURCES)


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

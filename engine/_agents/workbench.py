"""The workbench: an on-disk folder of scripts, artifacts and notes, with an index the model sees.

The index goes into the session's system prompt (``prompt_block()``), so the agent knows every
turn what it already has. Subagents do not inherit it (they have their own system prompt): the
coordinator must pass "long outputs go to artifacts/" and the workbench's location in each
task brief.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from engine._beneath import open_dir, read_bytes, regular_files, write_text
from engine._lang import words

log = logging.getLogger(__name__)

FOLDERS = ("scripts", "artifacts", "notes")
INDEX_NAME = "INDEX.md"
DESC_MAX = 100
_DESC_LINES = 8  # a `# desc:` line counts only within a file's first 8 lines
_HEAD_BYTES = 8192
_PROSE = frozenset({"", ".md", ".markdown", ".txt", ".rst", ".log"})
_DESC_RE = re.compile(r"^\s*(?:#|//|--)\s*desc\s*[::]\s*(.+?)\s*$", re.IGNORECASE)
_COMMENT_RE = re.compile(r"^\s*(?:#+|//+|--+)\s*(.*?)\s*$")
_DOCSTRING_RE = re.compile(r"^\s*[rRbBuU]?(\"\"\"|''')(.*)$")
# Lines that look like comments but describe nothing: a shebang, a coding or editor mode line.
_NOISE_RE = re.compile(r"^\s*(#!|#.*-\*-|#\s*(?:vim?|coding)[:=]|#\s*type:)")



def describe(path: str | Path, *, anchor: str | Path | None = None) -> str:
    """One-line description of a file, read from its head; "" when there is none.

    Order: a ``# desc:`` (or ``// desc:``, ``-- desc:``) line within the first 8 lines, then the
    first non-empty comment (shebangs and coding lines skipped), then the first line of a
    docstring, then (for prose: Markdown, text, no suffix) the first non-empty line. Cut at
    100 characters.
    Binary or unreadable files give "", and so does anything but a regular file reached through
    no symlink beneath ``anchor`` (default: the file's folder): the agent wrote it.
    """
    try:
        head = read_bytes(anchor if anchor is not None else Path(path).parent, path, limit=_HEAD_BYTES)
    except OSError:
        return ""
    if b"\0" in head:
        return ""
    lines = head.decode("utf-8", errors="replace").splitlines()
    for line in lines[:_DESC_LINES]:
        if m := _DESC_RE.match(line):
            return _cut(m.group(1))
    first_line = ""
    for i, line in enumerate(lines):
        if not line.strip() or _NOISE_RE.match(line):
            continue
        if m := _COMMENT_RE.match(line):
            if m.group(1):
                return _cut(m.group(1))
            continue  # an empty comment line ("#", "//"): look further
        if m := _DOCSTRING_RE.match(line):
            rest = m.group(2).replace(m.group(1), "").strip()
            if not rest and i + 1 < len(lines):
                rest = lines[i + 1].strip().replace(m.group(1), "")
            if rest:
                return _cut(rest)
            continue
        first_line = first_line or line.strip()
    # prose (notes, text artifacts) has no comments: its first line says what it is
    return _cut(first_line) if Path(path).suffix.lower() in _PROSE else ""


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DESC_MAX else text[: DESC_MAX - 1] + "…"


@dataclass
class Workbench:
    """The workbench folder: ``scripts/``, ``artifacts/``, ``notes/`` and ``INDEX.md``.

    ``root`` is ``home`` when given (an isolated run keeps it outside the repository, where
    worktree agents can still write), else ``workspace/dirname``. Nothing is created until
    ``ensure()`` or ``refresh()``. Everything in it is the agent's: the host reaches it only
    beneath ``anchor`` (the root's parent, a folder the host made), following no symlink.
    """

    workspace: Path
    dirname: str = ".flower"
    max_index_entries: int = 40
    home: Path | None = None

    def __post_init__(self) -> None:
        self.workspace = Path(self.workspace)
        if self.home is not None:
            self.home = Path(self.home)

    @property
    def root(self) -> Path:
        """The workbench folder: ``home`` if given, else ``workspace/dirname``."""
        return self.home if self.home is not None else self.workspace / self.dirname

    @property
    def anchor(self) -> Path:
        """The folder the host made that holds the root: every path below it is checked from it."""
        return Path(os.path.abspath(self.root)).parent

    @property
    def scripts(self) -> Path:
        return self.root / "scripts"

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts"

    @property
    def notes(self) -> Path:
        return self.root / "notes"

    @property
    def spill(self) -> Path:
        """Where ``spill_guard`` writes oversized tool results (not the trim store's spill)."""
        return self.root / "spill"

    @property
    def inbox(self) -> Path:
        """Where the files people shared are put for the run (a front end writes them, the agent
        reads them); not one of ``FOLDERS``: the index lists the agent's own work."""
        return self.root / "inbox"

    @property
    def outbox(self) -> Path:
        """Where the run leaves files for the people it works for (a front end hands them over)."""
        return self.root / "outbox"

    @property
    def index_path(self) -> Path:
        return self.root / INDEX_NAME

    @property
    def external(self) -> bool:
        """True when the root lies outside the workspace (then paths must be absolute)."""
        return not is_within(self.root, self.workspace)

    def show(self, path: str | Path) -> str:
        """``path`` as the model should write it: workspace-relative inside, else absolute."""
        p = Path(os.path.realpath(path))
        try:
            return p.relative_to(os.path.realpath(self.workspace)).as_posix()
        except ValueError:
            return str(p)

    def ensure(self) -> Workbench:
        """Create the root and its three folders, ignored by git (idempotent); returns self."""
        for name in FOLDERS:
            try:
                os.close(open_dir(self.anchor, self.root / name, create=True))
            except OSError as exc:  # a link or file the agent put there: listed as empty, never followed
                log.warning("workbench folder %s is not a plain folder (%s); it is left as it is", name, exc)
        ignore = self.root / ".gitignore"
        try:
            read_bytes(self.anchor, ignore, limit=1)
        except OSError:  # missing, or a link or FIFO the agent put there: replaced, never followed
            write_text(self.anchor, ignore, "*\n")
        return self

    def index(self) -> str:
        """The index text, built from what is on disk now: per folder, newest first.

        Each folder lists at most ``max_index_entries`` files (hidden files skipped, subfolders
        walked), each with its ``describe()`` line; the rest are counted in one line.
        """
        w = words()
        parts = [w.INDEX_HEAD]
        for name in FOLDERS:
            files = self._files_newest_first(self.root / name)
            parts.append(f"\n## {name}/")
            if not files:
                parts.append(w.INDEX_EMPTY)
            for f in files[: self.max_index_entries]:
                desc = describe(f, anchor=self.anchor)
                rel = f.relative_to(self.root).as_posix()
                parts.append(f"- {rel} — {desc}" if desc else f"- {rel}")
            if len(files) > self.max_index_entries:
                parts.append(w.INDEX_MORE.format(n=len(files) - self.max_index_entries))
        return "\n".join(parts) + "\n"

    def refresh(self) -> str:
        """Create the folders and rewrite ``INDEX.md`` from disk; returns the index text."""
        self.ensure()
        text = self.index()
        write_text(self.anchor, self.index_path, text)
        return text

    def prompt_block(self) -> str:
        """The system-prompt block: where the workbench is, its index, and the three rules."""
        w = words()
        lines = [w.WORKBENCH_HEAD.format(root=self._shown_root()), "", w.WORKBENCH_RULES]
        if self.external:
            lines += ["", w.WORKBENCH_OUTSIDE]
        lines += ["", self.index().rstrip()]
        return "\n".join(lines) + "\n"

    def _files_newest_first(self, folder: Path) -> list[Path]:
        found = [(st.st_mtime, folder / rel) for rel, st in regular_files(self.anchor, folder)]
        found.sort(key=lambda t: (-t[0], str(t[1])))
        return [p for _, p in found]

    def _shown_root(self) -> str:
        return str(Path(os.path.abspath(self.root))) if self.external else self.show(self.root) + "/"


def is_within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or below it, after resolving symlinks and ``..``.

    A relative ``path`` is taken from the process's current folder.
    """
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(folder))
    except ValueError:
        return False
    return True

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
import time
from dataclasses import dataclass, field
from pathlib import Path

from engine._beneath import open_dir, read_bytes, write_text
from engine._tree import WALK_BUDGET_S, WALK_DEPTH, WALK_ENTRIES, Listing, walk
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
# A file's description is kept while its inode, size, mtime and ctime stay; only once its ctime is
# this old: timestamps move in clock ticks, so a file rewritten within one tick of being read
# could keep the same stat (the racy-git problem). The agent can set mtime, never ctime.
_SETTLED_NS = 2_000_000_000



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
    # descriptions of the files the last index showed, by (path, inode, size, mtime, ctime): a
    # refresh after each Write reads only what changed
    _described: dict[tuple[str, int, int, int, int], str] = field(
        default_factory=dict, init=False, repr=False, compare=False)

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
        walked), each with its ``describe()`` line; the rest are counted in one line. The walk is
        bounded (``engine._tree.walk``: names read, depth, time); a folder it cut short says so.
        It reads the agent's files: call it off the event loop (``engine.host.file_work``).
        """
        w = words()
        parts = [w.INDEX_HEAD]
        anchor, described = self.anchor, {}
        for name in FOLDERS:
            folder = self.root / name
            listing = walk(anchor, folder)
            files = sorted(listing.files, key=lambda f: (-f[1].st_mtime, f[0]))
            parts.append(f"\n## {name}/")
            if not files and not listing.cut:
                parts.append(w.INDEX_EMPTY)
            for rel, st in files[: self.max_index_entries]:
                key = (f"{name}/{rel}", st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                desc = self._described.get(key)
                if desc is None:
                    desc = describe(folder / rel, anchor=anchor)
                if time.time_ns() - st.st_ctime_ns > _SETTLED_NS:
                    described[key] = desc
                shown = _printable(key[0].replace(os.sep, "/"))
                parts.append(f"- {shown} — {desc}" if desc else f"- {shown}")
            if len(files) > self.max_index_entries:
                parts.append(w.INDEX_MORE.format(n=len(files) - self.max_index_entries))
            if listing.cut:
                parts.append(w.INDEX_CUT.format(why=_cut_said(listing)))
        self._described = described
        return "\n".join(parts) + "\n"

    def refresh(self) -> str:
        """Create the folders and rewrite ``INDEX.md`` from disk; returns the index text. An index
        that did not change is not written again (no fsync per Write for nothing)."""
        self.ensure()
        text = self.index()
        data = text.encode("utf-8")
        try:
            same = read_bytes(self.anchor, self.index_path, limit=len(data) + 1) == data
        except OSError:  # missing, or a link or FIFO the agent put there: replaced below
            same = False
        if not same:
            write_text(self.anchor, self.index_path, text)
        return text

    def prompt_block(self) -> str:
        """The system-prompt block: where the workbench is, its index, and the three rules (built
        from disk like ``index()``: off the event loop)."""
        w = words()
        lines = [w.WORKBENCH_HEAD.format(root=self._shown_root()), "", w.WORKBENCH_RULES]
        if self.external:
            lines += ["", w.WORKBENCH_OUTSIDE]
        lines += ["", self.index().rstrip()]
        return "\n".join(lines) + "\n"

    def _shown_root(self) -> str:
        return str(Path(os.path.abspath(self.root))) if self.external else self.show(self.root) + "/"


def _printable(name: str) -> str:
    """A file name as one index line may carry it: the agent names its files, and a line break in a
    name would write index lines of its own into every later prompt (the judge's too), an
    undecodable byte (a lone surrogate) would make the index unwritable. Each character that is not
    printable is shown as its escape (``\\n``, ``\\x1b``, ``\\udcff``)."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in name)


def _cut_said(listing: Listing) -> str:
    """Why a folder's listing is cut short, in the run's language."""
    why, n = words().INDEX_CUT_WHY, {"entries": WALK_ENTRIES, "depth": WALK_DEPTH, "time": f"{WALK_BUDGET_S:g}"}
    return "; ".join(why[c].format(n=n[c]) for c in ("entries", "depth", "time") if c in listing.cut)


def is_within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or below it, after resolving symlinks and ``..``.

    A relative ``path`` is taken from the process's current folder.
    """
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(folder))
    except ValueError:
        return False
    return True

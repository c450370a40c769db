"""A run's folder trees, walked and removed by host code: iterative, bounded, beneath an anchor.

Python 3.11's ``os.fwalk`` and ``shutil.rmtree`` recurse (a 2,000-deep chain of folders raises
``RecursionError``), and ``os.fwalk`` opens each sub-folder with a plain blocking ``open`` after
it stats it: a FIFO swapped in between waits forever for a writer. Here every folder is opened
with ``engine._beneath.open_child`` (``O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK``, from its parent's
descriptor), so a swapped-in FIFO or link is refused at once; a loop holds one descriptor per
level, and a walk stops at a depth, a count of names read (folders count as well as files) and a
time budget, saying what it left out.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from engine._beneath import UnsafePath, open_child, open_dir

__all__ = ["Listing", "remove_tree", "walk"]

log = logging.getLogger(__name__)

WALK_ENTRIES = 10_000  # names read, folders as well as files: 100,000 empty folders cost what 10,000 do
WALK_DEPTH = 24  # folders below the one walked; a workbench needs a handful
WALK_BUDGET_S = 1.0
_SKIPPED_KEPT = 20  # a hostile tree can hold millions of links: the first few say enough

Cut = Literal["entries", "depth", "time"]


@dataclass(frozen=True)
class Listing:
    """What ``walk`` found below a folder.

    ``files``: each regular file as (path relative to the folder, its ``lstat``), in walk order.
    ``cut``: why the walk left something out ("entries": the entry limit; "depth": folders too deep
    to enter; "time": the time budget), empty when it saw everything. ``skipped``: the first names
    it would not follow and why (a symlink, a folder swapped for something else), for the log.
    """

    files: tuple[tuple[str, os.stat_result], ...] = ()
    cut: frozenset[Cut] = frozenset()
    skipped: tuple[str, ...] = ()
    seen: int = 0  # entries read, files and folders alike


def walk(anchor: str | os.PathLike[str], folder: str | os.PathLike[str], *, max_entries: int = WALK_ENTRIES,
         max_depth: int = WALK_DEPTH, budget_s: float = WALK_BUDGET_S) -> Listing:
    """Every regular file below ``folder`` (beneath ``anchor``), hidden names skipped, no symlink
    walked. Iterative and bounded: it stops after ``max_entries`` names read, enters no folder
    deeper than ``max_depth`` and stops after ``budget_s`` seconds; ``Listing.cut`` says which
    happened. Holds one descriptor per level (never one per folder found). A missing or unsafe
    ``folder`` gives an empty listing."""
    try:
        top = open_dir(anchor, folder)
    except OSError:
        return Listing()
    files: list[tuple[str, os.stat_result]] = []
    cut: set[Cut] = set()
    skipped: list[str] = []
    seen = 0
    deadline = time.monotonic() + budget_s

    def read(fd: int, rel: str) -> list[str]:
        """One folder's regular files into ``files``; its sub-folders' names, in the order to enter."""
        nonlocal seen
        folders: list[str] = []
        with os.scandir(fd) as entries:
            for entry in entries:
                seen += 1
                if seen > max_entries:
                    cut.add("entries")
                    break
                if entry.name.startswith("."):
                    continue  # temp files of atomic writes, editor droppings, .git
                try:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.name)
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue  # removed while we walked: nothing to list
                if stat.S_ISREG(st.st_mode):
                    files.append((os.path.join(rel, entry.name), st))
        return sorted(folders, reverse=True)  # popped from the end: entered by name

    # one frame per level: the folder's descriptor, its path, its depth, sub-folders not entered yet
    stack: list[tuple[int, str, int, list[str]]] = [(top, "", 0, [])]
    try:
        try:
            stack[-1][3].extend(read(top, ""))
        except OSError as exc:
            _note(skipped, ".", exc.strerror or "unreadable")
        while stack and not cut & {"entries", "time"}:
            fd, rel, depth, pending = stack[-1]
            if not pending:
                os.close(stack.pop()[0])
                continue
            name = pending.pop()
            path = os.path.join(rel, name)
            if depth >= max_depth:
                cut.add("depth")
                _note(skipped, path, f"deeper than {max_depth} folders")
                continue
            if time.monotonic() > deadline:
                cut.add("time")
                break
            try:
                child = open_child(fd, name)  # a link or non-folder put there since the listing: refused
            except OSError as exc:
                why = "a symlink" if isinstance(exc, UnsafePath) else (
                    "no longer a folder" if exc.errno == errno.ENOTDIR else exc.strerror or "unreadable")
                _note(skipped, path, why)
                continue
            stack.append((child, path, depth + 1, []))
            try:
                stack[-1][3].extend(read(child, path))
            except OSError as exc:  # gone or unreadable since it was opened
                _note(skipped, path, exc.strerror or "unreadable")
    finally:
        for fd, *_ in stack:
            os.close(fd)
    if cut or skipped:
        log.info("walk of %s left things out (%s); not followed: %s", folder, ", ".join(sorted(cut)) or "-",
                 "; ".join(skipped) or "-")
    return Listing(tuple(files), frozenset(cut), tuple(skipped), seen)


def _note(skipped: list[str], path: str, why: str) -> None:
    if len(skipped) < _SKIPPED_KEPT:
        skipped.append(f"{path} ({why})")


REMOVE_DEPTH = 64  # folders held open at once while removing; below that, pieces are moved up


def remove_tree(anchor: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """Delete ``path`` beneath ``anchor`` with everything below it, following no link (a link is
    removed itself, never what it names); False when ``path`` does not exist.

    A loop, not a recursion, holding at most ``REMOVE_DEPTH`` folders open: a folder deeper than
    that is renamed up into ``path`` and emptied from there, so a 2,000-deep chain goes like any
    other tree. Raises ``OSError`` (``UnsafePath`` for a link on the way to ``path``) when something
    cannot be removed; what was removed by then stays removed."""
    parent = open_dir(anchor, Path(path).parent)
    name = Path(path).name
    try:
        try:
            top = _own_folder(parent, name)
        except FileNotFoundError:
            return False
        except OSError as exc:
            if not (isinstance(exc, UnsafePath) or exc.errno == errno.ENOTDIR):
                raise
            os.unlink(name, dir_fd=parent)  # a link, file or FIFO where the folder was: only the name goes
            return True
        _empty(top)
        os.rmdir(name, dir_fd=parent)
        return True
    finally:
        os.close(parent)


@dataclass
class _Level:
    """One folder being emptied: its descriptor, its name in its parent, the listing being read,
    and whether this pass removed anything (then it is listed again: names may have come in)."""

    fd: int
    name: str
    entries: Any = None  # an os.scandir iterator over ``fd``
    changed: bool = False


def _empty(top: int) -> None:
    """Delete everything in the folder ``top``, and close it."""
    stack = [_Level(top, "", os.scandir(top))]
    try:
        while stack:
            level = stack[-1]
            entry = next(level.entries, None)
            if entry is None:
                level.entries.close()
                if level.changed:
                    level.entries, level.changed = os.scandir(level.fd), False
                    continue
                stack.pop()
                os.close(level.fd)
                if stack:
                    os.rmdir(level.name, dir_fd=stack[-1].fd)
                continue
            level.changed = True
            if not entry.is_dir(follow_symlinks=False):
                try:
                    os.unlink(entry.name, dir_fd=level.fd)  # never follows a link
                except (FileNotFoundError, IsADirectoryError):
                    pass  # gone already, or a folder put there since the listing: the next pass enters it
                continue
            if len(stack) >= REMOVE_DEPTH:
                # too deep to hold open: moved up into the top folder, emptied from there later (a
                # folder moved to another parent must be writable itself: its ".." changes)
                _give_back(level.fd, entry.name)
                os.rename(entry.name, f".flower-rm-{os.urandom(8).hex()}", src_dir_fd=level.fd, dst_dir_fd=top)
                stack[0].changed = True
                continue
            try:
                child = _own_folder(level.fd, entry.name)
            except FileNotFoundError:
                continue
            except OSError as exc:
                if not (isinstance(exc, UnsafePath) or exc.errno == errno.ENOTDIR):
                    raise
                os.unlink(entry.name, dir_fd=level.fd)  # swapped for a link or a file since the listing
                continue
            stack.append(_Level(child, entry.name))
            stack[-1].entries = os.scandir(child)
    finally:
        for level in stack:
            if level.entries is not None:
                level.entries.close()
            os.close(level.fd)


def _own_folder(dir_fd: int, name: str) -> int:
    """``open_child`` for a folder being removed, which then lets its entries be removed: a run can
    ``chmod 000`` (or 500) its folders, and the bot runs as the run's user, so only the mode stood
    in the way (``/new`` and ``flower-bot cleanup`` failed on it). The tree is being deleted: its
    folders are made the owner's (0700) first, never through a link."""
    try:
        fd = open_child(dir_fd, name)
    except PermissionError:
        _give_back(dir_fd, name)
        fd = open_child(dir_fd, name)
    try:
        if os.fstat(fd).st_mode & 0o700 != 0o700:
            os.fchmod(fd, 0o700)
    except OSError:
        pass  # another owner's (the bot is not root): the removal says what stays
    return fd


def _give_back(dir_fd: int, name: str) -> None:
    """Make the folder ``name`` in ``dir_fd`` 0700, following no link (an ``O_PATH`` descriptor of
    the folder itself, changed through ``/proc``: Python's ``chmod`` cannot refuse a link here)."""
    try:
        fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return  # gone, a link or not a folder: the caller's own step says what it is
    try:
        os.chmod(f"/proc/self/fd/{fd}", 0o700)
    except OSError:
        pass  # no /proc, or another owner's: the caller's own step fails with the reason
    finally:
        os.close(fd)

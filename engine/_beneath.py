"""One door to a workspace for host code: no symlink, FIFO or device a run wrote moves the host.

The agent writes anything in its workspace (files, symlinks, FIFOs); the bot and the engine then
read, append, walk and move there unsandboxed. Every such access goes through here, beneath a
folder the host made itself (``anchor``: the workspace, or the thread folder holding it):

- paths are resolved beneath ``anchor`` without following any symlink and without ``..``
  (Linux ``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``; else a walk of
  ``O_NOFOLLOW | O_DIRECTORY`` opens, one component at a time), so a swapped link loses the race;
- only regular files are read or appended (opened ``O_NONBLOCK``, checked with ``fstat`` before a
  byte moves: a FIFO never blocks the caller), reads are capped;
- folders are opened ``O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK``, so a FIFO or link swapped in for
  a folder is refused at the open, never waited on (``engine._tree`` walks and removes whole
  trees with ``open_child``).

A refused path raises ``UnsafePath`` (an ``OSError``): callers treat it like a missing file.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from pathlib import Path
from typing import NoReturn

from engine._errors import FlowerError

_RESOLVE_NO_MAGICLINKS, _RESOLVE_NO_SYMLINKS, _RESOLVE_BENEATH = 0x02, 0x04, 0x08
_SYS_OPENAT2 = 437  # the same number on every Linux architecture (the unified syscall table)
# O_DIRECTORY makes the kernel refuse a non-folder (ENOTDIR) before it would open it: a FIFO
# swapped in for a folder never blocks; O_NONBLOCK in case anything ever gets that far
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_openat2: list[bool] = []  # [] untried, [True] works, [False] the kernel has none
_libc: list[ctypes.CDLL] = []  # loaded once: a walk opens thousands of folders


class UnsafePath(FlowerError, OSError):
    """A path a run made that the host will not follow: a symlink, ``..``, or not a regular file."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _relative(anchor: Path, path: str | os.PathLike[str]) -> tuple[str, ...]:
    """``path``'s parts below ``anchor``, compared as written (never resolved: resolving would follow)."""
    p = Path(os.path.abspath(path))
    try:
        parts = p.relative_to(os.path.abspath(anchor)).parts
    except ValueError:
        raise UnsafePath(f"{p} is not inside {anchor}; the host only opens workspace files below it") from None
    if ".." in parts:
        raise UnsafePath(f"{p} leaves {anchor} through '..'")
    return parts


def _open_at(dir_fd: int, parts: tuple[str, ...], flags: int, mode: int) -> int:
    """Open ``parts`` beneath ``dir_fd`` following no symlink (``openat2``, else a component walk)."""
    if not parts:
        return os.dup(dir_fd)
    if _openat2 != [False]:
        how = _OpenHow(flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0,
                       _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
        if not _libc:
            _libc.append(ctypes.CDLL(None, use_errno=True))
        fd = _libc[0].syscall(_SYS_OPENAT2, dir_fd, os.fsencode(os.path.join(*parts)), ctypes.byref(how),
                              ctypes.sizeof(how))
        if fd >= 0:
            _openat2[:] = [True]
            return fd
        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EPERM) or _openat2 == [True]:  # EPERM: a seccomp filter
            if err in (errno.ELOOP, errno.EXDEV) or _is_link(dir_fd, parts, err):
                _refuse(os.path.join(*parts), "holds a symlink")
            raise OSError(err, os.strerror(err), os.path.join(*parts))
        _openat2[:] = [False]
    fd = os.dup(dir_fd)
    try:
        for part in parts[:-1]:
            nxt = _step(fd, part, _DIR, 0)
            os.close(fd)
            fd = nxt
        return _step(fd, parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    finally:
        os.close(fd)


def _step(fd: int, name: str, flags: int, mode: int) -> int:
    try:
        return os.open(name, flags, mode, dir_fd=fd)
    except OSError as e:
        if e.errno == errno.ELOOP or _is_link(fd, (name,), e.errno):  # O_NOFOLLOW met a symlink
            _refuse(name, "is a symlink")
        raise


def _is_link(dir_fd: int, parts: tuple[str, ...], err: int) -> bool:
    """Whether an ENOTDIR came from a symlink where a folder was wanted (for the error's words)."""
    try:
        return err == errno.ENOTDIR and stat.S_ISLNK(os.lstat(os.path.join(*parts), dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def _refuse(path: str, why: str) -> NoReturn:
    raise UnsafePath(f"{path} {why}: a run made it, so the host does not follow it")


def open_child(dir_fd: int, name: str) -> int:
    """The folder ``name`` inside the open folder ``dir_fd``, opened as ``open_dir`` opens one: a
    link (``UnsafePath``) or anything but a folder (``NotADirectoryError``) there is refused,
    never followed or waited on. ``name`` is one component, as read from a listing."""
    if name in ("", ".", "..") or "/" in name:
        raise UnsafePath(f"{name!r} is not one name inside a folder; the host opens one level at a time")
    return _open_at(dir_fd, (name,), _DIR, 0)


def _anchor_fd(anchor: str | os.PathLike[str]) -> int:
    # the anchor is the host's own folder (it may be reached through the operator's links): only
    # what lies below it is the run's
    return os.open(anchor, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def open_dir(anchor: str | os.PathLike[str], path: str | os.PathLike[str], *, create: bool = False) -> int:
    """A file descriptor of the folder ``path`` beneath ``anchor`` (``create``: made as needed, 0700
    for new ones). The caller closes it. Raises ``UnsafePath`` or ``OSError``."""
    parts = _relative(Path(anchor), path)
    top = _anchor_fd(anchor)
    try:
        fd = os.dup(top)
        for part in parts:
            try:
                nxt = _open_at(fd, (part,), _DIR, 0)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o700, dir_fd=fd)
                except FileExistsError:
                    pass  # made by someone else a moment ago: the open below checks what it is
                nxt = _open_at(fd, (part,), _DIR, 0)
            os.close(fd)
            fd = nxt
        return fd
    finally:
        os.close(top)


def _open_file(anchor: str | os.PathLike[str], path: str | os.PathLike[str], flags: int,
               mode: int = 0o600) -> int:
    parts = _relative(Path(anchor), path)
    top = _anchor_fd(anchor)
    try:
        fd = _open_at(top, parts, flags | os.O_NONBLOCK | os.O_NOCTTY, mode)
    finally:
        os.close(top)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        _refuse(str(path), "is not a regular file")
    return fd


def read_bytes(anchor: str | os.PathLike[str], path: str | os.PathLike[str], *, limit: int) -> bytes:
    """At most ``limit`` bytes from the regular file ``path`` beneath ``anchor``."""
    fd = _open_file(anchor, path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as f:
        return f.read(limit)


def read_text(anchor: str | os.PathLike[str], path: str | os.PathLike[str], *,
              limit: int = 4 * 1024 * 1024) -> str:
    """``read_bytes`` decoded as UTF-8 (bad bytes replaced)."""
    return read_bytes(anchor, path, limit=limit).decode("utf-8", errors="replace")


def append_text(anchor: str | os.PathLike[str], path: str | os.PathLike[str], text: str) -> None:
    """Append ``text`` to the regular file ``path`` beneath ``anchor``, creating it and its folders."""
    folder = open_dir(anchor, Path(path).parent, create=True)
    try:
        fd = _open_at(folder, (Path(path).name,), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o600)
    finally:
        os.close(folder)
    with os.fdopen(fd, "ab") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            _refuse(str(path), "is not a regular file")
        f.write(text.encode("utf-8"))


def write_text(anchor: str | os.PathLike[str], path: str | os.PathLike[str], text: str) -> None:
    """Replace ``path`` beneath ``anchor`` with ``text`` atomically (a temp file renamed over it:
    a symlink or FIFO at ``path`` is replaced, never followed)."""
    name = Path(path).name
    folder = open_dir(anchor, Path(path).parent, create=True)
    tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(text.encode("utf-8"))
                f.flush()
                os.fsync(f.fileno())
            os.rename(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=folder)
            except OSError:
                pass  # already gone; the original error is what matters
            raise
    finally:
        os.close(folder)


def move(anchor: str | os.PathLike[str], src: str | os.PathLike[str], dst: str | os.PathLike[str], *,
         src_anchor: str | os.PathLike[str] | None = None) -> bool:
    """Rename ``src`` (beneath ``src_anchor``, default ``anchor``) to ``dst`` beneath ``anchor``
    (folders made), following no link on the way; whatever ``src`` is (a link too) moves as it
    is. False when ``src`` does not exist."""
    sfd = open_dir(src_anchor if src_anchor is not None else anchor, Path(src).parent)
    try:
        try:
            os.lstat(Path(src).name, dir_fd=sfd)
        except FileNotFoundError:
            return False
        dfd = open_dir(anchor, Path(dst).parent, create=True)
        try:
            os.rename(Path(src).name, Path(dst).name, src_dir_fd=sfd, dst_dir_fd=dfd)
        finally:
            os.close(dfd)
        return True
    finally:
        os.close(sfd)

"""Trees a prompt-injected run plants to stall the host: a folder swapped for a FIFO between the
host's listing and its open, 100,000 empty folders, a 2,000-deep chain.

The swap is made deterministic where the real attack races (a worker watching with inotify for
the host opening ``notes/``): ``FifoSwap`` wraps ``os.scandir`` so that right after a listing of
the target folder, the first listed sub-folder whose name starts with the prefix becomes a FIFO.
The host then holds a listing that says "folder" for what is a FIFO: the window the attack needs.
Old ``os.fwalk`` and any walk of the host's own go through ``os.scandir``, so both meet it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


class _Listed(list):
    """A finished listing that still behaves like ``os.scandir``'s iterator (``with`` and ``close``)."""

    def __enter__(self) -> _Listed:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def close(self) -> None:
        return None


class FifoSwap:
    """Swap sub-folders ``<prefix>*`` of ``folder`` for FIFOs, one per listing of ``folder``, at
    most ``limit`` times. ``install()`` / ``undo()``; ``swapped`` lists the FIFOs made; ``release()``
    opens each for writing so a reader stuck on one (the old walk) goes on."""

    def __init__(self, folder: Path, *, prefix: str = "z", limit: int | None = None) -> None:
        self.folder = os.path.realpath(folder)
        self.prefix, self.limit = prefix, limit
        self.swapped: list[Path] = []
        self._real = os.scandir
        self._lock = threading.Lock()

    def install(self) -> FifoSwap:
        os.scandir = self._scandir  # type: ignore[assignment]
        return self

    def undo(self) -> None:
        os.scandir = self._real

    def release(self) -> None:
        for fifo in self.swapped:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # pairs with a blocked reader
            except OSError:
                pass  # nobody waits on this one

    def _scandir(self, target=None):  # the signature of os.scandir: a path, an fd, or nothing
        it = self._real() if target is None else self._real(target)
        if not self._lists_the_folder(target):
            return it
        with it:
            listed = _Listed(it)
        with self._lock:
            if self.limit is None or len(self.swapped) < self.limit:
                for entry in sorted(listed, key=lambda e: e.name):
                    if entry.name.startswith(self.prefix) and entry.is_dir(follow_symlinks=False):
                        path = Path(self.folder, entry.name)
                        try:
                            os.rmdir(path)
                            os.mkfifo(path)
                        except OSError:
                            continue  # not empty, or gone: the next one
                        self.swapped.append(path)
                        break
        return listed

    def _lists_the_folder(self, target) -> bool:
        try:
            if isinstance(target, int):
                return os.readlink(f"/proc/self/fd/{target}") == self.folder
            return target is not None and os.path.realpath(target) == self.folder
        except OSError:
            return False


def deep_chain(folder: Path, depth: int, *, name: str = "d") -> Path:
    """``depth`` nested folders below ``folder`` (made through descriptors: the path grows past
    what the kernel takes in one call); returns the first."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
    finally:
        os.close(fd)
    return folder / name


def empty_folders(folder: Path, count: int) -> None:
    """``count`` empty folders directly in ``folder``."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(count):
            os.mkdir(f"e{i:06d}", dir_fd=fd)
    finally:
        os.close(fd)

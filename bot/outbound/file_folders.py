"""A workspace's ``.flower/inbox`` and ``.flower/outbox``, opened so that no link leads elsewhere.

The run's agent writes anywhere in its workspace, so it can plant a symbolic link at
``.flower``, at ``.flower/inbox`` or at any name inside them, and swap a file for a link between a
check and an open. Every step is therefore taken relative to an open folder descriptor with
``O_NOFOLLOW`` (``openat``), never through a path that is resolved again later: a link is refused
where it stands, not followed. What flower writes is ``0600`` in ``0700`` folders, created with
``O_EXCL`` so nothing already there is overwritten.
"""

from __future__ import annotations

import os
import re
import secrets
import unicodedata
from pathlib import Path

from engine.host import beneath

__all__ = ["FLOWER", "INBOX", "OUTBOX", "Draft", "next_number", "open_folder", "safe_name"]

FLOWER = ".flower"
INBOX = "inbox"
OUTBOX = "outbox"
MAX_NAME = 100  # characters of a saved name, after its number
_MAX_NAME_BYTES = 200  # and bytes: file systems allow 255, and Chinese takes 3 bytes a character
_NUMBERED = re.compile(r"(\d+)-")


def open_folder(workspace: Path, name: str, *, create: bool, workbench: str = FLOWER) -> int:
    """``<workspace>/<workbench>/<name>`` as an open folder descriptor (the caller closes it);
    ``workbench`` is ``.flower``, or ``.flower-repo`` beside a bound thread's worktree.

    Opened through ``engine.host.beneath`` (no link followed): raises OSError when a folder on the
    way is a link or no folder, and FileNotFoundError when one is missing and not ``create``;
    created ones are ``0700``. The workspace's own path is the bot's (``bot.core.thread`` checked it).
    """
    return beneath.open_dir(workspace, Path(workspace, workbench, name), create=create)


def safe_name(name: str) -> str:
    """``name`` safe to save as: its last path part, no control or invisible format characters,
    no ``..``, no leading dot, at most 100 characters and 200 bytes with its extension kept;
    ``file`` when nothing is left.

    >>> safe_name("../../x"), safe_name(".env"), safe_name("a\\u202egpj.exe")
    ('x', 'env', 'agpj.exe')
    """
    name = unicodedata.normalize("NFC", str(name)).replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(c for c in name if unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp"))
    name = re.sub(r"\.{2,}", ".", name).strip(" .")
    if not name:
        return "file"
    stem, dot, extension = name.rpartition(".")
    if not dot or len(extension) > 16:
        stem, dot, extension = name, "", ""
    while len(stem + dot + extension) > MAX_NAME or len((stem + dot + extension).encode()) > _MAX_NAME_BYTES:
        if not stem:
            return _cut(name)
        stem = stem[:-1]
    return (stem.rstrip(" .") or "file") + dot + extension


def _cut(name: str) -> str:
    while len(name) > MAX_NAME or len(name.encode()) > _MAX_NAME_BYTES:
        name = name[:-1]
    return name or "file"


def next_number(inbox: int) -> int:
    """One more than the highest ``<n>-`` number in the inbox (1 when it has none, or cannot be
    listed: saving never replaces a file anyway)."""
    try:
        entries = os.listdir(inbox)
    except OSError:
        return 1
    numbers = [int(m.group(1)) for entry in entries if (m := _NUMBERED.match(entry))]
    return max(numbers, default=0) + 1


class Draft:
    """A new file (``0600``, never executable) written in the open inbox folder under a hidden
    temporary name, put in place by ``save_as``.

    Until then nobody sees a partial file under the final name; ``discard`` (or leaving the
    ``with`` block without saving) removes it.
    """

    def __init__(self, inbox: int) -> None:
        self.inbox = inbox
        self.temp = f".part-{secrets.token_hex(8)}"
        self.fd = os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                          dir_fd=inbox)
        self.saved: str | None = None

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]

    def save_as(self, number: int, name: str) -> tuple[int, str]:
        """Link the draft in as ``<number>-<name>`` (the next number when that one is taken: a
        link never replaces a file); return the number and the name used."""
        for n in range(number, number + 1000):
            final = f"{n}-{name}"
            try:
                os.link(self.temp, final, src_dir_fd=self.inbox, dst_dir_fd=self.inbox, follow_symlinks=False)
            except FileExistsError:
                continue
            self.saved = final
            return n, final
        raise FileExistsError(f"no free number from {number} for {name!r}")

    def close(self) -> None:
        os.close(self.fd)
        try:
            os.unlink(self.temp, dir_fd=self.inbox)  # unlink never follows a link: only this name goes
        except FileNotFoundError:
            pass

    def __enter__(self) -> Draft:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

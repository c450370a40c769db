"""Why the bot's storage refused a write, in one word a person can be told: ``diagnose``.

``bot.db`` fails as SQLite says (``StoreError`` whose cause carries SQLite's error code), the
bot's tables on PostgreSQL as the server says (the cause's SQLSTATE), a workspace folder as the
OS says (``OSError`` and its errno). Anything else is not a storage fault (a bug, a network
error) and gets None, so the caller raises it on as before.
"""

from __future__ import annotations

import errno
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bot.errors import StoreVanished
from engine import StoreError

__all__ = ["Fault", "StorageFault", "Where", "diagnose"]

Fault = Literal["busy", "full", "read-only", "gone", "broken"]
Where = Literal["database", "workspaces", "files"]  # files: another folder the bot writes (a repository)

# SQLite's primary result codes (the low byte of an extended code)
_SQLITE: dict[int, Fault] = {
    5: "busy",  # SQLITE_BUSY: another connection holds the write lock past the busy timeout
    6: "busy",  # SQLITE_LOCKED
    13: "full",  # SQLITE_FULL: the disk (or max_page_count) is full
    8: "read-only",  # SQLITE_READONLY
    3: "read-only",  # SQLITE_PERM
    14: "broken",  # SQLITE_CANTOPEN
    10: "broken",  # SQLITE_IOERR
    11: "broken",  # SQLITE_CORRUPT
    26: "broken",  # SQLITE_NOTADB
}
# PostgreSQL's SQLSTATEs (asyncpg's ``sqlstate``); any other of a PostgreSQL error is "broken"
_SQLSTATE: dict[str, Fault] = {
    "55P03": "busy",  # lock_not_available: another replica held the bot's lock past the busy timeout
    "40P01": "busy",  # deadlock_detected
    "40001": "busy",  # serialization_failure
    "53100": "full",  # disk_full
    "53200": "full",  # out_of_memory
    "25006": "read-only",  # read_only_sql_transaction: a standby, or default_transaction_read_only
    "42501": "read-only",  # insufficient_privilege
}
_ERRNO: dict[int, Fault] = {
    errno.ENOSPC: "full",
    errno.EDQUOT: "full",
    errno.EROFS: "read-only",
    errno.EACCES: "read-only",
    errno.EPERM: "read-only",  # an immutable folder (chattr +i) says this even to root
}


@dataclass(frozen=True)
class StorageFault:
    """What refused (``where``), how (``fault``), and the error's own words (``detail``, for the log)."""

    where: Where
    fault: Fault
    detail: str


def diagnose(exc: BaseException, *, workspaces: Path | None = None) -> StorageFault | None:
    """The storage fault behind ``exc``, or None when ``exc`` is not one.

    ``StoreVanished`` is "gone"; a ``StoreError`` is classed by the ``sqlite3.Error`` (or the
    ``OSError`` of a folder that cannot be made, or of a server out of reach) it was raised
    from, or by the SQLSTATE of the asyncpg error, "broken" for codes not listed (and for an
    asyncpg error without one, a dropped connection), and None when it has none of those causes
    (the store refused a value); an ``OSError`` counts only for the errnos of a full, read-only
    or forbidden disk (a refused connection does not), and is in "workspaces" when the file it
    names is under ``workspaces``, else in "files".
    """
    if isinstance(exc, StoreVanished):
        return StorageFault("database", "gone", str(exc))
    if isinstance(exc, StoreError):
        cause = exc.__cause__
        if isinstance(cause, sqlite3.Error):
            code = getattr(cause, "sqlite_errorcode", None)
            return StorageFault("database", _SQLITE.get(code & 0xFF, "broken") if code else "broken", str(exc))
        if isinstance(cause, OSError):
            return StorageFault("database", _ERRNO.get(cause.errno or 0, "broken"), str(exc))
        if type(cause).__module__.startswith("asyncpg"):  # not imported here: the driver is optional
            return StorageFault("database", _SQLSTATE.get(getattr(cause, "sqlstate", None) or "", "broken"), str(exc))
        return None  # the store refused a value (a bad ts, an unknown state): a bug, not the disk
    if isinstance(exc, OSError) and exc.errno in _ERRNO:
        return StorageFault("workspaces" if _under(exc.filename, workspaces) else "files", _ERRNO[exc.errno], str(exc))
    return None


def _under(filename: object, folder: Path | None) -> bool:
    if folder is None or not isinstance(filename, (str, Path)):
        return False
    return Path(filename).is_relative_to(folder)

"""Files a run leaves in ``<workspace>/.flower/outbox``, posted back to its thread.

The agent owns the workspace, so the outbox is read as hostile: only regular files directly in
it, each opened with ``O_NOFOLLOW`` and checked on the open descriptor (``fstat``), so a link
swapped in after the listing is refused at the open and a file from elsewhere never reaches the
thread. A file with other hard links is refused too: it may be a secret the agent could name but
not read through the sandbox. Each file is posted once: its key (name and content hash) goes into
``Uploaded.keys``, which the caller passes back as ``already``; a changed file is posted again.
Images show inline in Slack by themselves, as they keep their name's extension.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import Refusal
from bot.outbound.file_folders import FLOWER, OUTBOX, open_folder
from bot.outbound.files_in import Refused, limit_said, megabytes, refused_lines
from bot.render import texts
from bot.settings.config import Config
from engine.host import file_work

__all__ = ["MAX_OPENED", "MAX_UPLOADS", "Uploaded", "file_key", "skipped_text", "upload_outbox"]

log = logging.getLogger(__name__)

MAX_UPLOADS = 10  # files posted at once, in one message; the rest go next time
# files opened, read and hashed per post (the ones posted before count too); the names past them are
# not opened: a run can leave 100,000 sparse files of the largest size in its outbox
MAX_OPENED = 100
# O_NOFOLLOW: a link swapped in after the listing is refused here; O_NONBLOCK: so is a FIFO, without hanging
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Uploaded:
    """What ``upload_outbox`` posted (``names``, in order), what it left and why (``skipped``), and
    ``keys``: the keys of every file in the outbox that is posted as it is now; pass them as
    ``already`` next time (files since removed drop out, so the set does not grow forever)."""

    names: list[str] = field(default_factory=list)
    skipped: list[Refused] = field(default_factory=list)
    keys: frozenset[str] = frozenset()


def file_key(name: str, content: bytes) -> str:
    """The key of a file as posted: its name and content hash (``<sha256>:<name>``); a byte of the
    name that is no UTF-8 is written as its escape (``\\xff``), so the key can be stored."""
    name = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return f"{hashlib.sha256(content).hexdigest()}:{name}"


def skipped_text(skipped: list[Refused]) -> str:
    """What to say in the thread about the files left in the outbox ("" when none was)."""
    if not skipped:
        return ""
    return "\n".join([texts.FILES_NOT_POSTED, *refused_lines(skipped)])


def _read(outbox: int, name: str, config: Config) -> tuple[bytes, str]:
    """The content of ``name`` in the outbox and its ``file_key`` (hashed here, in the run-files
    pool: never on the event loop), or ``Refusal`` with the reason."""
    limit, too_big, said = config.file_max_bytes, texts.FILE_TOO_BIG, limit_said(config)
    try:
        fd = os.open(name, _OPEN_FLAGS, dir_fd=outbox)
    except OSError as exc:  # ELOOP: a link swapped in since the listing
        raise Refusal(texts.FILE_IS_LINK if exc.errno == errno.ELOOP
                    else texts.FILE_UNREADABLE.format(error=exc.strerror or type(exc).__name__)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refusal(texts.FILE_IS_FOLDER if stat.S_ISDIR(info.st_mode) else texts.FILE_NOT_PLAIN)
        if info.st_nlink > 1:
            raise Refusal(texts.FILE_HARD_LINKED)
        if info.st_size > limit:
            raise Refusal(too_big.format(size=megabytes(info.st_size), limit=said))
        chunks, size = [], 0
        while chunk := os.read(fd, 1024 * 1024):
            size += len(chunk)
            if size > limit:  # it grew after fstat
                raise Refusal(too_big.format(size=megabytes(size), limit=said))
            chunks.append(chunk)
    except OSError as exc:
        raise Refusal(texts.FILE_UNREADABLE.format(error=exc.strerror or type(exc).__name__)) from None
    finally:
        os.close(fd)
    content = b"".join(chunks)
    if not content:
        raise Refusal(texts.FILE_EMPTY)  # Slack refuses an empty upload
    return content, file_key(name, content)


def _listing(outbox: int) -> list[tuple[str, str | None]]:
    """Every name in the outbox, sorted, with the reason it is skipped at the listing already
    (None: worth opening)."""
    with os.scandir(outbox) as entries:
        found = sorted(entries, key=lambda e: e.name)
    listed: list[tuple[str, str | None]] = []
    for entry in found:
        if entry.name.startswith("."):
            listed.append((entry.name, texts.FILE_HIDDEN))
        elif entry.is_symlink():  # even one pointing inside the workspace: what it names may change
            listed.append((entry.name, texts.FILE_IS_LINK))
        elif entry.is_dir(follow_symlinks=False):
            listed.append((entry.name, texts.FILE_IS_FOLDER))
        else:
            listed.append((entry.name, None))
    return listed


def _shown(name: str) -> str:
    """``name`` as Slack and the bot's database may carry it: no control characters (a line break
    would write a line of its own in a note) or lone surrogates (an undecodable byte in a file
    name), which would break the request or the store."""
    cleaned = "".join(c for c in name if c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF)
    return cleaned or "file"


async def upload_outbox(client: AsyncWebClient, config: Config, workspace: Path, channel: str, thread_ts: str, *,
                        already: set[str] | frozenset[str], workbench: str = FLOWER) -> Uploaded:
    """Post the files in ``<workspace>/<workbench>/outbox`` to the thread, in one message; the
    names in the result are as the thread is shown them (``_shown``), never the raw ones.

    At most ``MAX_UPLOADS`` new or changed files, by name; the rest are skipped with a reason and
    go next time. Only the first ``MAX_OPENED`` files are opened; the names past them are skipped
    (said) unread. A missing outbox posts nothing; one that is a link (or ``.flower`` is) posts
    nothing and says so. Never raises for Slack's refusal: the files are skipped with its error
    and not keyed, so the next call tries them again.
    """
    try:  # the run's folder: opened, listed and read in the run-files pool, never on the event loop
        outbox = await file_work(open_folder, Path(workspace), OUTBOX, create=False, workbench=workbench,
                                 what="opening the run's outbox")
    except FileNotFoundError:
        return Uploaded()
    except OSError as exc:
        log.warning("outbox not read: %s/%s in %s is not a plain folder (%s)", workbench, OUTBOX, workspace, exc)
        return Uploaded(skipped=[Refused(f"{workbench}/{OUTBOX}", texts.FILE_OUTBOX_UNSAFE)])
    keys: set[str] = set()
    batch: list[tuple[str, bytes, str]] = []
    skipped: list[Refused] = []
    opened = 0
    try:
        for name, reason in await file_work(_listing, outbox, what="listing the run's outbox"):
            if reason is None and opened >= MAX_OPENED:
                reason = texts.FILE_PAST_LOOKED.format(max=MAX_OPENED)
            if reason is not None:
                skipped.append(Refused(_shown(name), reason))
                continue
            opened += 1
            try:
                content, key = await file_work(_read, outbox, name, config, what=f"reading the outbox file {name!r}")
            except Refusal as skip:
                skipped.append(Refused(_shown(name), skip.reason))
                continue
            if key in already:
                keys.add(key)  # posted before, unchanged
            elif len(batch) < MAX_UPLOADS:
                batch.append((name, content, key))
            else:
                skipped.append(Refused(_shown(name), texts.FILE_TOO_MANY_OUT.format(max=MAX_UPLOADS)))
    finally:
        os.close(outbox)
    if not batch:
        return Uploaded([], skipped, frozenset(keys))
    uploads = [{"file": content, "filename": _shown(name), "title": _shown(name)} for name, content, _ in batch]
    try:
        await client.files_upload_v2(channel=channel, thread_ts=thread_ts, file_uploads=uploads)
    except SlackApiError as exc:
        error = str(exc.response.get("error") or exc.response.status_code)
        return Uploaded([], skipped + [Refused(_shown(n), texts.FILE_UPLOAD_FAILED.format(error=error))
                                       for n, _, _ in batch], frozenset(keys))
    except (SlackClientError, aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
        log.warning("outbox of %s not posted", workspace, exc_info=True)
        error = str(exc) or type(exc).__name__
        return Uploaded([], skipped + [Refused(_shown(n), texts.FILE_UPLOAD_FAILED.format(error=error[:200]))
                                       for n, _, _ in batch], frozenset(keys))
    keys.update(key for _, _, key in batch)
    return Uploaded([_shown(name) for name, _, _ in batch], skipped, frozenset(keys))

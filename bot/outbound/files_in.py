"""Files people share in a run's thread, saved into its workspace's ``.flower/inbox``.

``take_files`` gets a message event's ``files`` and downloads each one flower opens, with the bot
token, into ``<workspace>/.flower/inbox/<n>-<name>``; what it refuses comes back with the reason
in a person's words (``refusal_text`` says it in the thread). Everything is refused before it is
fetched where it can be (too many, too large, a kind flower does not open, a URL off Slack's file
host), and checked again while and after it is fetched: the declared size and kind are claims,
so the stream is cut at the limit and the bytes must be what the file says it is. The token goes
only to Slack's file host or to ``SLACK_API_URL``'s host (a proxy, the tests' fake Slack), and
no redirect is followed with it. No error escapes: a file that fails is a refusal.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.outside_text import outside
from bot.core.split_text import clip
from bot.errors import Refusal
from bot.outbound.file_folders import FLOWER, INBOX, Draft, next_number, open_folder, safe_name
from bot.outbound.file_kinds import Kind, check_content, image_type, kind_of
from bot.render import texts
from bot.settings.config import Config

__all__ = ["MAX_FILES", "MAX_LINES", "Refused", "Taken", "TakenFile", "limit_said", "megabytes",
           "refusal_text", "refused_lines", "take_files"]

log = logging.getLogger(__name__)

MAX_FILES = 10  # a message's files flower opens; Slack attaches at most 10 to a message anyway
# refusals named one by one in a note: a run can leave 100,000 files in its outbox, and a line each
# was a note of hundreds of parts in the one queue every thread's notices wait in
MAX_LINES = 20
SLACK_FILE_HOSTS = frozenset({"files.slack.com"})
_HEAD = 4096  # the first bytes kept to check what a file really is
_CHUNK = 64 * 1024
_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=30, sock_connect=30, sock_read=60)


@dataclass(frozen=True)
class TakenFile:
    """A file saved in the inbox: ``path`` relative to the workspace, ``absolute`` on this machine
    (for the bot only: never said in Slack), the person's ``name``, and the checked ``mimetype``."""

    path: Path
    absolute: Path
    name: str
    size: int
    mimetype: str
    is_image: bool


@dataclass(frozen=True)
class Refused:
    """A file not taken (or not posted), and why, in the person's words (mrkdwn, fields escaped)."""

    name: str
    reason: str


@dataclass(frozen=True)
class Taken:
    """What ``take_files`` saved and refused; ``next_start`` is the number the next file would get."""

    files: list[TakenFile] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    next_start: int = 1


def megabytes(size: int) -> str:
    """``size`` in bytes as a person reads it: ``50 MB``, ``1.5 MB``, ``0.2 MB``; rounded up, so a
    file just over the limit never reads as the limit itself."""
    value = size / (1024 * 1024)
    if value >= 10:
        return f"{math.ceil(value)} MB"
    return f"{math.ceil(value * 10) / 10:.1f}".removesuffix(".0") + " MB"


def limit_said(config: Config) -> str:
    """``FLOWER_FILE_MAX_MB`` as a refusal names it: ``20 MB``."""
    return f"{config.file_max_mb:g} MB"


def refused_lines(refused: list[Refused]) -> list[str]:
    """One ``• `name` reason`` line per refusal, the first ``MAX_LINES`` of them, then one line
    counting the rest; a name is the person's, so it is escaped (and loses backticks, which would
    end its code span)."""
    lines = []
    for item in refused[:MAX_LINES]:
        name = clip(item.name.replace("`", "'"), 80)
        lines.append(texts.FILE_LINE.format(name=outside(name), reason=item.reason))
    if len(refused) > MAX_LINES:
        lines.append(texts.FILES_MORE.format(n=len(refused) - MAX_LINES))
    return lines


def refusal_text(refused: list[Refused]) -> str:
    """What to say in the thread about the files not taken ("" when none was refused). It names
    the files as the person did and never a path on this machine."""
    if not refused:
        return ""
    return "\n".join([texts.FILES_NOT_OPENED, *refused_lines(refused)])


def _host_allowed(url: str, api_url: str) -> bool:
    """True when the bot token may go to ``url``: https on Slack's file host, or (http or https)
    the host and port of ``SLACK_API_URL``. A URL with a user name is never one of them."""
    parts, api = urlsplit(url), urlsplit(api_url)
    if parts.scheme not in ("http", "https") or parts.username is not None or parts.password is not None:
        return False
    try:
        port, api_port = parts.port or _default_port(parts.scheme), api.port or _default_port(api.scheme)
    except ValueError:  # a port that is no number
        return False
    host = (parts.hostname or "").lower()
    if host and host == (api.hostname or "").lower() and port == api_port:
        return True
    return parts.scheme == "https" and host in SLACK_FILE_HOSTS and port == 443


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


async def _describe(client: AsyncWebClient, file: dict[str, Any]) -> dict[str, Any]:
    """The file object in full: a Slack Connect file comes as ``check_file_info`` with no URL."""
    if file.get("file_access") != "check_file_info":
        return file
    try:
        answer = await client.files_info(file=str(file.get("id") or ""))
    except SlackApiError as exc:
        raise Refusal(texts.FILE_NO_INFO.format(error=exc.response.get("error") or exc.response.status_code)) from None
    except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
        raise Refusal(texts.FILE_NO_INFO.format(error=_said(exc))) from None
    described = answer.get("file")
    if not isinstance(described, dict):
        raise Refusal(texts.FILE_NO_INFO.format(error="no file"))
    return described


def _said(exc: BaseException) -> str:
    """An error as a person may read it: its kind and text, never a path (an OSError's own words only)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return clip(str(exc) or type(exc).__name__, 200)


def _declared_size(file: dict[str, Any]) -> int | None:
    size = file.get("size")
    return size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None


def _check_before(config: Config, file: dict[str, Any]) -> tuple[Kind, str]:
    """The file's kind and download URL, or the refusal that needs no download."""
    size, limit = _declared_size(file), config.file_max_bytes
    if size is not None and size > limit:
        raise Refusal(texts.FILE_TOO_BIG.format(size=megabytes(size), limit=limit_said(config)))
    mimetype, filetype = str(file.get("mimetype") or ""), str(file.get("filetype") or "")
    kind = kind_of(str(file.get("name") or ""), mimetype, filetype)
    if kind is None:
        raise Refusal(texts.FILE_KIND.format(kind=mimetype or filetype or "?"))
    url = file.get("url_private_download") or file.get("url_private")
    if not isinstance(url, str) or not url:
        raise Refusal(texts.FILE_NO_LINK)
    if not _host_allowed(url, config.api_url):
        raise Refusal(texts.FILE_FOREIGN.format(host=urlsplit(url).hostname or url[:60]))
    return kind, url


async def _download(session: aiohttp.ClientSession, client: AsyncWebClient, config: Config, url: str,
                    draft: Draft, declared_mime: str) -> tuple[int, bytes]:
    """Stream ``url`` into ``draft``, cut at the limit; return the size and the first bytes."""
    limit = config.file_max_bytes
    headers = {"Authorization": f"Bearer {config.bot_token}"}
    async with session.get(url, headers=headers, allow_redirects=False, proxy=client.proxy,
                           ssl=client.ssl if client.ssl is not None else True) as response:
        if response.status != 200:
            hint = texts.FILE_SCOPE_HINT if response.status in (401, 403) or 300 <= response.status < 400 else ""
            raise Refusal(texts.FILE_HTTP.format(status=response.status) + hint)
        if response.content_type == "text/html" and not declared_mime.startswith("text/html"):
            raise Refusal(texts.FILE_SIGN_IN)  # Slack's answer to a token without files:read
        if response.content_length is not None and response.content_length > limit:
            raise Refusal(texts.FILE_TOO_BIG.format(size=megabytes(response.content_length), limit=limit_said(config)))
        size, head = 0, b""
        async for chunk in response.content.iter_chunked(_CHUNK):
            size += len(chunk)
            if size > limit:  # the declared size was a claim: stop reading, the draft is removed
                raise Refusal(texts.FILE_GREW.format(limit=limit_said(config)))
            if len(head) < _HEAD:
                head += chunk[: _HEAD - len(head)]
            draft.write(chunk)
    return size, head


async def _take_one(session: aiohttp.ClientSession, client: AsyncWebClient, config: Config, workspace: Path,
                    inbox: int, described: dict[str, Any], number: int, workbench: str) -> tuple[TakenFile, int]:
    """Fetch, check and save one (described) file as number ``number`` or later; return it and its number."""
    kind, url = _check_before(config, described)
    name = str(described.get("name") or described.get("title") or "file")
    declared_mime = str(described.get("mimetype") or "")
    try:
        draft = Draft(inbox)
    except OSError as exc:
        raise Refusal(texts.FILE_SAVE_FAILED.format(error=_said(exc))) from None
    with draft:
        try:
            size, head = await _download(session, client, config, url, draft, declared_mime)
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            raise Refusal(texts.FILE_UNREACHABLE.format(error=_said(exc))) from None
        problem = check_content(kind, head)
        if problem == "program":
            raise Refusal(texts.FILE_PROGRAM)
        if problem == "mismatch":
            raise Refusal(texts.FILE_NOT_AS_SAID.format(kind=texts.FILE_KIND_NAMES[kind]))
        try:
            number, saved = draft.save_as(number, safe_name(name))
        except OSError as exc:
            raise Refusal(texts.FILE_SAVE_FAILED.format(error=_said(exc))) from None
    image = image_type(head)
    relative = Path(workbench, INBOX, saved)
    return TakenFile(path=relative, absolute=workspace / relative, name=name, size=size,
                     mimetype=image or declared_mime or "application/octet-stream", is_image=image is not None), number


def _name_of(file: object) -> str:
    if not isinstance(file, dict):
        return "file"
    return str(file.get("name") or file.get("title") or file.get("id") or "file")


async def take_files(client: AsyncWebClient, config: Config, files: list[dict], workspace: Path, *,
                     start: int, workbench: str = FLOWER) -> Taken:
    """Save the files flower opens from a message's ``files`` into ``<workspace>/.flower/inbox``.

    Numbers count from ``start`` (or past the highest already in the inbox, whichever is more),
    so a reply's files never replace earlier ones; ``Taken.next_start`` is the next free one. The
    inbox and ``.flower`` are created (``0700``) when missing; when either is a link nothing is
    fetched and every file is refused. Never raises for a file: each failure is a ``Refused``.
    """
    given = [f for f in files if isinstance(f, dict)]
    wanted = given[:MAX_FILES]
    too_many = [Refused(_name_of(f), texts.FILE_TOO_MANY.format(max=MAX_FILES)) for f in given[MAX_FILES:]]
    taken: list[TakenFile] = []
    refused: list[Refused] = []
    try:
        inbox = open_folder(Path(workspace), INBOX, create=True, workbench=workbench)
    except OSError as exc:
        log.warning("files not taken: %s/%s in %s is not a plain folder (%s)", workbench, INBOX, workspace, exc)
        return Taken([], [Refused(_name_of(f), texts.FILE_NOT_SAVED) for f in wanted] + too_many, start)
    try:
        number = max(start, next_number(inbox))
        async with aiohttp.ClientSession(timeout=_TIMEOUT) as session:
            for file in wanted:
                described = file  # until files.info names a Slack Connect file
                try:
                    described = await _describe(client, file)
                    got, used = await _take_one(session, client, config, Path(workspace), inbox, described, number,
                                                workbench)
                except Refusal as refusal:
                    log.info("file %r not taken: %s", _name_of(described), refusal.reason)
                    refused.append(Refused(_name_of(described), refusal.reason))
                except Exception as exc:  # noqa: BLE001 - one broken file must not lose the others
                    log.warning("file %r not taken", _name_of(described), exc_info=True)
                    refused.append(Refused(_name_of(described), texts.FILE_UNREACHABLE.format(error=_said(exc))))
                else:
                    taken.append(got)
                    number = used + 1
    finally:
        os.close(inbox)
    return Taken(taken, refused + too_many, number)

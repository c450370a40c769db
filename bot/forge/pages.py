"""Reading a list the forge splits into pages: what matters of it, at a bounded cost, whatever a
stranger posts.

Both forges list remarks oldest first, at most 100 a page (GitHub's issue comments and reviews
cannot be sorted otherwise, GitLab's discussions neither), and say in the headers whether a next
page exists (GitHub's ``Link: <…>; rel="next"``, GitLab's ``x-next-page``) and which page is the
last (``rel="last"``, ``x-total-pages``). One read of a list takes (``Where`` says where the last
one stopped):

- onwards from the page the previous read stopped at, up to ``CATCH_UP`` pages: remarks are
  appended at the end, so everything said since is read, however much a stranger adds; a flood
  only makes the next reads catch up ``CATCH_UP`` pages at a time, it never pushes a maintainer's
  remark out of sight;
- the newest ``WINDOW`` pages every time;
- and ``SWEEP`` of the pages already passed, in turn, so each is read again within (pages / SWEEP)
  reads: a reply inside an old thread (GitLab lists it with its thread, by the thread's first note)
  and a review drafted before a flood and submitted after it (GitHub lists it by its id) land on a
  page already passed, out of the newest ones once a stranger posts enough after them.

Deleting moves every later remark back: a stranger who deletes a hundred comments of theirs from
before where the last read stopped would move a remark said since onto a page already passed. So a
read keeps its anchor, the largest key (the forge's id, which grows down the list) on the pages
before where it stopped, and first looks at the page before: while that page holds a key past the
anchor, the unread remarks begin on it or earlier, and the read steps back (taking the steps out of
its ``CATCH_UP``; the next read goes on stepping). Deletions only delay the catch-up: each step back
is a hundred of them, and a stranger has only as many as they posted.

A page is kept (for its 304s) for as long as the pull request is watched, so what is kept of it is
``clipped``: no string longer than ``KEEP_CHARS`` (a stranger's 65,536-character comments, five
thousand of them, would otherwise hold 300 MB of the bot's memory per pull request).

Every page is asked conditionally with its own ETag, so unchanged pages cost a 304 and "changed"
means some page changed. A page is asked by its number on our own path, never by the URL a header
names (the token goes nowhere else). A 304 does not repeat the headers and a page's ETag does not
change when a page after it appears, so a full page is always followed by a look at the next one.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["CATCH_UP", "KEEP_CHARS", "MOST", "PER_PAGE", "Page", "SWEEP", "WINDOW", "Where", "clipped",
           "github_links", "gitlab_links", "read_pages"]

PER_PAGE = 100  # the most either forge gives in one page
CATCH_UP = 5  # pages read onwards from where the last read stopped
WINDOW = 5  # the newest pages, read again every time (conditional: a 304 each while unchanged)
SWEEP = 2  # the pages already passed, read again in turn
MOST = 1 + CATCH_UP + WINDOW + SWEEP  # the most pages one read of a list asks (1: the page before its start)
KEEP_CHARS = 4000  # of any one string in a page of remarks: what a model is shown of a remark
_LINK = re.compile(r'<[^>]*[?&]page=(\d+)[^>]*>\s*;\s*rel="?([\w ]+)"?')


@dataclass(frozen=True)
class Page:
    """One page of a list: its items, whether the forge names a page after it, the last page as the
    forge said it (None when it did not), and the keys its items are listed by (None when empty)."""

    items: list[Any]
    has_next: bool
    last: int | None
    keys: tuple[int, int] | None = None  # (the first item's key, the largest): the order the list is in


@dataclass(frozen=True)
class Where:
    """Where the next read of a list goes on: the ``page`` it starts at, the ``anchor`` (the largest
    key on the pages before that one; None before a first read) and the next passed page it ``sweep``s.
    Kept in the watch as ``[page, anchor, sweep]``."""

    page: int = 1
    anchor: int | None = None
    sweep: int = 1

    def to_json(self) -> list[int | None]:
        return [self.page, self.anchor, self.sweep]

    @classmethod
    def from_json(cls, data: Any) -> Where:
        """What ``to_json`` wrote; an older watch's page number alone is a ``Where`` with no anchor."""
        if isinstance(data, int):
            return cls(max(1, data))
        page, anchor, sweep = (list(data) + [1, None, 1][len(data):])[:3]
        return cls(max(1, int(page)), None if anchor is None else int(anchor), max(1, int(sweep)))


def clipped(data: Any) -> Any:
    """``data`` (JSON) with every string cut to ``KEEP_CHARS``."""
    if isinstance(data, str):
        return data[:KEEP_CHARS]
    if isinstance(data, list):
        return [clipped(v) for v in data]
    if isinstance(data, dict):
        return {k: clipped(v) for k, v in data.items()}
    return data


def github_links(headers: Any) -> tuple[bool, int | None]:
    """(a next page is named, the last page's number) from GitHub's ``Link`` header."""
    rels = {rel: int(page) for page, names in _LINK.findall(headers.get("Link", ""))
            for rel in names.split()}
    return "next" in rels, rels.get("last")


def gitlab_links(headers: Any) -> tuple[bool, int | None]:
    """(a next page is named, the last page's number) from GitLab's ``x-next-page`` / ``x-total-pages``
    (the latter left out above 10,000 items)."""
    total = str(headers.get("x-total-pages") or "")
    return bool(str(headers.get("x-next-page") or "").strip()), int(total) if total.isdigit() else None


async def read_pages(fetch: Callable[[int], Awaitable[Page]], where: Where = Where()) -> tuple[list[Any], Where]:
    """The items of the pages one read takes (see the module), and where the next read goes on.

    ``fetch(n)`` reads page ``n`` (from 1); ``where`` is what the previous read returned. Items come
    page by page; one that moved between two pages as the list changed, or is on a page read again,
    comes again.
    """
    read: dict[int, Page] = {}

    async def take(n: int) -> Page:
        if n not in read:
            read[n] = await fetch(n)
        return read[n]

    start, settled = where.page, True
    looking = start > 1 and where.anchor is not None
    budget = CATCH_UP + looking  # pages read before the window: onwards, and the look at the page before
    if looking:
        assert where.anchor is not None
        start, settled = await _unread_from(take, start, where.anchor, budget - 1, read)
    elif start > 1 and not (await take(start)).items:  # no anchor (an older watch) and the list shrank:
        start = 1                                         # start again from the top
    number = resume = start
    said_last, newest = None, None
    while True:
        page = await take(number)
        said_last = page.last or said_last
        if page.items:  # the next read goes on past a page the forge says is followed, else reads it again
            resume = number + 1 if page.has_next else number
        if not (page.has_next or len(page.items) >= PER_PAGE):
            newest = number  # the end, whatever a kept header says
            break
        number += 1
        if len(read) >= budget and number not in read:
            # stopped by the cap: the window ends at the forge's last page, when it named one past those read
            newest = said_last if said_last is not None and said_last >= number else None
            break
    if newest is not None:
        for older in range(newest, max(0, newest - WINDOW), -1):
            await take(older)
    run = set(read)  # what the sweep adds does not move the anchor: only pages read in a row from ``start``
    sweep = where.sweep if where.sweep < start else 1
    for _ in range(SWEEP):
        while sweep in read:
            sweep += 1
        if sweep >= start:
            sweep = 1
            break
        await take(sweep)
        sweep += 1
    items = [item for n in sorted(read) for item in read[n].items]
    if not settled:  # still looking back for where the unread items begin: the next read looks on from here
        return items, Where(start, where.anchor, sweep)
    keys = [read[n].keys[1] for n in run if n < resume and read[n].keys is not None]  # type: ignore[index]
    anchor = max([*keys, where.anchor] if where.anchor is not None else keys, default=None)
    return items, Where(resume, anchor, sweep)


async def _unread_from(take: Callable[[int], Awaitable[Page]], number: int, anchor: int, looks: int,
                       read: dict[int, Page]) -> tuple[int, bool]:
    """The page the first item after ``anchor`` is on now, looking back from ``number`` at most ``looks``
    pages; and whether it was found (False: the next read goes on looking from the page returned).

    Items are listed by key, so it is on ``number`` while the page before ends at or below ``anchor``;
    when items before it were deleted, it moved back a page per hundred of them."""
    while number > 1:
        if len(read) >= looks and number - 1 not in read:
            return number, False
        before = await take(number - 1)
        if not before.items:  # the list now ends before it: jump near its end (page 1 names the last)
            one = await take(1) if number - 1 > 1 and len(read) < looks else None
            end = None if one is None else one.last if one.last is not None else None if one.has_next else 1
            number = min(number - 1, end + 1) if end is not None else number - 1
            continue
        if before.keys is None or before.keys[1] <= anchor:
            return number, True  # everything before ``number`` was read
        number -= 1
        if before.keys[0] <= anchor:
            return number, True  # the anchor is on this page: what follows it starts here
    return 1, True

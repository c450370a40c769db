"""Reading a list the forge splits into pages: what matters of it, at a bounded cost, whatever a
stranger posts.

Both forges list remarks oldest first, at most 100 a page (GitHub's issue comments and reviews
cannot be sorted otherwise, GitLab's discussions neither), and say in the headers whether a next
page exists (GitHub's ``Link: <…>; rel="next"``, GitLab's ``x-next-page``) and which page is the
last (``rel="last"``, ``x-total-pages``). One read of a list takes:

- onwards from the page the previous read stopped at (``Conditional.resume``), up to ``CATCH_UP``
  pages: remarks are appended at the end, so everything said since is read, however much a stranger
  adds; a flood only makes the next reads catch up ``CATCH_UP`` pages at a time, it never pushes a
  maintainer's remark out of sight;
- and the newest ``WINDOW`` pages every time: a reply inside an old thread (GitLab) or a review
  submitted late (GitHub) lands on a page already passed.

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

__all__ = ["CATCH_UP", "PER_PAGE", "Page", "WINDOW", "github_links", "gitlab_links", "read_pages"]

PER_PAGE = 100  # the most either forge gives in one page
CATCH_UP = 5  # pages read onwards from where the last read stopped
WINDOW = 5  # the newest pages, read again every time (conditional: a 304 each while unchanged)
_LINK = re.compile(r'<[^>]*[?&]page=(\d+)[^>]*>\s*;\s*rel="?([\w ]+)"?')


@dataclass(frozen=True)
class Page:
    """One page of a list: its items, whether the forge names a page after it, and the last page
    as the forge said it (None when it did not)."""

    items: list[Any]
    has_next: bool
    last: int | None


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


async def read_pages(fetch: Callable[[int], Awaitable[Page]], *, start: int) -> tuple[list[Any], int]:
    """The items of the pages one read takes (see the module), and the page the next read starts at.

    ``fetch(n)`` reads page ``n`` (from 1); ``start`` is what the previous read returned (1 at first).
    Items come page by page; one that moved between two pages as the list changed may come twice.
    """
    read: dict[int, list[Any]] = {}
    number = resume = max(1, start)
    said_last, newest = None, None
    for _ in range(CATCH_UP):
        page = await fetch(number)
        if not page.items and number == start > 1:  # fewer pages than where the last read stopped: remarks
            number = resume = 1                       # were deleted, so start again from the top
            continue
        read[number], said_last = page.items, page.last or said_last
        if page.items:  # the next read goes on past a page the forge says is followed, else reads it again
            resume = number + 1 if page.has_next else number
        if not (page.has_next or len(page.items) >= PER_PAGE):
            newest = number  # the end, whatever a kept header says
            break
        number += 1
    else:  # stopped by the cap: the window ends at the forge's last page, when it named one past those read
        newest = said_last if said_last is not None and said_last >= number else None
    if newest is not None:
        for older in range(newest, max(0, newest - WINDOW), -1):
            if older not in read:
                read[older] = (await fetch(older)).items
    return [item for n in sorted(read) for item in read[n]], resume

"""bot.forge.pages and bot.forge.markers on their own: which pages one read of a list takes (so a flood
never hides a later remark and a read stays bounded), the forges' pagination headers, and the keyed
markers that only the bot's own comments carry."""

from __future__ import annotations

import pytest

from bot.forge.markers import MARKER, Markers, own
from bot.forge.pages import CATCH_UP, PER_PAGE, WINDOW, Page, github_links, gitlab_links, read_pages
from bot.forge.reviews import Remark


class Listed:
    """A list as a forge pages it, 100 a page; ``fetched`` records the pages asked, ``stale`` makes the
    headers say no next page (what a 304 with kept headers may say after a page was added)."""

    def __init__(self, n: int) -> None:
        self.items = list(range(n))
        self.fetched: list[int] = []
        self.stale = False

    def add(self, n: int) -> None:
        self.items += range(len(self.items), len(self.items) + n)

    async def fetch(self, number: int) -> Page:
        self.fetched.append(number)
        pages = max(1, -(-len(self.items) // PER_PAGE))
        chunk = self.items[(number - 1) * PER_PAGE: number * PER_PAGE]
        more = number < pages and not self.stale
        return Page(chunk, more, pages if more else None)

    async def read(self, start: int) -> tuple[list[int], int]:
        self.fetched = []
        return await read_pages(self.fetch, start=start)


@pytest.mark.parametrize("n, start, pages, resume", [
    (0, 1, [1], 1),
    (50, 1, [1], 1),
    (100, 1, [1, 2], 1),  # a full page: the next one is looked at (empty), the next read starts at the full one
    (250, 1, [1, 2, 3], 3),
    (250, 3, [3, 2, 1], 3),  # from where the last read stopped, then the newest pages back
    (650, 7, [7, 6, 5, 4, 3], 7),  # the window: the newest WINDOW pages, not the older ones
    (2000, 1, [1, 2, 3, 4, 5, 20, 19, 18, 17, 16], 6),  # a flood: catch up 5 pages, and the newest 5
    (2000, 6, [6, 7, 8, 9, 10, 20, 19, 18, 17, 16], 11),
    (2000, 16, [16, 17, 18, 19, 20], 20),
    (2000, 20, [20, 21, 19, 18, 17], 20),
    (250, 9, [9, 1, 2, 3], 3),  # fewer pages than where it stopped (remarks deleted): from the top again
])
async def test_the_pages_one_read_takes(n, start, pages, resume):
    listed = Listed(n)
    items, after = await listed.read(start)
    assert listed.fetched == pages and after == resume
    assert items == sorted({i for p in pages for i in range((p - 1) * PER_PAGE, min(p * PER_PAGE, n))})
    assert len(listed.fetched) <= CATCH_UP + WINDOW


async def test_a_full_page_is_followed_even_when_its_kept_headers_say_it_is_the_last():
    listed = Listed(100)
    assert (await listed.read(1))[1] == 1
    listed.add(30)
    listed.stale = True  # page 1's 304 repeats the headers of its 200, from before page 2 existed
    items, after = await listed.read(1)
    assert listed.fetched == [1, 2] and items == list(range(130)) and after == 2


@pytest.mark.parametrize("before, noise_before, noise_after", [(0, 100, 0), (150, 1000, 1000), (40, 4321, 777),
                                                             (0, 0, 5000)])
async def test_no_flood_pushes_a_remark_out_of_sight(before, noise_before, noise_after):
    """Whatever a stranger adds before and after it, a remark comes back within the reads that catch up,
    each read bounded."""
    listed = Listed(before)
    _, start = await listed.read(1)
    listed.add(noise_before)
    wanted = len(listed.items)
    listed.add(1 + noise_after)
    reads, found = 0, False
    while not found:
        items, start = await listed.read(start)
        reads, found = reads + 1, wanted in items
        assert len(listed.fetched) <= CATCH_UP + WINDOW
        assert reads <= len(listed.items) // (PER_PAGE * CATCH_UP) + 2
    # and the newest remarks come with every read, flood or not
    assert len(listed.items) - 1 in items


def test_the_forges_pagination_headers():
    base = "https://api.github.com/repositories/1/issues/1/comments?per_page=100&page="
    link = f'<{base}2>; rel="next", <{base}7>; rel="last"'
    assert github_links({"Link": link}) == (True, 7)
    assert github_links({"Link": f'<{base}1>; rel="first", <{base}6>; rel="prev"'}) == (False, None)
    assert github_links({}) == (False, None)
    assert gitlab_links({"x-next-page": "3", "x-total-pages": "9"}) == (True, 9)
    assert gitlab_links({"x-next-page": "", "x-total-pages": "9"}) == (False, 9)
    assert gitlab_links({"x-next-page": "2"}) == (True, None)  # over 10,000 items GitLab leaves the total out


# --- markers -------------------------------------------------------------------------------------

def remark(author: str, body: str) -> Remark:
    return Remark(id="comment:1", kind="comment", author=author, author_id=author, body=body, url="u")


def test_a_marker_is_keyed_and_cannot_be_written_in_advance():
    bot, other = Markers("ghp_token-one"), Markers("ghp_token-two")
    note = bot.make("replied:1-1")
    assert note.startswith(f"{MARKER}replied:1-1:") and note.endswith(" -->")
    assert note == Markers("ghp_token-one").make("replied:1-1")  # the same on every replica, after a restart
    assert note != other.make("replied:1-1") and note != bot.make("replied:1-2")
    assert "ghp_token-one" not in note
    assert bot.signed(f"Done.\n\n{note}") and not other.signed(note)
    for forged in ("<!-- flower:replied:1-1 -->", "<!-- flower:replied:1-1:0000000000000000 -->",
                   note.replace("replied:1-1", "replied:1-2"), note[:-5] + "0 -->", "plain words"):
        assert not bot.signed(forged), forged


@pytest.mark.parametrize("me, author, signed, mine", [
    ("flower-bot", "flower-bot", False, True),
    ("flower-bot", "Flower-Bot", True, True),
    ("flower-bot", "mallory", True, False),  # a stranger's copy of a real marker is still the stranger's
    ("flower-bot", "mallory", False, False),
    ("", "flower[bot]", True, True),  # the forge will not name the token's user: a marker that verifies
    ("", "mallory", False, False),
])
def test_own_is_the_login_else_a_verified_marker(me, author, signed, mine):
    markers = Markers("ghp_token-one")
    body = "Addressed.\n\n" + (markers.make("reply:line:7") if signed else "<!-- flower:reply:line:7 -->")
    assert own(remark(author, body), me=me, markers=markers) is mine

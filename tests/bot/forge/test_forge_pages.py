"""bot.forge.pages and bot.forge.markers on their own: which pages one read of a list takes (so a flood
never hides a later remark and a read stays bounded), the forges' pagination headers, and the keyed
markers that only the bot's own comments carry."""

from __future__ import annotations

import json

import pytest

from bot.forge.markers import MARKER, Markers, own
from bot.forge.pages import CATCH_UP, MOST, PER_PAGE, SWEEP, WINDOW, Page, Where, github_links, gitlab_links, read_pages
from bot.forge.reviews import Remark


class Listed:
    """A list as a forge pages it, 100 a page, each item its own key (they grow, as the forges' ids
    do); ``fetched`` records the pages asked, ``stale`` makes the headers say no next page (what a
    304 with kept headers may say after a page was added), ``where`` is what the next read is given."""

    def __init__(self, n: int) -> None:
        self.items = list(range(n))
        self.made = n
        self.fetched: list[int] = []
        self.stale = False
        self.where = Where()

    def add(self, n: int) -> list[int]:
        made = list(range(self.made, self.made + n))
        self.items += made
        self.made += n
        return made

    def delete(self, gone) -> None:
        self.items = [i for i in self.items if i not in set(gone)]

    async def fetch(self, number: int) -> Page:
        self.fetched.append(number)
        pages = max(1, -(-len(self.items) // PER_PAGE))
        chunk = self.items[(number - 1) * PER_PAGE: number * PER_PAGE]
        more = number < pages and not self.stale
        return Page(chunk, more, pages if more else None, keys=(chunk[0], max(chunk)) if chunk else None)

    async def read(self, start: int | None = None) -> tuple[list[int], int]:
        """One read from ``start`` (with no anchor), else from where the last read stopped."""
        self.fetched = []
        items, self.where = await read_pages(self.fetch, Where(start) if start is not None else self.where)
        return items, self.where.page


@pytest.mark.parametrize("n, start, pages, resume", [
    (0, 1, [1], 1),
    (50, 1, [1], 1),
    (100, 1, [1, 2], 1),  # a full page: the next one is looked at (empty), the next read starts at the full one
    (250, 1, [1, 2, 3], 3),
    (250, 3, [3, 2, 1], 3),  # from where the last read stopped, then the newest pages back
    (650, 7, [7, 6, 5, 4, 3, 1, 2], 7),  # the window: the newest WINDOW pages; then SWEEP pages passed
    (2000, 1, [1, 2, 3, 4, 5, 20, 19, 18, 17, 16], 6),  # a flood: catch up 5 pages, and the newest 5
    (2000, 6, [6, 7, 8, 9, 10, 20, 19, 18, 17, 16, 1, 2], 11),
    (2000, 16, [16, 17, 18, 19, 20, 1, 2], 20),
    (2000, 20, [20, 21, 19, 18, 17, 1, 2], 20),
    (250, 9, [9, 1, 2, 3], 3),  # no anchor (a watch from before) and fewer pages: from the top again
])
async def test_the_pages_one_read_takes(n, start, pages, resume):
    listed = Listed(n)
    items, after = await listed.read(start)
    assert listed.fetched == pages and after == resume
    assert items == sorted({i for p in pages for i in range((p - 1) * PER_PAGE, min(p * PER_PAGE, n))})
    assert len(listed.fetched) <= MOST


@pytest.mark.parametrize("n, reads, pages", [
    (250, 1, [2, 3, 1]),  # caught up: the look at the page before costs nothing the window does not
    (2000, 1, [5, 6, 7, 8, 9, 10, 20, 19, 18, 17, 16, 1, 2]),  # catching up: one page more, the one before
    (2000, 4, [19, 20, 21, 18, 17, 7, 8]),  # the sweep goes on where the last read left it
])
async def test_a_read_looks_at_the_page_before_where_it_starts(n, reads, pages):
    listed = Listed(n)
    for _ in range(reads):
        await listed.read()
    await listed.read()
    assert listed.fetched == pages and len(pages) <= MOST


def test_a_read_takes_at_most_the_look_back_a_catch_up_a_window_and_a_sweep():
    assert MOST == 1 + CATCH_UP + WINDOW + SWEEP


async def test_every_page_passed_is_read_again_in_turn():
    """A page far behind the newest ones (a reply in an old thread, a review drafted before a flood) is
    read again within (pages / SWEEP) reads, and again after that."""
    listed = Listed(3000)
    for _ in range(8):
        await listed.read()
    assert listed.where.page == 30
    swept: list[int] = []
    for _ in range(2 * 30 // SWEEP):
        await listed.read()
        swept += [p for p in listed.fetched if p < 30 - WINDOW]
        assert len(listed.fetched) <= MOST
    assert sorted(set(swept)) == list(range(1, 30 - WINDOW)) and swept.count(3) == 2


async def test_a_full_page_is_followed_even_when_its_kept_headers_say_it_is_the_last():
    listed = Listed(100)
    assert (await listed.read())[1] == 1
    listed.add(30)
    listed.stale = True  # page 1's 304 repeats the headers of its 200, from before page 2 existed
    items, after = await listed.read()
    assert listed.fetched == [1, 2] and items == list(range(130)) and after == 2


@pytest.mark.parametrize("before, noise_before, noise_after", [(0, 100, 0), (150, 1000, 1000), (40, 4321, 777),
                                                             (0, 0, 5000)])
async def test_no_flood_pushes_a_remark_out_of_sight(before, noise_before, noise_after):
    """Whatever a stranger adds before and after it, a remark comes back within the reads that catch up,
    each read bounded."""
    listed = Listed(before)
    await listed.read()
    listed.add(noise_before)
    [wanted] = listed.add(1)
    listed.add(noise_after)
    reads, found = 0, False
    while not found:
        items, _ = await listed.read()
        reads, found = reads + 1, wanted in items
        assert len(listed.fetched) <= MOST
        assert reads <= len(listed.items) // (PER_PAGE * CATCH_UP) + 2
    # and the newest remarks come with every read, flood or not
    assert len(listed.items) - 1 in items


@pytest.mark.parametrize("before, deleted, after", [
    (150, 100, 600),  # the remark moves back onto the page before where the next read starts
    (1050, 150, 600),
    (3050, 1000, 600),  # ten pages back: more than one read looks back
    (3050, 3050, 600),  # every page before it: the list is shorter than where the read stopped
    (3050, 2990, 0),    # ... and the remark is on page 1, the list's only page
    (250, 200, 10_000),
])
async def test_deleting_what_came_before_never_moves_a_remark_behind_the_read(before, deleted, after):
    """Issue 37, again: a stranger deletes comments of theirs from before where the bot's last read stopped,
    so every later one moves back a page per hundred; a remark said just before would move onto a page
    the reads had passed, out of the newest pages once a flood follows it."""
    listed = Listed(0)
    old = listed.add(before)
    while listed.where.page < -(-before // PER_PAGE):  # caught up: the next read starts at the last page
        await listed.read()
    [wanted] = listed.add(1)
    listed.delete(old[:deleted])
    listed.add(after)
    reads, found = 0, False
    while not found:
        items, _ = await listed.read()
        reads, found = reads + 1, wanted in items
        assert len(listed.fetched) <= MOST and reads <= 30
    for _ in range(len(listed.items) // (PER_PAGE * CATCH_UP) + 2):  # and the reads go on to the end
        await listed.read()
    assert listed.where.page == max(1, -(-len(listed.items) // PER_PAGE))


async def test_deleting_at_each_read_delays_the_catch_up_but_never_stalls_it():
    """A stranger who deletes a page of their comments before every read: the reads still reach the end."""
    listed = Listed(0)
    mine = listed.add(1000)
    [wanted] = listed.add(1)
    listed.add(3000)
    reads, found = 0, False
    while not found:
        listed.delete(mine[:100])
        mine = mine[100:]
        items, _ = await listed.read()
        reads, found = reads + 1, found or wanted in items
        assert reads <= 20
    assert wanted in items


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
    if signed:  # with its marker quoted and more said after it, a bot comment is the quoter's remark
        quoted = "".join(f"> {line}\n" for line in body.splitlines()) + "\nNot addressed: the test still fails."
        assert own(remark(author, quoted), me=me, markers=markers) is (bool(me) and mine)


def test_where_a_read_goes_on_is_kept_as_json_and_an_older_watch_s_page_still_reads():
    where = Where(7, 1234, 3)
    assert Where.from_json(json.loads(json.dumps(where.to_json()))) == where
    assert Where.from_json(5) == Where(5) and Where.from_json([4]) == Where(4) and Where.from_json([0, None]) == Where(1)

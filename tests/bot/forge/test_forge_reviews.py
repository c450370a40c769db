"""bot.forge reading a pull request back from the fake forge: remarks of every kind, checks, who may
steer, replies in a thread, the token's own user, and conditional requests (ETag / If-None-Match).
Real aiohttp on both sides, real git for branches."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import pytest_asyncio

from bot.errors import ForgeError
from bot.forge import costs
from bot.forge.client import Retry, forge_for
from bot.forge.pages import KEEP_CHARS, MOST, SWEEP
from bot.forge.remote import ForgeSettings, recognise
from bot.forge.reviews import Check, Conditional, Remark, log_tail, one_line
from bot.testing.fake_forge import FakeForge

FAST = Retry(tries=3, first_delay_s=0.01)
PATHS = {"github": "acme/app", "gitlab": "acme/sub/app"}
REMOTES = {"github": "git@github.com:acme/app.git", "gitlab": "https://gitlab.com/acme/sub/app.git"}
KINDS = pytest.mark.parametrize("kind", ["github", "gitlab"])
HEAD = "flower/t1"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
LOG = "\n".join(f"step {i}" for i in range(30))  # a job's log: the last 20 lines are its tail
TAIL = "\n".join(f"step {i}" for i in range(10, 30))


def _git(bare: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(bare), *args], check=True, capture_output=True,
                          text=True, timeout=60).stdout.strip()


def make_bare(bare: Path) -> None:
    """``bare`` with ``main`` and ``HEAD``, a commit on top of it: real git."""
    bare.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True, timeout=60)
    main = _git(bare, "commit-tree", EMPTY_TREE, "-m", "init")
    _git(bare, "update-ref", "refs/heads/main", main)
    _git(bare, "update-ref", f"refs/heads/{HEAD}", _git(bare, "commit-tree", EMPTY_TREE, "-p", main, "-m", HEAD))


def push_again(bare: Path) -> str:
    """One more commit on ``HEAD``, as a follow-up's push leaves it; the new head."""
    commit = _git(bare, "commit-tree", EMPTY_TREE, "-p", f"refs/heads/{HEAD}", "-m", "again")
    _git(bare, "update-ref", f"refs/heads/{HEAD}", commit)
    return commit


@pytest_asyncio.fixture
async def opened(tmp_path, git_identity):
    """``await opened(kind)`` -> (fake, client, number): pull request ``number`` from ``HEAD`` into main,
    opened through the client; all closed at teardown."""
    made: list = []

    async def make(kind):
        fake = await FakeForge(kind, bare_dir=tmp_path / "bare").start()
        made.append(fake)
        make_bare(tmp_path / "bare" / f"{PATHS[kind]}.git")
        fake.add_repo(PATHS[kind])
        settings = ForgeSettings(github_api_url=fake.url) if kind == "github" else ForgeSettings(gitlab_url=fake.url)
        client = forge_for(recognise(REMOTES[kind], settings), fake.token, retry=FAST)
        made.append(client)
        pull = await client.create(head=HEAD, base="main", title="Add login", body="", draft=False)
        return fake, client, pull.number

    yield make
    for thing in reversed(made):
        await thing.close()


def _seen(remarks: list[Remark]) -> list[tuple]:
    return [(r.kind, r.author, r.body, r.where(), r.verdict) for r in remarks]


# --- remarks -----------------------------------------------------------------------------------------

@KINDS
async def test_remarks_of_every_kind_oldest_first(opened, kind):
    fake, client, number = await opened(kind)
    fake.conversation_comment(number, "erin", "Can it log in with SSO?")
    first = fake.review_comment(number, "alice", "Rename this", path="app/login.py", line=12)
    fake.review(number, "carol", "CHANGES_REQUESTED", "Needs tests")
    fake.review_comment(number, "bob", "Agreed", path="app/login.py", line=12, reply_to=first)
    fake.review(number, "dave", "APPROVED")
    await client.comment(number, f"Pushed again.\n{client.markers.make('update:1')}")
    remarks = await client.remarks(number)
    line = ("line", "alice", "Rename this", "app/login.py:12", "")
    reply = ("line", "bob", "Agreed", "app/login.py:12", "")
    bot = ("comment", "flower-bot", f"Pushed again.\n{client.markers.make('update:1')}", "", "")
    if kind == "github":
        assert _seen(remarks) == [("comment", "erin", "Can it log in with SSO?", "", ""), line,
                                  ("review", "carol", "Needs tests", "", "changes_requested"), reply,
                                  ("review", "dave", "", "", "approved"), bot]
        assert [r.id for r in remarks[1:2]] == [f"line:{first}"] and remarks[1].author_id == "alice"
        assert remarks[1].url == f"https://github.com/acme/app/pull/{number}#discussion_r{first}"
        assert remarks[1].thread == remarks[3].thread == str(first) == fake.discussion_of(first)
    else:
        assert _seen(remarks) == [("comment", "erin", "Can it log in with SSO?", "", ""), line,
                                  ("review", "carol", "requested changes", "", "changes_requested"),
                                  ("comment", "carol", "Needs tests", "", ""), reply,
                                  ("review", "dave", "approved this merge request", "", "approved"), bot]
        assert remarks[1].id == f"note:{first}" and remarks[1].author_id == str(fake.user_id("alice"))
        assert remarks[1].url == f"{fake.url}/acme/sub/app/-/merge_requests/{number}#note_{first}"
        assert remarks[1].thread == remarks[4].thread == fake.discussion_of(first) != remarks[0].thread
    assert len({r.id for r in remarks}) == len(remarks)
    assert [r.thread for r in remarks if r.kind == "review"] == ["", ""]


async def test_github_skips_reviews_without_a_verdict_or_words(opened):
    fake, client, number = await opened("github")
    fake.review(number, "carol", "COMMENTED")  # its line comments say it all
    fake.review(number, "dave", "COMMENTED", "A few nits")
    assert _seen(await client.remarks(number)) == [("review", "dave", "A few nits", "", "commented")]
    user, day = {"login": "erin"}, "2024-01-01T00:00:00Z"
    fake.fail("GET", r".*/pulls/1/reviews", 200, body=[
        {"id": 7, "user": user, "body": "draft", "state": "PENDING", "html_url": "u"},
        {"id": 8, "user": user, "body": "old", "state": "DISMISSED", "html_url": "u", "submitted_at": day},
        {"id": 9, "user": None, "body": "", "state": "APPROVED", "html_url": "u", "submitted_at": day}])
    fake.fail("GET", r".*/pulls/1/comments", 200, body=[  # outdated: no line now, only the one it was on
        {"id": 5, "user": user, "body": "outdated", "path": "a.py", "line": None, "original_line": 3,
         "html_url": "u", "created_at": "2024-01-02T00:00:00+00:00"}])
    remarks = await client.remarks(number)
    assert [(r.id, r.author, r.where(), r.verdict) for r in remarks] == [
        ("review:9", "ghost", "", "approved"), ("line:5", "erin", "a.py:3", "")]


async def test_gitlab_reads_approvals_and_lines_and_skips_other_system_notes(opened):
    fake, client, number = await opened("gitlab")
    author = {"id": 7, "username": "alice"}
    notes = [
        {"id": 1, "system": True, "body": "added 2 commits", "author": author, "created_at": "2024-01-01T00:00:01Z"},
        {"id": 2, "system": True, "body": "approved this merge request", "author": author,
         "created_at": "2024-01-01T00:00:02.000Z"},
        {"id": 3, "system": False, "body": "Why drop this?", "author": author, "created_at": "2024-01-01T00:00:03Z",
         "position": {"new_path": None, "old_path": "old.py", "new_line": None, "old_line": 4}}]
    fake.fail("GET", r".*/merge_requests/1/discussions", 200,
              body=[{"id": f"d{n['id']}", "individual_note": True, "notes": [n]} for n in reversed(notes)])
    remarks = await client.remarks(number)
    assert [(r.id, r.kind, r.author_id, r.where(), r.verdict, r.thread) for r in remarks] == [
        ("note:2", "review", "7", "", "approved", ""), ("note:3", "line", "7", "old.py:4", "", "d3")]


# --- conditional requests ----------------------------------------------------------------------------

@KINDS
async def test_a_second_read_with_the_same_conditional_is_a_304(opened, kind):
    fake, client, number = await opened(kind)
    fake.review_comment(number, "alice", "Rename this", path="app.py", line=3)
    sha = fake.head(number)
    fake.check(sha, "tests", "success")
    cache = Conditional()
    pull = await client.get(number, cache)
    remarks = await client.remarks(number, cache)
    checks = await client.checks(number, sha, cache)
    assert cache.changed and pull.sha == sha and len(remarks) == 1 and checks[0].state == "passed"
    cache.reset()
    start = len(fake.requests)
    assert await client.get(number, cache) == pull
    assert await client.remarks(number, cache) == remarks
    assert await client.checks(number, sha, cache) == checks
    again = fake.requests[start:]
    assert len(again) == (6 if kind == "github" else 3)  # GitHub: 3 lists of remarks, check runs and statuses
    assert all(r.headers.get("If-None-Match", "").startswith('"') and r.status == 304 for r in again)
    assert not cache.changed
    fake.conversation_comment(number, "erin", "And the docs?")
    newer = await client.remarks(number, cache)
    assert cache.changed and [r.body for r in newer] == ["Rename this", "And the docs?"]


def _conversation(kind: str, number: int) -> str:
    """The end of the path of the list that holds the conversation's comments."""
    return f"/issues/{number}/comments" if kind == "github" else f"/merge_requests/{number}/discussions"


def _pages_of(fake, start: int, ending: str) -> list[tuple[int, bool]]:
    """(page, conditional) of every request for the list at ``ending`` since request ``start``."""
    return [(int(r.query["page"]), bool(r.headers.get("If-None-Match")))
            for r in fake.requests[start:] if r.path.endswith(ending)]


@KINDS
async def test_a_remark_after_a_hundred_others_is_read_and_reads_stay_conditional(opened, kind):
    fake, client, number = await opened(kind)
    fake.set_access("octocat", "write")
    for i in range(130):
        fake.conversation_comment(number, "mallory", f"noise {i}")
    fake.conversation_comment(number, "octocat", "Blocking: the migration drops the users table")
    cache = Conditional()
    start = len(fake.requests)
    remarks = await client.remarks(number, cache)
    assert remarks[-1].body == "Blocking: the migration drops the users table" and len(remarks) == 131
    assert _pages_of(fake, start, _conversation(kind, number)) == [(1, False), (2, False)]
    assert all(r.query.get("per_page") == "100" for r in fake.requests[start:])
    cache.reset()
    start = len(fake.requests)
    assert await client.remarks(number, cache) == remarks and not cache.changed  # every page a 304
    assert fake.requests[start:] and all(r.status == 304 for r in fake.requests[start:])
    assert _pages_of(fake, start, _conversation(kind, number)) == [(1, True), (2, True)]  # the look back, then on
    fake.conversation_comment(number, "octocat", "And the rollback?")
    assert (await client.remarks(number, cache))[-1].body == "And the rollback?" and cache.changed


@KINDS
async def test_a_flood_after_a_remark_delays_it_but_never_hides_it(opened, kind):
    fake, client, number = await opened(kind)
    cache = Conditional()
    for i in range(150):
        fake.conversation_comment(number, "mallory", f"before {i}")
    await client.remarks(number, cache)  # the bot has read up to here
    for i in range(700):
        fake.conversation_comment(number, "mallory", f"flood {i}")
    fake.conversation_comment(number, "octocat", "Blocking: the migration drops the users table")
    for i in range(1300):
        fake.conversation_comment(number, "mallory", f"flood after {i}")
    found, reads = False, 0
    while not found:
        start = len(fake.requests)
        bodies = [r.body for r in await client.remarks(number, cache)]
        reads, found = reads + 1, "Blocking: the migration drops the users table" in bodies
        assert "flood after 1299" in bodies  # the newest come with every read
        assert len(_pages_of(fake, start, _conversation(kind, number))) <= MOST
        assert reads <= 4
    assert reads >= 2  # more pages came after where the bot had read to than one read takes


@KINDS
async def test_a_stranger_deleting_old_comments_never_moves_a_remark_behind_the_read(opened, kind):
    """Deleting comments before where the last read stopped moves every later one back a page: a remark
    said just before was on the page the next read starts at, and would be on one it had passed (a
    flood after it keeps it out of the newest pages)."""
    fake, client, number = await opened(kind)
    fake.set_access("octocat", "write")
    cache = Conditional()
    old = [fake.conversation_comment(number, "mallory", f"old {i}") for i in range(150)]
    for _ in range(2):  # caught up: the next read starts at the last page
        await client.remarks(number, cache)
    fake.conversation_comment(number, "octocat", "Blocking: the migration drops the users table")
    fake.delete(number, *old[:100])
    for i in range(600):
        fake.conversation_comment(number, "mallory", f"flood {i}")
    reads = []
    for _ in range(4):
        reads.append([r.body for r in await client.remarks(number, cache)])
        if "Blocking: the migration drops the users table" in reads[-1]:
            break
    assert "Blocking: the migration drops the users table" in reads[-1]
    assert "flood 599" in reads[0]  # and the newest came with the first read


@KINDS
async def test_a_reply_in_an_old_thread_is_read_however_many_threads_follow_it(opened, kind):
    """A maintainer answers in a review thread opened before a stranger's flood: GitLab lists a reply with
    its thread (by the thread's first note), on a page the reads had passed and, after 600 more threads,
    out of the newest pages."""
    fake, client, number = await opened(kind)
    cache = Conditional()
    opened_line = fake.review_comment(number, "octocat", "Why a global here?", path="app.py", line=3)
    for i in range(600):
        fake.conversation_comment(number, "mallory", f"flood {i}")
    for _ in range(4):  # caught up
        await client.remarks(number, cache)
    fake.review_comment(number, "octocat", "Still a global: blocking", path="app.py", line=3, reply_to=opened_line)
    found = False
    for _ in range(7 // SWEEP + 2):  # 7 pages: each passed one is read again within 7 / SWEEP reads
        found = found or "Still a global: blocking" in [r.body for r in await client.remarks(number, cache)]
    assert found


@KINDS
async def test_a_strangers_long_comments_are_kept_clipped(opened, kind):
    """Every page read is kept for its 304s while the pull request is watched: a stranger's 65,536-character
    comments, thousands of them, would hold hundreds of MB per pull request."""
    fake, client, number = await opened(kind)
    for i in range(150):
        fake.conversation_comment(number, "mallory", f"{i} " + "x" * 65_000)
    cache = Conditional()
    first = await client.remarks(number, cache)
    assert len(first) == 150 and all(len(r.body) == KEEP_CHARS for r in first)
    cache.reset()
    assert await client.remarks(number, cache) == first and not cache.changed  # the 304s give the same

    def longest(data) -> int:
        if isinstance(data, dict):
            return max(map(longest, data.values()), default=0)
        if isinstance(data, list):
            return max(map(longest, data), default=0)
        return len(data) if isinstance(data, str) else 0
    assert longest([body for _, body, _ in cache.answers.values()]) == KEEP_CHARS


async def test_an_answer_too_large_is_refused_and_a_logs_tail_kept(opened, monkeypatch):
    """A stranger's thread of notes of a million characters each makes one page gigabytes (GitLab lists a
    thread with all its notes): no answer is read past MAX_REPLY_BYTES; a job's log keeps its end."""
    fake, client, number = await opened("gitlab")
    monkeypatch.setattr(costs, "MAX_REPLY_BYTES", 200_000)
    opened_line = fake.review_comment(number, "mallory", "a thread", path="app.py", line=1)
    sha = fake.head(number)
    fake.check(sha, "tests", "failure", text="x" * 300_000 + "\n" + LOG)
    [failed] = await client.checks(number, sha)
    assert failed.log_tail == TAIL
    for i in range(30):
        fake.review_comment(number, "mallory", "y" * 10_000, path="app.py", line=1, reply_to=opened_line)
    with pytest.raises(ForgeError) as caught:
        await client.remarks(number, Conditional())
    assert caught.value.kind == "refused" and "more than 0.191 MB" in str(caught.value)


async def test_an_answer_without_an_etag_is_new_and_not_kept(opened):
    fake, client, number = await opened("github")
    cache = Conditional()
    await client.get(number, cache)
    cache.reset()
    plain = {"number": number, "html_url": "u", "state": "open", "head": {"ref": HEAD}, "base": {"ref": "main"}}
    fake.fail("GET", rf".*/pulls/{number}", 200, body=plain)
    assert (await client.get(number, cache)).url == "u" and cache.changed
    await client.get(number, cache)
    assert "If-None-Match" not in fake.requests[-1].headers
    assert client.repo.api_url + f"/repos/acme/app/pulls/{number}" in cache.answers  # the last 200 had an ETag


# --- checks ------------------------------------------------------------------------------------------

async def test_github_checks_are_check_runs_then_statuses(opened):
    fake, client, number = await opened("github")
    sha = fake.head(number)
    assert await client.checks(number, sha) == []
    fake.check(sha, "lint", "success", summary="All good")
    fake.check(sha, "tests", "failure", summary="2 failed\nin test_login.py", text=LOG)
    fake.check(sha, "build", None)
    fake.check(sha, "docs", "neutral")
    fake.check(sha, "slow", "timed_out")
    fake.check("0" * 40, "other commit", "failure")
    fake.commit_status(sha, "ci/jenkins", "error", description="Build broke", target_url="https://ci.example/1")
    fake.commit_status(sha, "deploy", "pending")
    fake.commit_status(sha, "coverage", "success", description="92%")
    checks = await client.checks(number, sha)
    assert [(c.name, c.state, c.summary, c.log_tail) for c in checks] == [
        ("lint", "passed", "All good", ""), ("tests", "failed", "2 failed", TAIL), ("build", "pending", "", ""),
        ("docs", "passed", "", ""), ("slow", "failed", "", ""), ("ci/jenkins", "failed", "Build broke", ""),
        ("deploy", "pending", "", ""), ("coverage", "passed", "92%", "")]
    assert checks[0].url.startswith("https://github.com/acme/app/runs/") and checks[5].url == "https://ci.example/1"
    assert fake.requests[-2].query == {"per_page": "100"}


async def test_gitlab_checks_are_the_pipeline_of_the_head(opened, tmp_path):
    fake, client, number = await opened("gitlab")
    sha = fake.head(number)
    assert await client.checks(number, sha) == []
    fake.check(sha, "lint", "success")
    fake.check(sha, "tests", None)
    [pending] = await client.checks(number, sha)
    assert (pending.name, pending.state) == ("pipeline", "pending")
    assert pending.url.startswith("https://gitlab.com/acme/sub/app/-/pipelines/")
    fake.check(sha, "tests", "success")
    assert await client.checks(number, sha) == [Check("pipeline", "passed", url=pending.url)]
    newer = push_again(tmp_path / "bare" / "acme/sub/app.git")
    assert await client.checks(number, newer) == []  # the old commit's pipeline is not the new head's
    fake.check(newer, "lint", "success")
    fake.check(newer, "tests", "failure", text=LOG)
    [failed] = await client.checks(number, newer)
    assert (failed.name, failed.state, failed.summary, failed.log_tail) == (
        "tests", "failed", "failed in stage test", TAIL)
    assert failed.url.startswith("https://gitlab.com/acme/sub/app/-/jobs/")
    jobs = next(r for r in fake.requests if r.path.endswith("/jobs"))
    assert jobs.query == {"scope[]": "failed"}
    assert fake.requests[-1].path.endswith("/trace")


@pytest.mark.parametrize("status, expected", [
    ("canceled", [Check("pipeline", "failed", summary="canceled", url="p")]),
    ("skipped", [Check("pipeline", "passed", url="p")]),
    ("manual", [Check("pipeline", "passed", url="p")]),
    ("created", [Check("pipeline", "pending", url="p")]),
    ("failed", [Check("pipeline", "failed", url="p")]),  # before any job ran: no job to name
])
async def test_gitlab_pipeline_states(opened, status, expected):
    fake, client, number = await opened("gitlab")
    fake.fail("GET", r".*/merge_requests/1/pipelines", 200, body=[
        {"id": 9, "sha": "new", "status": status, "web_url": "p"}, {"id": 8, "sha": "old", "status": "success"}])
    fake.fail("GET", r".*/pipelines/9/jobs", 200, body=[])
    assert await client.checks(number, "new") == expected


def test_summaries_are_one_line_and_tails_are_short():
    assert one_line("\n  first line  \nsecond") == "first line" and len(one_line("x" * 500)) == 300
    assert one_line(None) == "" and log_tail(None) == ""
    long = "\n".join("y" * 150 for _ in range(30))
    assert len(log_tail(long)) == 2000 and log_tail(long).endswith("y")


# --- who may steer, replies, the token's user --------------------------------------------------------

@KINDS
async def test_may_steer_is_write_access(opened, kind):
    fake, client, number = await opened(kind)
    fake.set_access("alice", "write")
    fake.set_access("bob", "read")
    fake.set_access("carol", "none")
    for who in ("alice", "bob", "carol", "dave"):
        fake.conversation_comment(number, who, f"from {who}")
    remarks = await client.remarks(number)
    assert [(r.author, await client.may_steer(r)) for r in remarks] == [
        ("alice", True), ("bob", False), ("carol", False), ("dave", False)]
    expected = ("/repos/acme/app/collaborators/dave/permission" if kind == "github"
                else f"/api/v4/projects/acme/sub/app/members/all/{fake.user_id('dave')}")
    assert fake.requests[-1].path == expected
    fake.fail("GET", r".*/(permission|members/all/.*)", 403)
    with pytest.raises(ForgeError) as caught:
        await client.may_steer(remarks[0])
    assert caught.value.kind == "forbidden" and "'alice'" in str(caught.value)


@KINDS
async def test_a_reply_goes_into_the_thread_else_the_conversation(opened, kind):
    fake, client, number = await opened(kind)
    first = fake.review_comment(number, "alice", "Rename this", path="app.py", line=3)
    fake.review_comment(number, "bob", "And that", path="app.py", line=3, reply_to=first)
    fake.review(number, "carol", "CHANGES_REQUESTED", "Needs tests")
    fake.conversation_comment(number, "erin", "SSO?")
    remarks = await client.remarks(number)
    by = {r.author: r for r in remarks if r.kind != "review"}
    await client.reply(number, by["bob"], "Renamed both.")
    thread = by["alice"].thread
    assert fake.replies(number) == [(fake.discussion_of(first), "Renamed both.")] and thread == by["bob"].thread
    review = next(r for r in remarks if r.kind == "review")
    await client.reply(number, review, "Tests added.")
    await client.reply(number, by["erin"], "Yes, SSO works.")
    assert len(fake.replies(number)) == 1
    assert fake.comments(number)[-2:] == ["Tests added.", "Yes, SSO works."]
    mine = [r for r in await client.remarks(number) if r.author == "flower-bot"]
    assert [(r.kind, r.body, r.thread == thread) for r in mine] == [
        ("line", "Renamed both.", True), ("comment", "Tests added.", False), ("comment", "Yes, SSO works.", False)]


@KINDS
async def test_me_is_the_tokens_user_or_nothing(opened, kind):
    fake, client, _ = await opened(kind)
    assert await client.me() == "flower-bot"
    fake.fail("GET", r"(/api/v4)?/user", 403, body={"message": "Resource not accessible by integration"})
    assert await client.me() == ""
    fake.fail("GET", r"(/api/v4)?/user", 401)
    with pytest.raises(ForgeError) as caught:
        await client.me()
    assert caught.value.kind == "auth"


@KINDS
@pytest.mark.parametrize("status", [400, 401, 403, 404, 500])
async def test_the_token_is_never_in_an_error(opened, kind, status):
    fake, client, number = await opened(kind)
    echo = {"message": f"token {fake.token} is bad", "error": fake.token}
    fake.fail("GET", ".*", status, times=100, body=echo)
    fake.fail("POST", ".*", status, times=100, body=echo)
    remark = Remark(id="line:1", kind="line", author="alice", author_id="7", body="", url="", thread="1")
    caught: list[ForgeError] = []
    for call in (client.remarks(number, Conditional()), client.checks(number, "abc", Conditional()),
                 client.may_steer(remark), client.me(), client.reply(number, remark, "x"),
                 client.get(number, Conditional())):
        try:
            await call
        except ForgeError as exc:
            caught.append(exc)
    assert len(caught) >= 4 and all(fake.token not in str(e) for e in caught)
    assert all("***" in str(e) or e.kind in ("auth", "not_found") for e in caught)


@KINDS
async def test_the_token_is_never_in_a_message_about_unreadable_json(opened, kind):
    fake, client, number = await opened(kind)
    bad = {"number": fake.token, "iid": fake.token, "id": fake.token, "notes": [{"id": fake.token}], "sha": "abc"}
    fake.fail("GET", ".*", 200, times=100, body=[bad])
    caught: list[ForgeError] = []
    for call in (client.remarks(number), client.checks(number, "abc"), client.get(number)):
        with pytest.raises(ForgeError) as one:
            await call
        caught.append(one.value)
    assert {e.kind for e in caught} == {"refused"} and all(fake.token not in str(e) for e in caught)
    assert any("***" in str(e) for e in caught)

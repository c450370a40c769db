"""A stranger on a public pull request cannot hide the maintainers' review from the bot nor silence
its replies (issue 37, findings 3 and 4), end to end: the real bolt app against the fake Slack, the
real CLI against the offline model, and the fake GitHub / GitLab paging its lists as the forges do.
"""

from __future__ import annotations

import asyncio

import pytest

from bot.forge.markers import Markers
from bot.runs.pr_state import KEEP_SEEN, Watch
from tests.bot.helpers.app import marked_done
from tests.bot.helpers.forge_threads import TOKEN, posted
from tests.bot.helpers.pr_loop import INJECTION, opened_pr, policy, posts, shown_to_models, until, watch_of

pytestmark = pytest.mark.usefixtures("git_identity")  # tests/bot/conftest.py

BLOCKING = "Blocking: the migration drops the users table"


@pytest.mark.parametrize("kind", ["github", "gitlab"])
async def test_a_hundred_outsider_comments_do_not_hide_a_maintainers_remark(
        make_bot, slack_env, fake_model, tmp_path, kind):
    slack = slack_env
    forge, bot, key = await opened_pr(make_bot, slack, fake_model, tmp_path, kind)
    try:
        forge.set_access("octocat", "write")
        for i in range(100):
            forge.conversation_comment(1, "mallory", f"{INJECTION} ({i})")
        mark = slack.mark()
        forge.conversation_comment(1, "octocat", BLOCKING)
        said = await posted(slack, key.thread_ts, "New on", after=mark)
        assert BLOCKING in said.body["text"] and INJECTION not in said.body["text"]
        assert len(posts(slack, "was not passed on")) == 1 and INJECTION not in shown_to_models(fake_model)

        # nothing new since: every page is asked conditionally, answered 304, and the reads back off
        watch = await watch_of(bot, key)
        async with asyncio.timeout(240):
            while watch.interval < 0.3 * 8:
                await asyncio.sleep(0.2)
                watch = await watch_of(bot, key)
        conversation = "/issues/1/comments" if kind == "github" else "/merge_requests/1/discussions"
        settled = len(forge.requests)
        await until("two more reads of both pages", lambda: len(
            {r.query["page"] for r in forge.requests[settled:] if r.path.endswith(conversation)}) == 2
            and len([r for r in forge.requests[settled:] if r.path.endswith(conversation)]) >= 4)
        again = [r for r in forge.requests[settled:] if r.path.endswith(conversation)]
        assert all(r.headers.get("If-None-Match") and r.status == 304 for r in again)
        assert len(posts(slack, "New on")) == 1
    finally:
        await forge.close()


async def test_an_outsiders_markers_do_not_stop_the_bots_replies(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    forge, bot, key = await opened_pr(make_bot, slack, fake_model, tmp_path, "github",
                                      **policy(tmp_path, pr_followup="auto"))
    try:
        forge.set_access("octocat", "write")
        forge.set_access("mallory", "read")

        async def round_of(n: int) -> None:
            """octocat remarks on a line and in the conversation; the follow-up's push brings the replies."""
            replies, summaries = len(forge.replies(1)), len(worked_on())
            mark = slack.mark()
            forge.review_comment(1, "octocat", f"Round {n}: rename the counter", path="round.txt", line=1)
            forge.conversation_comment(1, "octocat", f"Round {n}: and say why in the commit")
            await posted(slack, key.thread_ts, "New on", after=mark)
            await posted(slack, key.thread_ts, "new commit(s)", after=mark)
            await until(f"round {n}'s reply", lambda: len(forge.replies(1)) == replies + 1)
            await until(f"round {n}'s summary", lambda: len(worked_on()) == summaries + 1)
            await marked_done(bot, key)

        def worked_on() -> list[str]:
            """The summary comments the bot posted (a stranger's copy of one is not among them)."""
            return [r.json["body"] for r in forge.requests if r.method == "POST"
                    and r.path.endswith("/issues/1/comments") and r.json["body"].startswith("Worked on the review")]

        await round_of(1)
        [(_, reply)] = forge.replies(1)
        # mallory copies the bot's own comments (markers that verify), and writes the markers its next round
        # would end with: the old predictable ones, and the keyed ones (a stranger cannot make those; the
        # test can, to show that even the exact string stops nothing when a stranger writes it)
        keyed = Markers(TOKEN)
        ids = range(1001, 1301)  # the fake's ids count up from 1001: the next line remark's is among them
        guessed = "\n".join([f"<!-- flower:replied:1-{n} -->" for n in range(1, 5)]
                            + [keyed.make(f"replied:1-{n}") for n in range(1, 5)]
                            + [f"<!-- flower:reply:line:{i} -->" for i in ids]
                            + [keyed.make(f"reply:line:{i}") for i in ids])
        mark = slack.mark()
        forge.conversation_comment(1, "mallory", reply)
        forge.conversation_comment(1, "mallory", worked_on()[0])
        forge.conversation_comment(1, "mallory", f"{INJECTION}\n\n{guessed}")
        ignored = await posted(slack, key.thread_ts, "was not passed on", after=mark)
        assert "mallory" in ignored.body["text"]  # a stranger's, like any other, though it holds markers

        await round_of(2)  # replied to again: the stranger's markers are not the bot's
        assert len(forge.replies(1)) == 2 and len(worked_on()) == 2
        assert len(posts(slack, "was not passed on")) == 1
        assert INJECTION not in shown_to_models(fake_model)
    finally:
        await forge.close()


async def test_a_thread_of_thousands_of_replies_does_not_make_a_remark_said_twice(
        make_bot, slack_env, fake_model, tmp_path):
    """GitLab lists a discussion with all its notes: a stranger's thread of thousands of replies makes every read
    return more remarks than the watch keeps ids of (KEEP_SEEN), and must not push out those already passed on (each
    read would post them again, and under "auto" start a follow-up each time)."""
    slack = slack_env
    forge, bot, key = await opened_pr(make_bot, slack, fake_model, tmp_path, "gitlab")
    try:
        forge.set_access("octocat", "write")
        mark = slack.mark()
        forge.conversation_comment(1, "octocat", BLOCKING)
        said = await posted(slack, key.thread_ts, "New on", after=mark)
        assert BLOCKING in said.body["text"]
        opened = forge.review_comment(1, "mallory", "a thread", path="app.py", line=1)
        for i in range(KEEP_SEEN + 200):
            forge.review_comment(1, "mallory", f"{INJECTION} ({i})", path="app.py", line=1, reply_to=opened)
        await until("the stranger's thread said ignored", lambda: posts(slack, "was not passed on"))
        mark = slack.mark()
        forge.conversation_comment(1, "octocat", "And the rollback?")  # a later remark still comes, once quiet
        said = await posted(slack, key.thread_ts, "New on", after=mark)
        assert "And the rollback?" in said.body["text"] and BLOCKING not in said.body["text"]
        settled = len(forge.requests)
        await until("three more reads", lambda: len([r for r in forge.requests[settled:] if r.path.endswith(
            "/merge_requests/1/discussions") and r.query.get("page") == "1"]) >= 3)
        assert len([p for p in posts(slack, "New on") if BLOCKING in p.body["text"]]) == 1
        assert len((await watch_of(bot, key)).pending) == 0
        assert INJECTION not in shown_to_models(fake_model)
    finally:
        await forge.close()


@pytest.mark.parametrize("kind", ["github", "gitlab"])
async def test_a_flood_that_keeps_changing_slows_the_reads_once_the_tokens_requests_run_low(
        make_bot, slack_env, fake_model, tmp_path, kind):
    """Each read of a flooded pull request can cost a dozen requests a list, and a stranger who keeps its
    pages changing keeps the reads at FLOWER_PR_POLL_S: the token is every thread's, so once the forge
    says less than a quarter of its rate limit is left, the reads wait the longest gap."""
    slack = slack_env
    forge, bot, key = await opened_pr(make_bot, slack, fake_model, tmp_path, kind)
    try:
        async def taken(comment: int) -> Watch:
            """The watch as the read that took ``comment`` left it (a read that saw it change)."""
            seen = f"{'comment' if kind == 'github' else 'note'}:{comment}"
            async with asyncio.timeout(240):
                while seen not in (watch := await watch_of(bot, key)).seen:
                    await asyncio.sleep(0.05)
            return watch

        forge.rate_limit = (1200, 5000)
        for i in range(3):  # each read finds the pages changed, and still waits the longest gap
            assert (await taken(forge.conversation_comment(1, "mallory", f"flood {i}"))).interval == 0.3 * 8
        forge.rate_limit = (4000, 5000)  # the limit's hour turned: a changing pull request is read often again
        assert (await taken(forge.conversation_comment(1, "mallory", "and more"))).interval == 0.3
    finally:
        await forge.close()

"""Reviews and checks of an open pull request come back to the thread, end to end: the real bolt app
against the fake Slack, the real CLI against the offline model, real git pushing to a bare
repository standing in for the forge's, and the fake GitHub / GitLab API recording every request.

What is asserted is what people and models were shown: the thread's posts, the model's requests,
the forge's replies and comments, and the conditional requests the watcher sent.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import json
import subprocess

import aiohttp
import pytest

from bot.core.thread import ThreadKey
from bot.main import start_bot
from bot.render.pr_feedback import PR_WORK_ACTION
from bot.render.repo import OPEN_PR_ACTION
from bot.settings.config import load_config
from bot.testing.fake_forge import FakeForge
from tests.bot.helpers.app import marked_done
from tests.bot.helpers.forge_threads import CHANNEL, OPTIONS, TOKEN, forge_remote, posted, script
from tests.bot.helpers.pr_loop import INJECTION, POLL, opened_pr, policy, posts, shown_to_models, until, watch_of

pytestmark = pytest.mark.usefixtures("git_identity")  # tests/bot/conftest.py


@pytest.mark.both_backends
async def test_github_review_comes_back_as_one_post_and_auto_follow_up_replies_once(
        make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    forge, bot, key = await opened_pr(make_bot, slack, fake_model, tmp_path, "github",
                                      **policy(tmp_path, pr_followup="auto"))
    try:
        forge.set_access("octocat", "write")
        forge.set_access("mallory", "read")
        asked = len(fake_model.message_requests)
        mark = slack.mark()
        first = forge.review_comment(1, "octocat", "Rename the counter to rounds", path="round.txt", line=1)
        second = forge.review_comment(1, "octocat", "End the file with a newline <!channel>", path="round.txt",
                                      line=1)
        forge.review(1, "octocat", "CHANGES_REQUESTED", "Please address both before merging.")
        forge.conversation_comment(1, "mallory", INJECTION)

        said = await posted(slack, key.thread_ts, "New on", after=mark)
        text = said.body["text"]
        assert "Rename the counter to rounds" in text and "End the file with a newline" in text
        assert "requested changes" in text and "round.txt:1" in text and INJECTION not in text
        assert "<!channel>" not in json.dumps(said.body) and "&lt;!channel&gt;" in text  # quoted, never a ping
        assert "github.com/acme/app/pull/1" in json.dumps(said.body)
        await posted(slack, key.thread_ts, "new commit(s)", after=mark)  # the follow-up pushed its commit
        replies = await until("two replies", lambda: len(forge.replies(1)) >= 2 and forge.replies(1))
        assert sorted(thread for thread, _ in replies) == sorted([str(first), str(second)])
        assert all("Addressed in" in body and "<!-- flower:reply:" in body for _, body in replies)
        await until("the review's summary comment", lambda: any("Worked on the review feedback" in c
                                                               for c in forge.comments(1)))
        await marked_done(bot, key)

        requests = fake_model.message_requests[asked:]
        follow_up = [r for r in requests if "Rename the counter to rounds" in json.dumps(r.body, ensure_ascii=False)]
        assert follow_up, "the follow-up's request never reached a model"
        words = json.dumps(follow_up[0].body, ensure_ascii=False)
        assert "End the file with a newline" in words and "round.txt:1" in words
        assert INJECTION not in shown_to_models(fake_model)  # mallory has no write access
        assert len(posts(slack, "was not passed on")) == 1

        # more polls, another comment without access: nothing posted twice, nothing replied twice
        forge.conversation_comment(1, "mallory", INJECTION + " again")
        reads = len(forge.requests)
        await until("two more reads", lambda: len(forge.requests) >= reads + 8)
        assert len(forge.replies(1)) == 2 and len(posts(slack, "New on")) == 1
        assert len(posts(slack, "was not passed on")) == 1
        assert len([c for c in forge.comments(1) if "Worked on the review feedback" in c]) == 1
        assert INJECTION not in shown_to_models(fake_model)
        assert TOKEN not in json.dumps([c.body for c in slack.calls()])
    finally:
        await forge.close()


async def test_gitlab_ask_waits_for_work_on_this_from_an_allowed_person(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    forge, bot, key = await opened_pr(make_bot, slack, fake_model, tmp_path, "gitlab",
                                      FLOWER_ALLOWED_USERS="U0ALICE,U0BOB")
    try:
        forge.set_access("reviewer", "write")
        mark = slack.mark()
        note = forge.review_comment(1, "reviewer", "Say which round in the file", path="round.txt", line=1)
        said = await posted(slack, key.thread_ts, "New on", after=mark)
        [work] = [e for b in said.body["blocks"] for e in b.get("elements", []) if e.get("action_id") == PR_WORK_ACTION]
        asked = len(fake_model.message_requests)
        await bot.close()  # a restart: what was read and posted is in the database, not in memory
        bot = await make_bot(OPTIONS)
        reads = len(forge.requests)
        await until("more reads", lambda: len(forge.requests) >= reads + 6)
        assert len(fake_model.message_requests) == asked and not bot.jobs.busy(key)  # nothing runs by itself
        assert len(posts(slack, "New on")) == 1  # read again from scratch, posted once

        await slack.click(CHANNEL, said.response["ts"], PR_WORK_ACTION, user="U0CAROL", value=work["value"])
        await slack.wait_for("chat.postEphemeral", lambda c: c.body.get("user") == "U0CAROL", after=mark)
        assert len(fake_model.message_requests) == asked and not bot.jobs.busy(key)

        await slack.click(CHANNEL, said.response["ts"], PR_WORK_ACTION, user="U0BOB", value=work["value"])
        await posted(slack, key.thread_ts, "new commit(s)", after=mark)
        words = shown_to_models(fake_model)
        assert "Say which round in the file" in words and "round.txt:1" in words
        [(thread, body)] = await until("the reply", lambda: forge.replies(1))
        assert thread == forge.discussion_of(note) and "Addressed in" in body
        await marked_done(bot, key)
        again = slack.mark()
        await slack.click(CHANNEL, said.response["ts"], PR_WORK_ACTION, user="U0BOB", value=work["value"])
        taken = await slack.wait_for("chat.postEphemeral", lambda c: c.body.get("user") == "U0BOB", after=again)
        assert "already" in taken.body["text"] and not bot.jobs.busy(key)
    finally:
        await forge.close()


async def test_a_failing_check_is_said_once_and_the_pass_after_the_fix_once(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    forge, bot, key = await opened_pr(make_bot, slack, fake_model, tmp_path, "github")
    try:
        head = forge.head(1)
        forge.check(head, "unit tests", "failure", summary="2 of 40 tests failed", text="FAILED test_rounds\n")
        failed = await posted(slack, key.thread_ts, "check failed")
        assert "unit tests" in failed.body["text"] and "2 of 40 tests failed" in failed.body["text"]
        assert head[:7] in failed.body["text"]
        reads = len(forge.requests)
        await until("more reads", lambda: len(forge.requests) >= reads + 10)
        assert len(posts(slack, "check failed")) == 1

        # someone pushes the fix on the forge; its checks pass
        bare = tmp_path / "forge" / "acme/app.git"
        branch = forge.pulls()[0]["head"]
        tree = subprocess.run(["git", "--git-dir", str(bare), "rev-parse", f"{head}^{{tree}}"], check=True,
                              capture_output=True, text=True).stdout.strip()
        fix = subprocess.run(["git", "--git-dir", str(bare), "commit-tree", tree, "-p", head, "-m", "fix"],
                             check=True, capture_output=True, text=True).stdout.strip()
        subprocess.run(["git", "--git-dir", str(bare), "update-ref", f"refs/heads/{branch}", fix], check=True)
        forge.check(fix, "unit tests", "success", summary="40 tests passed")
        passed = await posted(slack, key.thread_ts, "The checks pass")
        assert fix[:7] in passed.body["text"]
        reads = len(forge.requests)
        await until("more reads", lambda: len(forge.requests) >= reads + 10)
        assert len(posts(slack, "The checks pass")) == 1 and len(posts(slack, "check failed")) == 1
    finally:
        await forge.close()


async def test_polling_is_conditional_backs_off_and_says_an_unreachable_forge_once(
        make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    forge, bot, key = await opened_pr(make_bot, slack, fake_model, tmp_path, "github")
    try:
        def reads_of_the_pull() -> list:
            return [r for r in forge.requests if r.method == "GET" and r.path == "/repos/acme/app/pulls/1"]

        await until("five reads", lambda: len(reads_of_the_pull()) >= 5)
        later = reads_of_the_pull()[1:]
        assert all(r.headers.get("If-None-Match") for r in later)  # every read after the first is conditional
        # nothing changed: the gap doubles up to eight times FLOWER_PR_POLL_S
        watch = await watch_of(bot, key)
        async with asyncio.timeout(240):
            while watch.interval < 0.3 * 8:
                await asyncio.sleep(0.2)
                watch = await watch_of(bot, key)
        assert watch.interval == pytest.approx(0.3 * 8)
        assert posts(slack, "New on") == [] and posts(slack, "check failed") == []  # a 304 says nothing

        mark = slack.mark()
        forge.fail("GET", r"/repos/acme/app/pulls/1", 503, times=6)  # three reads of two tries each
        await posted(slack, key.thread_ts, "Could not read the reviews and checks", after=mark)
        await until("the outage over", lambda: [r.status for r in reads_of_the_pull()][-1:] == [304])
        assert len(posts(slack, "Could not read the reviews and checks")) == 1  # said once, retried

        # a remark read while the forge fails half-way (the author's access) is not lost: read again whole
        forge.set_access("octocat", "write")
        forge.fail("GET", r"/repos/acme/app/collaborators/octocat/permission", 503, times=4)
        forge.conversation_comment(1, "octocat", "Please add a test for round 3")
        said = await posted(slack, key.thread_ts, "New on", after=mark)
        assert "Please add a test for round 3" in said.body["text"] and len(posts(slack, "New on")) == 1
        assert TOKEN not in json.dumps([c.body for c in slack.calls()])
    finally:
        await forge.close()


async def test_a_webhook_with_a_wrong_signature_gets_401_and_starts_nothing(slack_env, fake_model, tmp_path,
                                                                            monkeypatch):
    slack = slack_env
    monkeypatch.delenv("SLACK_APP_TOKEN")
    for name, value in {"SLACK_SIGNING_SECRET": "s3cret-signing", "PORT": "0", "FLOWER_HOME": str(tmp_path / "home"),
                        "GITHUB_WEBHOOK_SECRET": "hook-secret"}.items():
        monkeypatch.setenv(name, value)
    running = await start_bot(load_config(dotenv=None), options=OPTIONS)
    try:
        key = ThreadKey("T0001", CHANNEL, "1700000000.000100")
        far = 1e12  # its next read is far off (the watch first: an open pull request without one is due now)
        await running.store.save_pr_watch(key, "flower/x", poll_at=far, state="{}")
        await running.store.set_pull_request(key, "flower/x", number=7, url="https://github.com/acme/app/pull/7",
                                             state="open", pushed="abc")
        body = json.dumps({"action": "created", "pull_request": {"number": 7, "head": {"ref": "flower/x"}},
                           "repository": {"full_name": "acme/app"}, "comment": {"body": INJECTION}}).encode()
        url = f"http://127.0.0.1:{running.port}/forge/github"
        wrong = "sha256=" + hmac.new(b"another-secret", body, hashlib.sha256).hexdigest()
        headers = {"X-GitHub-Event": "pull_request_review_comment", "Content-Type": "application/json"}
        async with aiohttp.ClientSession() as http:
            async with http.post(url, data=body, headers={**headers, "X-Hub-Signature-256": wrong}) as resp:
                assert resp.status == 401
            [watched] = await running.store.watched_pull_requests()
            assert watched.poll_at == far and slack.calls("chat.postMessage") == []
            right = "sha256=" + hmac.new(b"hook-secret", body, hashlib.sha256).hexdigest()
            async with http.post(url, data=body, headers={**headers, "X-Hub-Signature-256": right}) as resp:
                assert resp.status == 202
        [watched] = await running.store.watched_pull_requests()
        assert watched.poll_at < far  # due at once: the watcher reads it (and finds no binding here)
        assert INJECTION not in shown_to_models(fake_model)
    finally:
        await running.close()


async def test_two_replicas_read_a_pull_request_once_and_a_click_at_either_starts_the_follow_up(
        make_bot, slack_env, fake_model, tmp_path, postgres_url):
    slack = slack_env
    forge_remote(tmp_path, "github.com", "acme/app")
    async with FakeForge("github", bare_dir=tmp_path / "forge", token=TOKEN) as forge:
        forge.add_repo("acme/app")
        replica = dataclasses.replace(OPTIONS, replicas=True, lease_s=3.0, heartbeat_s=0.5)
        env = {"FLOWER_DATABASE_URL": postgres_url, "FLOWER_ADMINS": "U0ALICE", "GITHUB_TOKEN": TOKEN,
               "GITHUB_API_URL": forge.url, **POLL}
        a, b = await make_bot(replica, **env), await make_bot(replica, **env)
        bind = slack.mention(CHANNEL, "/repo https://github.com/acme/app.git")
        await slack.send_event(bind, to=1)
        await posted(slack, bind["ts"], "bound to a repository")
        script(fake_model)
        ask = slack.mention(CHANNEL, "commit a round file")
        await slack.send_event(ask, to=1)  # b receives the request: the thread is b's
        branch_msg = await posted(slack, ask["ts"], "Branch flower/")
        key = ThreadKey("T0001", CHANNEL, ask["ts"])
        await marked_done(b, key)
        await slack.click(CHANNEL, branch_msg.response["ts"], OPEN_PR_ACTION, user="U0BOB", to=1)
        await posted(slack, key.thread_ts, "opened")

        forge.set_access("octocat", "write")
        mark = slack.mark()
        forge.review_comment(1, "octocat", "Name the file rounds.txt", path="round.txt", line=1)
        said = await posted(slack, key.thread_ts, "New on", after=mark)
        reads = len(forge.requests)
        await until("more reads", lambda: len(forge.requests) >= reads + 12)
        assert len(posts(slack, "New on")) == 1  # one reader: the replica holding the thread's lease
        assert await a.store.lease_owner(key) == b.replicas.id

        [work] = [e for b_ in said.body["blocks"] for e in b_.get("elements", []) if e.get("action_id") == PR_WORK_ACTION]
        await slack.click(CHANNEL, said.response["ts"], PR_WORK_ACTION, user="U0BOB", value=work["value"], to=0)
        await posted(slack, key.thread_ts, "new commit(s)", after=mark)  # forwarded to b, which ran it
        assert "Name the file rounds.txt" in shown_to_models(fake_model)
        await until("the reply", lambda: forge.replies(1))
        await marked_done(b, key)
        assert key not in a.jobs._runs and len(forge.replies(1)) == 1

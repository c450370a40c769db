"""Pull requests end to end: the real bolt app against the fake Slack, the real CLI against the
offline model, real git pushing to local bare repositories that stand in for the forge's
(``url.<dir>/.insteadOf https://github.com/``), and a fake forge API recording every request.

A channel bound to ``https://github.com/acme/app.git``: an achieved run offers Open pull request;
the click pushes the branch and creates one PR whose body holds the brief, the checklist and the
thread's link; a follow-up with new commits pushes the same branch and comments, no second PR; a
PR merged on the forge is noticed when the thread wakes; ``/new`` gets a new branch and a new PR. GitLab with FLOWER_AUTO_PR opens its
merge request by itself. Each bad case is said in the thread and leaves nothing half-made.
"""

from __future__ import annotations

import subprocess

import pytest

from bot.core.thread import ThreadKey
from bot.render.repo import DIFF_ACTION, DRAFT_PR_ACTION, OPEN_PR_ACTION, PR_LINK_ACTION, PUSH_ACTION
from bot.testing.fake_forge import FakeForge
from tests.bot.helpers.app import marked_done
from tests.bot.helpers.forge_threads import (
    CHANNEL,
    COMMIT,
    NOT_YET,
    OPTIONS,
    TOKEN,
    bare_remote,
    branch_of,
    buttons,
    created,
    forge_remote,
    git,
    posted,
    ref,
    run_to_branch,
    say,
    script,
)

pytestmark = pytest.mark.usefixtures("git_identity")  # tests/bot/conftest.py


async def test_github_open_pr_follow_up_comments_merged_noticed(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    bare = forge_remote(tmp_path, "github.com", "acme/app")
    async with FakeForge("github", bare_dir=tmp_path / "forge", token=TOKEN) as forge:
        forge.add_repo("acme/app")
        bot, key, branch_msg = await run_to_branch(make_bot, slack, fake_model, "https://github.com/acme/app.git",
                                                   GITHUB_TOKEN=TOKEN, GITHUB_API_URL=forge.url)
        thread, branch = key.thread_ts, branch_of(branch_msg)
        shown = buttons(branch_msg)
        assert set(shown) == {PUSH_ACTION, OPEN_PR_ACTION, DIFF_ACTION}
        assert shown[OPEN_PR_ACTION]["text"]["text"] == "Open pull request"
        await marked_done(bot, key)
        assert forge.requests == []  # nothing reaches the forge before a person asks
        assert ref(bare, branch) is None

        # the clone's origin rewritten (not by a run: the clone is out of its reach now): the push
        # still goes where the admin bound
        evil = tmp_path / "evil.git"
        subprocess.run(["git", "init", "-q", "--bare", str(evil)], check=True)
        [repo] = (tmp_path / "home" / "repos").iterdir()
        git("remote", "set-url", "origin", str(evil), cwd=repo)

        await slack.click(CHANNEL, branch_msg.response["ts"], OPEN_PR_ACTION, user="U0BOB")
        opened = await posted(slack, thread, "opened pull request")
        assert "<https://github.com/acme/app/pull/1|#1>" in opened.body["text"] and "<@U0BOB>" in opened.body["text"]
        head = git("rev-parse", f"refs/heads/{branch}", cwd=repo)
        assert ref(bare, branch) == head and ref(evil, branch) is None
        git("remote", "set-url", "origin", "https://github.com/acme/app.git", cwd=repo)  # new threads fetch it
        [create] = created(forge)
        assert create.json["base"] == "main" and create.json["head"] == branch and create.json["draft"] is False
        assert create.json["title"] == "每轮的 round.txt 都提交了"
        body = create.json["body"]
        assert "每轮写一个 round.txt" in body  # the confirmed brief
        assert "- [x] round.txt 已提交 (passed)" in body and "- [x] 提交信息写了轮次 (passed)" in body
        assert "两项都通过了" in body  # the judge's reason
        permalink = f"https://{slack.workspace.team_domain}.slack.com/archives/{CHANNEL}/p{thread.replace('.', '')}"
        assert f"[the Slack thread]({permalink})" in body
        assert create.headers["Authorization"] == f"Bearer {TOKEN}"

        # a follow-up that commits again: the same branch is pushed, one comment, no second PR
        mark = slack.mark()
        await say(slack, "one more round please", thread_ts=thread)
        updated = await posted(slack, thread, "new commit(s)", after=mark)
        assert "<https://github.com/acme/app/pull/1|#1>" in updated.body["text"]
        new_head = git("rev-parse", f"refs/heads/{branch}", cwd=repo)
        assert new_head != head and ref(bare, branch) == new_head
        assert len(created(forge)) == 1 and len(forge.pulls()) == 1
        [note] = forge.comments(1)
        assert "**Verdict: achieved.**" in note and "- [x] round.txt 已提交 (passed)" in note and "round " in note
        later = await posted(slack, thread, "Branch flower/", after=mark)
        assert set(buttons(later)) == {PUSH_ACTION, PR_LINK_ACTION, DIFF_ACTION}
        assert buttons(later)[PR_LINK_ACTION]["url"] == "https://github.com/acme/app/pull/1"
        await marked_done(bot, key)

        # merged on GitHub: the next wake says so once, suggests /new, and never comments again
        forge.set_state(1, "merged")
        mark = slack.mark()
        await say(slack, "and another one", thread_ts=thread)
        ended = await posted(slack, thread, "was merged on GitHub", after=mark)
        assert "/new" in ended.body["text"]
        await posted(slack, thread, "Branch flower/", after=mark)
        await marked_done(bot, key)
        assert len(forge.comments(1)) == 1 and len(created(forge)) == 1
        assert not [c for c in slack.calls("chat.postMessage") if c.index >= mark and "new commit(s)" in (c.body.get("text") or "")]

        # /new: a new branch, and its own pull request
        mark = slack.mark()
        await say(slack, "/new commit a round file", thread_ts=thread)
        fresh = await posted(slack, thread, f"Branch {branch}-2", after=mark)
        assert OPEN_PR_ACTION in buttons(fresh)
        await marked_done(bot, key)
        await slack.click(CHANNEL, fresh.response["ts"], OPEN_PR_ACTION)
        second = await posted(slack, thread, "opened pull request", after=mark)
        assert "|#2>" in second.body["text"] and created(forge)[-1].json["head"] == f"{branch}-2"
        assert [p["state"] for p in forge.pulls()] == ["merged", "open"]
        assert TOKEN not in str([c.body for c in slack.calls()])  # the bot's token never reaches Slack


async def test_gitlab_auto_mr_on_an_achieved_goal(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    bare = forge_remote(tmp_path, "gitlab.com", "acme/group/app")
    async with FakeForge("gitlab", bare_dir=tmp_path / "forge", token="glpat-test0000000000") as forge:
        forge.add_repo("acme/group/app")
        bot, key, _ = await run_to_branch(make_bot, slack, fake_model, "https://gitlab.com/acme/group/app.git",
                                          GITLAB_TOKEN="glpat-test0000000000", GITLAB_URL=forge.url, FLOWER_AUTO_PR="1")
        thread = key.thread_ts
        opened = await posted(slack, thread, "Opened merge request")
        assert "!1" in opened.body["text"] and "FLOWER_AUTO_PR" in opened.body["text"]
        [create] = created(forge)
        assert create.path == "/api/v4/projects/acme%2Fgroup%2Fapp/merge_requests" or \
            create.path == "/api/v4/projects/acme/group/app/merge_requests"
        assert create.json["source_branch"].startswith("flower/") and create.json["target_branch"] == "main"
        assert "每轮写一个 round.txt" in create.json["description"]
        assert ref(bare, create.json["source_branch"]) not in (None, ref(bare, "main"))  # `git add -A` committed
        await marked_done(bot, key)


async def test_a_worker_pointing_head_at_main_cannot_make_the_bot_push_main(make_bot, slack_env, fake_model,
                                                                           tmp_path):
    """Issue 25, finding 3: the worktree's git folder is the agent's (a worker points its HEAD at
    main); the next run still works on, shows and pushes the branch the bot recorded when it
    opened the worktree, so the forge's main stays where it was, with FLOWER_AUTO_PR=1 (no click)."""
    slack = slack_env
    bare = forge_remote(tmp_path, "gitlab.com", "acme/group/app")
    main_before = ref(bare, "main")
    hijack = (COMMIT + ' && git update-ref refs/heads/main HEAD'
              ' && printf "ref: refs/heads/main\\n" > "$(git rev-parse --git-dir)/HEAD"'
              ' && git symbolic-ref HEAD')
    async with FakeForge("gitlab", bare_dir=tmp_path / "forge", token="glpat-test0000000000") as forge:
        forge.add_repo("acme/group/app")
        bot = await make_bot(OPTIONS, FLOWER_ADMINS="U0ALICE", GITLAB_TOKEN="glpat-test0000000000",
                             GITLAB_URL=forge.url, FLOWER_AUTO_PR="1")
        ts = await say(slack, "/repo https://gitlab.com/acme/group/app.git")
        await posted(slack, ts, "bound to a repository")
        script(fake_model, command=hijack)
        thread = await say(slack, "commit a round file")
        branch_msg = await posted(slack, thread, "Branch flower/")
        await posted(slack, thread, "Opened merge request")
        [clone] = (tmp_path / "home" / "repos").iterdir()
        own = next((tmp_path / "home" / "workspaces").glob("*/repo.git"))  # the thread's own repository
        assert git("rev-parse", "refs/heads/main", cwd=own) != main_before  # the hijack ran there
        assert git("rev-parse", "refs/heads/main", cwd=clone) == main_before  # and never reached the clone
        mark = slack.mark()
        await say(slack, "one more round please", thread_ts=thread)  # the next run reads the worktree again
        again = await posted(slack, thread, "Branch ", after=mark)
        assert branch_of(again) == branch_of(branch_msg)
        [create] = created(forge)
        assert create.json["source_branch"] == branch_of(branch_msg) and create.json["source_branch"].startswith("flower/")
        assert ref(bare, "main") == main_before  # the forge's main did not move
        assert "main" not in str(buttons(again))
        await marked_done(bot, ThreadKey("T0001", CHANNEL, thread))


async def test_unachieved_goal_offers_a_draft(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    forge_remote(tmp_path, "github.com", "acme/app")
    async with FakeForge("github", bare_dir=tmp_path / "forge", token=TOKEN) as forge:
        forge.add_repo("acme/app")
        _, key, branch_msg = await run_to_branch(make_bot, slack, fake_model, "https://github.com/acme/app.git",
                                                 verdict=NOT_YET, GITHUB_TOKEN=TOKEN, GITHUB_API_URL=forge.url)
        thread = key.thread_ts
        assert buttons(branch_msg)[DRAFT_PR_ACTION]["text"]["text"] == "Open draft PR"
        await slack.click(CHANNEL, branch_msg.response["ts"], DRAFT_PR_ACTION)
        await posted(slack, thread, "opened pull request")
        [create] = created(forge)
        assert create.json["draft"] is True
        assert "- [ ] 提交信息写了轮次 (**failing**)" in create.json["body"] and "提交信息缺轮次" in create.json["body"]


async def test_bad_cases_are_said_and_leave_nothing_half_made(make_bot, slack_env, fake_model, tmp_path, monkeypatch):
    slack = slack_env
    bare = forge_remote(tmp_path, "github.com", "acme/app")
    async with FakeForge("github", bare_dir=tmp_path / "forge", token=TOKEN) as forge:
        forge.add_repo("acme/app")
        bot, key, branch_msg = await run_to_branch(make_bot, slack, fake_model, "https://github.com/acme/app.git",
                                                   GITHUB_API_URL=forge.url)  # no GITHUB_TOKEN yet
        thread, branch = key.thread_ts, branch_of(branch_msg)
        await marked_done(bot, key)

        async def click_says(needle: str) -> str:
            mark = slack.mark()
            await slack.click(CHANNEL, branch_msg.response["ts"], OPEN_PR_ACTION)
            said = await posted(slack, thread, "Could not open the pull request", after=mark)
            assert needle in said.body["text"], said.body["text"]
            assert ref(bare, branch) is None and forge.pulls() == []  # nothing half-made
            return said.body["text"]

        assert "Set it" in await click_says("GITHUB_TOKEN is not set")
        assert forge.requests == []
        # the same button after a restart with a token, which the forge then refuses
        await bot.close()
        bot = await make_bot(OPTIONS, GITHUB_TOKEN="ghp_wrongtoken00000000000")
        said = await click_says("401")
        assert "wrongtoken" not in said
        await bot.close()
        bot = await make_bot(OPTIONS, GITHUB_TOKEN=TOKEN)

        forge.add_repo("acme/app", push=False)  # a token that may read but not push
        await click_says("may not push to acme/app")
        forge.add_repo("acme/app")
        # a token without "Pull requests: write": refused after the push, whose branch is deleted again
        forge.fail("POST", "/repos/acme/app/pulls", 403,
                   body={"message": "Resource not accessible by personal access token"})
        said = await click_says("403")
        assert "Resource not accessible" in said

        git("update-ref", "-d", "refs/heads/main", cwd=bare)  # the base branch is gone on the forge
        await click_says("base branch 'main' does not exist")
        git("update-ref", "refs/heads/main", git("rev-parse", "HEAD", cwd=tmp_path / "seed"), cwd=bare)

        hook = bare / "hooks" / "pre-receive"  # a protected branch: the forge refuses the push
        hook.write_text("#!/bin/sh\necho 'GH006: Protected branch update failed' >&2\nexit 1\n")
        hook.chmod(0o755)
        said = await click_says("refused the push")
        assert "Protected branch" in said
        hook.unlink()

        before = len(forge.requests)
        forge.fail("GET", "/repos/acme/app", 503, times=2)  # the forge is down: retried, then said
        await click_says("after 2 tries")
        assert len([r for r in forge.requests[before:] if r.path == "/repos/acme/app"]) == 2

        forge.fail("POST", "/repos/acme/app/pulls", 422, body={"message": "Validation Failed"})  # after the push
        await click_says("Validation Failed")  # the branch pushed for it was deleted again

        # a PR that already exists for the branch (opened by hand): reused, not a second one
        git("push", "-q", str(bare), f"refs/heads/{branch}:refs/heads/{branch}",
            cwd=next((tmp_path / "home" / "repos").iterdir()))
        forge.open_by_hand("acme/app", head=branch, base="main", title="by hand")
        mark = slack.mark()
        await slack.click(CHANNEL, branch_msg.response["ts"], OPEN_PR_ACTION)
        reused = await posted(slack, thread, "already has pull request", after=mark)
        assert "#1" in reused.body["text"] and len(forge.pulls()) == 1


async def test_a_remote_off_any_forge_has_no_pr_button(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    bare = bare_remote(tmp_path, "plain")  # bound as a local path: no forge
    bot, key, branch_msg = await run_to_branch(make_bot, slack, fake_model, str(bare), GITHUB_TOKEN=TOKEN)
    assert set(buttons(branch_msg)) == {PUSH_ACTION, DIFF_ACTION}  # Push branch stays, no PR button
    await marked_done(bot, key)

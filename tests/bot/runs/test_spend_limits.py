"""Spend limits, enforced end to end: real slack-bolt against the fake Slack, the real CLI against the
offline model, whose replies carry token usage the CLI prices. A run stops within one model call
past its limit, pauses holding no process, says which limit and how much in the thread, and goes
on in the same session once an admin raised the limit and someone replied; a channel's month is
shared by its threads, a person's follows them to another channel; the status warns at 80 %."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

import pytest

from bot.folders import run_dir
from bot.render.limit_notices import GO_ON_ACTION
from bot.records import ThreadKey
from engine.host import MANIFEST_FILE, read_manifest
from engine._lang import zh
from engine.testing import prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE
from tests.bot.helpers.app import ACHIEVED, BRIEF, CHANNEL, GOAL, posted

OTHER = "C0RANDOM"
CALL = {"input_tokens": 12_000, "output_tokens": 5}  # $0.06 a call at the CLI's default model's price
CHEAP = {"input_tokens": 100, "output_tokens": 5}
SESSION = "agents.sessions.setStatus"


def spending_script(fm) -> None:
    """The clarifier and goal setter cost next to nothing; each coordinator call $0.06; after a
    person says "go on" the coordinator finishes and the judge passes the work."""
    fm.rule(text(BRIEF, usage=CHEAP), when=CLARIFIER)
    fm.rule(text(GOAL, usage=CHEAP), when=[JUDGE, prompt_contains("设定目标")], repeat_last=True)
    fm.rule(text(ACHIEVED, usage=CHEAP), when=JUDGE, repeat_last=True)
    fm.rule(text("finished the work", usage=CHEAP), when=[COORDINATOR, prompt_contains("go on")])
    fm.rule(text("finished the work", usage=CHEAP), when=[COORDINATOR, prompt_contains(zh.WAKE_SILENT)])
    fm.rule(*[tool_use("Bash", {"command": f"echo {n}"}, usage=CALL) for n in range(40)], text("stopped"),
            when=COORDINATOR)


def posted_now(slack, thread: str, needle: str, mark: int) -> list:
    return [c for c in slack.calls("chat.postMessage", thread_ts=thread) if c.index >= mark
            and needle in (c.body.get("text") or "")]


def coordinator_calls(fm) -> list:
    return [r for r in fm.message_requests if COORDINATOR(r.body)]


def key_of(thread: str, channel: str = CHANNEL) -> ThreadKey:
    return ThreadKey("T0001", channel, thread)


def manifest_total(tmp_path, thread: str, channel: str = CHANNEL) -> float:
    ws = tmp_path / "home" / "workspaces" / f"T0001-{channel}-{thread.replace('.', '_')}"
    rows = read_manifest(run_dir(ws) / MANIFEST_FILE)
    return sum(r["cost_usd"] for r in rows)


@pytest.mark.both_backends
async def test_a_request_pauses_at_its_limit_and_goes_on_once_an_admin_raises_it(
        make_bot, slack_env, fake_model, tmp_path):
    slack, fm = slack_env, fake_model
    bot = await make_bot(FLOWER_LIMIT_REQUEST_USD="0.15", FLOWER_ADMINS="U0CAROL",
                         FLOWER_ALLOWED_USERS="U0ALICE,U0CAROL")
    spending_script(fm)
    event = slack.mention(CHANNEL, "写个 hello.txt", user="U0ALICE")
    thread = event["ts"]
    await slack.send_event(event)
    pause = await posted(slack, thread, "Paused:")
    said = str(pause.body)
    assert "this request reached its spend limit of $0.15" in said and "<@U0CAROL>" in said, said
    assert "@flower /limit request" in said
    # $0.06 a call: the third crosses $0.15; at most one more call is made before the step stops
    calls = len(coordinator_calls(fm))
    assert 3 <= calls <= 4, calls
    key = key_of(thread)
    await slack.wait_until(lambda: not bot.jobs.busy(key), what="the run over: no process held")
    assert (await bot.store.get_thread(key)).state == "limited"
    status_ts = (await bot.store.get_thread(key)).status_ts
    assert "Paused at a spend limit" in slack.message(CHANNEL, status_ts)["text"]
    await slack.wait_until(lambda: [c.body.get("status") for c in slack.calls(SESSION, thread_ts=thread)][-1:]
                           == ["suspended"], what="the session suspended")
    warned = [c for c in slack.calls("chat.update", ts=status_ts) if "of its $0.15 limit" in str(c.body)]
    assert warned, "the status line warned at 80 %"
    # the ledger has every session's spend, as the manifest does
    assert abs(await bot.store.spent(0.0, thread=key) - manifest_total(tmp_path, thread)) < 1e-6

    # A reply before the limit moves pauses again: the estimate that stopped the step is
    # conservative, so the CLI's own figure may leave a call's worth, no more.
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "keep going", thread_ts=thread, user="U0ALICE"))
    await posted(slack, thread, "Paused:", after=mark)
    assert len(coordinator_calls(fm)) <= calls + 2 and not posted_now(slack, thread, "Done", mark)
    calls = len(coordinator_calls(fm))

    # Only an admin may raise it; then a reply goes on in the same session.
    await slack.send_event(slack.mention(CHANNEL, "/limit request 5", thread_ts=thread, user="U0ALICE"))
    await slack.wait_until(lambda: [e for e in slack.ephemerals if e["user"] == "U0ALICE"
                                    and "only admins" in e["text"]], what="the refusal")
    await slack.send_event(slack.mention(CHANNEL, "/limit request 5", thread_ts=thread, user="U0CAROL"))
    await posted(slack, thread, "set the limit of this request to $5.00")
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "go on", thread_ts=thread, user="U0ALICE"))
    await posted(slack, thread, "Done: the goal is achieved", after=mark)
    resumed = [r for r in coordinator_calls(fm) if "go on" in r.prompt][0]
    assert len(resumed.messages) > 4  # the same conversation, not a new session
    # the answer is queued before the thread is marked done: wait for the run's end, then look
    await slack.wait_until(lambda: not bot.jobs.busy(key), what="the run over")
    assert (await bot.store.get_thread(key)).state == "done"
    # the ledger and the audit trail, as `flower-bot usage` and `flower-bot audit` print them
    assert abs(await bot.store.spent(0.0, thread=key) - manifest_total(tmp_path, thread)) < 1e-6
    usage = list(csv.DictReader(io.StringIO(flower_bot("usage", "--by", "thread", "--format", "csv"))))
    assert [r["thread"] for r in usage] == [f"{CHANNEL}/{thread}"]
    assert abs(float(usage[0]["cost_usd"]) - manifest_total(tmp_path, thread)) < 1e-5
    by_user = list(csv.DictReader(io.StringIO(flower_bot("usage", "--by", "user", "--format", "csv"))))
    assert {r["user"] for r in by_user} == {"U0ALICE"}  # who asked pays, whoever said "go on"
    audit = list(csv.DictReader(io.StringIO(flower_bot("audit", "--format", "csv"))))
    actions = [(a["user"], a["action"]) for a in audit]
    assert actions[0] == ("U0ALICE", "start") and ("U0CAROL", "limit") in actions, actions
    assert [a["detail"] for a in audit if a["action"] == "limit"] == ["request=5.0"]


def flower_bot(*args: str) -> str:
    """The real `flower-bot` command on this test's settings (its environment)."""
    done = subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_a_channel_s_month_is_shared_by_its_threads_and_a_person_s_follows_them(
        make_bot, slack_env, fake_model, tmp_path):
    slack, fm = slack_env, fake_model
    bot = await make_bot(FLOWER_LIMIT_CHANNEL_MONTH_USD="0.10", FLOWER_LIMIT_USER_MONTH_USD="0.12")
    spending_script(fm)
    first = slack.mention(CHANNEL, "写个 hello.txt", user="U0ALICE")
    await slack.send_event(first)
    pause = await posted(slack, first["ts"], "Paused:")
    assert "this channel this month reached its spend limit of $0.10" in str(pause.body)

    # Bob's thread in the same channel: the channel's month is (about) spent; it pauses within a
    # call (the CLI's own figure for the first thread may leave one)
    asked = len(coordinator_calls(fm))
    second = slack.mention(CHANNEL, "写个 bye.txt", user="U0BOB")
    await slack.send_event(second)
    pause = await posted(slack, second["ts"], "Paused:")
    assert "this channel this month" in str(pause.body) and len(coordinator_calls(fm)) <= asked + 2

    # Alice in another channel: her own month (0.12) is nearly spent too; it stops her there
    third = slack.mention(OTHER, "写个 hi.txt", user="U0ALICE")
    await slack.send_event(third)
    pause = await posted(slack, third["ts"], "Paused:")
    assert "the person who asked, this month" in str(pause.body)
    total = sum(manifest_total(tmp_path, t, c) for t, c in ((first["ts"], CHANNEL), (second["ts"], CHANNEL),
                                                             (third["ts"], OTHER)))
    assert abs(await bot.store.spent(0.0) - total) < 1e-6


async def test_go_on_under_the_pause_continues_once_the_limit_is_raised(make_bot, slack_env, fake_model):
    slack, fm = slack_env, fake_model
    bot = await make_bot(FLOWER_LIMIT_THREAD_USD="0.15", FLOWER_ADMINS="U0CAROL")
    spending_script(fm)
    event = slack.mention(CHANNEL, "写个 hello.txt", user="U0ALICE")
    thread = event["ts"]
    await slack.send_event(event)
    pause = await posted(slack, thread, "this thread reached its spend limit")
    key = key_of(thread)
    await slack.wait_until(lambda: not bot.jobs.busy(key), what="the run paused")
    await slack.send_event(slack.mention(CHANNEL, "/limit thread 5", thread_ts=thread, user="U0CAROL"))
    await posted(slack, thread, "set the limit of this thread to $5.00")
    mark = slack.mark()
    await slack.click(CHANNEL, pause.response["ts"], GO_ON_ACTION, user="U0ALICE")
    await posted(slack, thread, "Done: the goal is achieved", after=mark)
    woken = [r for r in coordinator_calls(fm) if zh.WAKE_SILENT in r.prompt]
    assert woken and len(woken[0].messages) > 4  # the same session, woken where it stopped
    assert ("U0ALICE", "go_on") in [(a.user, a.action) for a in await bot.store.audit_since(0.0)]

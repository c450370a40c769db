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

from bot.core.thread import ThreadKey, run_dir
from bot.render.limit_notices import GO_ON_ACTION
from bot.runs.spend_book import installation_admins, limit_admins
from bot.settings.config import load_config
from bot.settings.limits import INSTALLATION, lowers
from engine._lang import zh
from engine.host import MANIFEST_FILE, read_manifest
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


LEAD, OPS = "U0BOB", "U0CAROL"  # a channel's own admin (the policy's [channel.C…] table); the operator
LEAD_POLICY = f'[channel.{CHANNEL}]\nadmins = ["{LEAD}"]\n'


async def limit_said(slack, thread: str, command: str, user: str) -> str:
    """``@flower /limit …`` by ``user`` in ``thread``: the answer posted there, set or refused (either
    ends the wait, so a change that should have been refused fails at once)."""
    mark = slack.mark()
    await slack.send_event(slack.mention(CHANNEL, command, thread_ts=thread, user=user))
    said = await slack.wait_until(lambda: [c.body["text"] for c in slack.calls("chat.postMessage", thread_ts=thread)
                                           if c.index >= mark and c.body.get("text", "").startswith((":white", "Sorry",
                                                                                                     "抱歉"))],
                                  what=f"the answer to {command!r}")
    return said[0]


async def test_a_channel_s_admin_cannot_lift_the_operator_s_caps_and_is_told_why(make_bot, slack_env, fake_model,
                                                                                  tmp_path):
    """Issue 37, finding 5: a person named only in a channel's policy table raised `month` to $500 and a
    run there passed the operator's $10 cap (scaled here: $0.10). Now the raise is refused in the thread,
    the run pauses at the operator's cap, and the channel's own limits stay the channel admin's to set."""
    slack, fm = slack_env, fake_model
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "policy.toml").write_text(LEAD_POLICY, encoding="utf-8")
    bot = await make_bot(FLOWER_ADMINS=OPS, FLOWER_LIMIT_MONTH_USD="0.10", FLOWER_LIMIT_USER_MONTH_USD="1",
                         FLOWER_ALLOWED_USERS=f"U0ALICE,{LEAD},{OPS}")
    spending_script(fm)
    asked = slack.mention(CHANNEL, "/limit", user=LEAD)
    await slack.send_event(asked)
    thread = asked["ts"]
    for command, cap in (("/limit month 500", "$0.10"), ("/limit user 500", "$1.00"), ("/limit month off", "$0.10")):
        said = await limit_said(slack, thread, command, LEAD)
        scope = command.split()[1]
        assert said.startswith(f"Sorry <@{LEAD}>, the `{scope}` limit counts spend in every channel"), said
        assert "`FLOWER_ADMINS`" in said and f"It stays at {cap}" in said, said
    assert await bot.store.channel_limits("T0001", CHANNEL) == {}
    # the channel's own scopes are still the channel admin's
    for scope, what in (("channel", "this channel this month"), ("thread", "this thread"), ("request", "this request")):
        said = await limit_said(slack, thread, f"/limit {scope} 5", LEAD)
        assert said == f":white_check_mark: <@{LEAD}> set the limit of {what} to $5.00 in this channel.", said

    # a run in the channel stops at the operator's cap, and the pause names who may raise it: the operator
    event = slack.mention(CHANNEL, "写个 hello.txt", user="U0ALICE")
    await slack.send_event(event)
    pause = str((await posted(slack, event["ts"], "Paused:")).body)
    assert "flower, this month reached its spend limit of $0.10" in pause, pause
    assert f"<@{OPS}> can raise it" in pause and f"<@{LEAD}>" not in pause, pause
    await slack.wait_until(lambda: not bot.jobs.busy(key_of(event["ts"])), what="the run paused")

    # lowering the operator's cap in the channel is allowed; raising it is the operator's
    said = await limit_said(slack, thread, "/limit month 0.05", LEAD)
    assert said.startswith(f":white_check_mark: <@{LEAD}> set the limit of flower, this month to $0.05"), said
    assert "Sorry" in await limit_said(slack, thread, "/limit month 0.08", LEAD)  # back up: the operator's
    said = await limit_said(slack, thread, "/limit month 500", OPS)
    assert said.endswith("set the limit of flower, this month to $500.00 in this channel."), said
    assert (await bot.store.channel_limits("T0001", CHANNEL))["month"] == 500.0
    refused = [(a.user, a.detail) for a in await bot.store.audit_since(0.0) if a.action == "limit_refused"]
    assert refused == [(LEAD, "month=500.0"), (LEAD, "user=500.0"), (LEAD, "month=off"), (LEAD, "month=0.08")]


async def test_a_channel_s_admin_cannot_pin_an_installation_cap_against_the_operator_s_later_lowering(
        make_bot, slack_env, tmp_path):
    """A channel's admin sets `month` to exactly what is in force (a lowering by the rule); the operator then
    lowers the installation's cap: a channel's stored value would override it there and keep the old one.
    What a channel's admin sets is a cap under the operator's, never in place of it; the operator's own
    /limit still sets the channel's value outright."""
    slack = slack_env
    policy = tmp_path / "home" / "policy.toml"
    policy.parent.mkdir()
    policy.write_text(f"[defaults]\nlimit_month_usd = 0.5\nlimit_user_month_usd = 2\n\n{LEAD_POLICY}", encoding="utf-8")
    bot = await make_bot(FLOWER_ADMINS=OPS)
    asked = slack.mention(CHANNEL, "/limit", user=LEAD)
    await slack.send_event(asked)
    thread = asked["ts"]
    assert (await limit_said(slack, thread, "/limit month 0.5", LEAD)).startswith(":white_check_mark:")
    assert (await limit_said(slack, thread, "/limit user 1", LEAD)).startswith(":white_check_mark:")

    async def in_force():
        return bot.config.for_channel(CHANNEL).limits.over(await bot.store.channel_limits("T0001", CHANNEL))

    assert ((await in_force()).month, (await in_force()).user) == (0.5, 1.0)
    policy.write_text(f"[defaults]\nlimit_month_usd = 0.05\nlimit_user_month_usd = 0.5\n\n{LEAD_POLICY}",
                      encoding="utf-8")  # the operator lowers both caps
    assert ((await in_force()).month, (await in_force()).user) == (0.05, 0.5)
    said = await limit_said(slack, thread, "/limit month 0.2", LEAD)
    assert said.startswith("Sorry") and "It stays at $0.05" in said, said
    # the operator's word is the channel's value, above the default or below the channel admin's cap
    said = await limit_said(slack, thread, "/limit month 3", OPS)
    assert said.endswith("set the limit of flower, this month to $3.00 in this channel."), said
    assert (await in_force()).month == 3.0


async def test_the_refusal_is_said_in_the_team_s_language(make_bot, slack_env, tmp_path):
    slack = slack_env
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "policy.toml").write_text(LEAD_POLICY, encoding="utf-8")
    await make_bot(FLOWER_ADMINS=OPS, FLOWER_LIMIT_USER_MONTH_USD="1", FLOWER_SLACK_LANGUAGE="zh")
    asked = slack.mention(CHANNEL, "/limit", user=LEAD)
    await slack.send_event(asked)
    said = await limit_said(slack, asked["ts"], "/limit user 500", LEAD)
    assert said.startswith(f"抱歉 <@{LEAD}>，`user` 上限计的是所有频道的花费") and "它仍是 $1.00" in said, said
    said = await limit_said(slack, asked["ts"], "/limit thread 5", LEAD)
    assert said.startswith(":white_check_mark:") and "$5.00" in said, said


@pytest.mark.parametrize("usd, in_force, ok", [
    (5.0, None, True), (None, None, True),  # no cap in force: any cap is a lowering
    (0.05, 0.10, True), (0.10, 0.10, True), (0.11, 0.10, False), (500.0, 10.0, False),
    (None, 10.0, False),  # off would bring back whatever is under it: maybe more
])
def test_a_channel_s_admin_may_only_lower_an_installation_wide_cap(usd, in_force, ok):
    assert lowers(usd, in_force) is ok


def test_the_installation_s_admins_are_flower_admins_and_the_policy_s_defaults_never_a_channel_s(tmp_path):
    path = tmp_path / "policy.toml"
    path.write_text(f'[defaults]\nadmins = ["U0CAROL"]\n\n{LEAD_POLICY}', encoding="utf-8")
    config = load_config({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "FLOWER_POLICY": str(path),
                          "FLOWER_ADMINS": "U0ALICE"}, dotenv=None)
    assert installation_admins(config) == {"U0ALICE", "U0CAROL"}
    for scope in INSTALLATION:
        assert limit_admins(config, CHANNEL, scope) == {"U0ALICE", "U0CAROL"}
    assert limit_admins(config, CHANNEL, "thread") == {"U0ALICE", "U0CAROL", LEAD}
    assert limit_admins(config, OTHER, "channel") == {"U0ALICE", "U0CAROL"}

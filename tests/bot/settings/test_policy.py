"""The per-channel policy file end to end (real slack-bolt against the fake Slack, the real CLI against
the offline model): a channel's own model, people and standing instructions reach what the models
are sent; an edit counts without a restart, a bad one is refused with its reason while the last
good policy stays in force; ``@flower /policy`` shows an admin the settings in effect."""

from __future__ import annotations

import logging
import os

import pytest

from bot.errors import ConfigError
from bot.settings.config import load_config
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE
from tests.bot.helpers.app import CHANNEL, CLARIFY_ONLY, answer_first_option, brief_only, posted, script

OTHER = "C0RANDOM"
POLICY = """
[defaults]
admins = ["U0CAROL"]
limit_request_usd = 5

[channel.C0RANDOM]
model = "claude-sonnet-4-5"
allowed_users = ["S0DEVS"]  # a user group: Bob and Carol
instructions = "Write every file name in lower case."
rounds = 2
"""


def _policy_file(tmp_path):
    """Where the bot of ``make_bot`` reads its policy: FLOWER_HOME/policy.toml."""
    home = tmp_path / "home"
    home.mkdir()
    return home / "policy.toml"


def _write(path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    st = os.stat(path) if path.exists() else None
    os.replace(tmp, path)
    if st is not None:  # a second edit within the clock's tick still reads as a change
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


async def _answered_run(slack, channel: str, ask: str, user: str) -> dict:
    """A run of ``script``: its question answered by a button, then done."""
    event = slack.mention(channel, ask, user=user)
    await slack.send_event(event)
    await answer_first_option(slack, event["ts"], user=user, channel=channel)
    await posted(slack, event["ts"], "Done: the goal is achieved")
    return event


async def _run(slack, channel: str, ask: str, user: str) -> str:
    event = slack.mention(channel, ask, user=user)
    await slack.send_event(event)
    await posted(slack, event["ts"], "Done")
    return event["ts"]


async def test_a_channel_s_model_people_and_instructions_reach_the_models(make_bot, slack_env, fake_model,
                                                                         tmp_path):
    slack = slack_env
    _write(_policy_file(tmp_path), POLICY)
    await make_bot(FLOWER_ALLOWED_USERS="U0ALICE,U0BOB,U0CAROL")
    script(fake_model)
    event = await _answered_run(slack, OTHER, "写个 hello.txt", "U0BOB")
    sent = fake_model.message_requests
    assert {r.body.get("model") for r in sent} == {"claude-sonnet-4-5"}  # every session, workers' too
    for role in (COORDINATOR, JUDGE):
        assert any("Write every file name in lower case." in r.system for r in sent if role(r.body)), role
    assert not any("lower case" in r.system for r in sent if CLARIFIER(r.body))

    # Alice may start runs in general, not in this channel (she is not in the group); elsewhere
    # the defaults apply
    refused = slack.mention(OTHER, "写个 bye.txt", user="U0ALICE")
    await slack.send_event(refused)
    await slack.wait_until(lambda: [e for e in slack.ephemerals if e["user"] == "U0ALICE"], what="the refusal")
    assert not slack.calls("chat.postMessage", thread_ts=refused["ts"])
    asked = len(sent)
    await _answered_run(slack, CHANNEL, "写个 hi.txt", "U0ALICE")
    assert {r.body.get("model") for r in fake_model.message_requests[asked:]} != {"claude-sonnet-4-5"}

    # /policy: the settings in effect, to an admin only
    thread = event["ts"]
    await slack.send_event(slack.mention(OTHER, "/policy", thread_ts=thread, user="U0CAROL"))
    await slack.wait_until(lambda: [e for e in slack.ephemerals if e["user"] == "U0CAROL"], what="/policy")
    shown = str([e for e in slack.ephemerals if e["user"] == "U0CAROL"][-1])
    for fact in ("claude-sonnet-4-5", "<!subteam^S0DEVS>", "`rounds`: 2", "lower case", "$5.00"):
        assert fact in shown, fact
    await slack.send_event(slack.mention(OTHER, "/policy", thread_ts=thread, user="U0BOB"))
    await slack.wait_until(lambda: [e for e in slack.ephemerals if e["user"] == "U0BOB"
                                    and "only admins" in e["text"]], what="the refusal")


async def test_an_edit_counts_without_a_restart_and_a_bad_one_keeps_the_last_good(make_bot, slack_env, fake_model,
                                                                                  tmp_path, caplog):
    slack = slack_env
    policy = _policy_file(tmp_path)
    _write(policy, '[channel.C0GENERAL]\nmodel = "claude-haiku-4-5"\n')
    await make_bot(CLARIFY_ONLY)
    brief_only(fake_model)
    await _run(slack, CHANNEL, "写个 a.txt", "U0ALICE")
    assert fake_model.message_requests[-1].body["model"] == "claude-haiku-4-5"

    _write(policy, '[channel.C0GENERAL]\nmodel = "claude-sonnet-4-5"\n')  # edited: no restart
    await _run(slack, CHANNEL, "写个 b.txt", "U0ALICE")
    assert fake_model.message_requests[-1].body["model"] == "claude-sonnet-4-5"

    caplog.set_level(logging.ERROR)
    _write(policy, '[channel.C0GENERAL]\nmodel = "claude-opus-4-5"\nrounds = "many"\n')  # a bad edit
    await _run(slack, CHANNEL, "写个 c.txt", "U0ALICE")
    assert fake_model.message_requests[-1].body["model"] == "claude-sonnet-4-5"  # the last good one
    said = [r.getMessage() for r in caplog.records if "policy in force stays" in r.getMessage()]
    assert len(said) == 1 and str(policy) in said[0] and "[channel.C0GENERAL]" in said[0] and "rounds" in said[0]


@pytest.mark.parametrize("text, why", [
    ("[channel.general]\nmodel = 'x'\n", r"\[channel.general\] is not a channel's table"),
    ("[defaults]\ncolour = 'red'\n", r"\[defaults\]: unknown key 'colour'"),
    ("[defaults]\nallowed_users = ['alice']\n", r"\[defaults\]: allowed_users must list Slack user ids"),
    ("[defaults]\nlimit_month_usd = -1\n", r"\[defaults\]: limit_month_usd must be an amount"),
    ("[defaults]\nagent_env = ['SLACK_BOT_TOKEN']\n", r"\[defaults\]: FLOWER_AGENT_ENV names SLACK_BOT_TOKEN"),
    ("[defaults\n", r"is not valid TOML"),
    ("[defaults]\npr_followup = true\n", r"\[defaults\]: pr_followup must be \"ask\" .* or \"auto\""),
    ("[defaults]\npr_allowed_users = ['octo cat']\n", r"\[defaults\]: pr_allowed_users must be a list of forge logins"),
])
def test_a_bad_policy_stops_the_bot_at_start_naming_the_file_the_table_and_the_fix(tmp_path, text, why):
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=why) as caught:
        load_config({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "FLOWER_POLICY": str(path)},
                    dotenv=None)
    assert str(path) in str(caught.value)


def test_pr_followup_asks_by_default_and_forge_logins_are_compared_without_case(tmp_path):
    path = tmp_path / "policy.toml"
    path.write_text('[channel.C0GENERAL]\npr_followup = "auto"\npr_allowed_users = ["OctoCat", "bot-2"]\n')
    config = load_config({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "FLOWER_POLICY": str(path)},
                         dotenv=None)
    general = config.for_channel("C0GENERAL")
    assert general.pr_followup == "auto" and general.pr_allowed_users == {"octocat", "bot-2"}
    assert config.for_channel("C0RANDOM").pr_followup == "ask" and not config.for_channel("C0RANDOM").pr_allowed_users


def test_a_channel_s_sandbox_hosts_replace_the_installation_s(tmp_path):
    path = tmp_path / "policy.toml"
    path.write_text('[channel.C0GENERAL]\nsandbox_domains = "none"\n[channel.C0RANDOM]\nsandbox_domains = "pypi.org"\n')
    config = load_config({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "FLOWER_POLICY": str(path),
                          "FLOWER_SANDBOX_DOMAINS": "github.com"}, dotenv=None)
    assert config.for_channel("C0GENERAL").sandbox_domains == ()  # no network for that channel's commands
    assert config.for_channel("C0RANDOM").sandbox_domains == ("pypi.org",)
    assert config.for_channel("C0OTHER").sandbox_domains == ("github.com",)

"""A run's CLI gets an environment built from an allow-list: the bot's tokens never reach it."""

from __future__ import annotations

import pytest

from bot.agent_env import AgentEnvError, agent_env, extra_names
from bot.config import ConfigError, load_config
from engine.testing import prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE, WORKER
from tests.bot.test_faults import ACHIEVED, BRIEF, GOAL, FAST_BOT, posted, start_thread

BOT = "xoxb-1-abc"
APP = "xapp-1-abc"


def test_only_the_allow_list_and_the_named_extras_go_through():
    env = {"PATH": "/bin", "HOME": "/h", "LANG": "C.UTF-8", "ANTHROPIC_API_KEY": "sk-ant-x",
           "ANTHROPIC_BASE_URL": "http://m", "CLAUDE_CODE_MAX_RETRIES": "0", "SLACK_BOT_TOKEN": BOT,
           "SLACK_APP_TOKEN": APP, "SLACK_SIGNING_SECRET": "s", "FLOWER_HOME": "/srv", "GITHUB_TOKEN": "ghp_x",
           "AWS_SECRET_ACCESS_KEY": "aws", "DATABASE_URL": "postgres://", "MY_TOOL_HOME": "/opt/t"}
    built = agent_env(env, ("MY_TOOL_HOME",))
    assert built == {"PATH": "/bin", "HOME": "/h", "LANG": "C.UTF-8", "ANTHROPIC_API_KEY": "sk-ant-x",
                     "ANTHROPIC_BASE_URL": "http://m", "CLAUDE_CODE_MAX_RETRIES": "0", "MY_TOOL_HOME": "/opt/t"}


def test_a_chosen_cloud_provider_brings_its_credentials():
    env = {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "eu-west-1", "AWS_SECRET_ACCESS_KEY": "aws",
           "GOOGLE_APPLICATION_CREDENTIALS": "/k.json"}
    assert agent_env(env) == {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "eu-west-1",
                              "AWS_SECRET_ACCESS_KEY": "aws"}


@pytest.mark.parametrize("raw, why", [("SLACK_BOT_TOKEN", "never gets"), ("FOO,FLOWER_HOME", "never gets"),
                                      ("FOO=bar", "names only"), ("GITHUB_TOKEN", "never gets")])
def test_flower_agent_env_refuses_the_bots_secrets_and_values(raw, why):
    with pytest.raises(AgentEnvError, match=why):
        extra_names(raw)
    with pytest.raises(ConfigError, match="FLOWER_AGENT_ENV"):
        load_config({"SLACK_BOT_TOKEN": BOT, "SLACK_APP_TOKEN": APP, "FLOWER_AGENT_ENV": raw})


def test_the_config_shows_the_agents_variable_names_never_their_values():
    cfg = load_config({"SLACK_BOT_TOKEN": BOT, "SLACK_APP_TOKEN": APP, "ANTHROPIC_API_KEY": "sk-ant-secret"})
    assert "ANTHROPIC_API_KEY" in repr(cfg) and "sk-ant-secret" not in repr(cfg)


async def test_a_workers_commands_see_no_slack_token(make_bot, slack_env, fake_model, monkeypatch, tmp_path):
    slack = slack_env
    monkeypatch.setenv("FLOWER_TEST_NOT_LISTED", "never-seen")
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(tool_use("Bash", {"command": "env > seen-env.txt"}), text("printed"), when=WORKER)
    fake_model.rule(tool_use("Agent", {"subagent_type": "coder", "description": "print env",
                                       "prompt": "Run env > seen-env.txt."}),
                    text("round 1 done"), when=COORDINATOR, repeat_last=True)
    bot = await make_bot(FAST_BOT)
    thread = await start_thread(slack)
    await posted(slack, thread, "Done: the goal is achieved")
    [seen_file] = (tmp_path / "home" / "workspaces").glob("*/seen-env.txt")
    seen = seen_file.read_text()
    names = {line.split("=", 1)[0] for line in seen.splitlines() if "=" in line}
    assert names and not [n for n in names if n.startswith(("SLACK_", "FLOWER_"))]
    for secret in (bot.config.bot_token, bot.config.app_token, "never-seen"):
        assert secret not in seen

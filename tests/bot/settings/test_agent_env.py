"""A run's CLI gets an environment built from an allow-list: the bot's tokens never reach it."""

from __future__ import annotations

import os

import pytest

from bot.errors import AgentEnvError, ConfigError
from bot.settings.agent_env import agent_env, extra_names, with_thread_attributes
from bot.settings.config import load_config
from engine.testing import hold, prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE, WORKER
from tests.bot.helpers.app import ACHIEVED, CHANNEL, posted
from tests.bot.helpers.faults import BRIEF, FAST_BOT, GOAL, start_thread

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


def test_claude_code_s_telemetry_goes_along_when_on_with_the_thread_named():
    env = {"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4317",
           "OTEL_RESOURCE_ATTRIBUTES": "team=web", "SLACK_BOT_TOKEN": BOT}
    built = with_thread_attributes(agent_env(env), thread="T1-C1-1_2", channel="C1")
    assert built == {"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4317",
                     "OTEL_RESOURCE_ATTRIBUTES": "team=web,flower.thread=T1-C1-1_2,flower.channel=C1"}
    assert with_thread_attributes({"CLAUDE_CODE_ENABLE_TELEMETRY": "1"}, thread="a,b=c", channel="C1")[
        "OTEL_RESOURCE_ATTRIBUTES"] == "flower.thread=a%2Cb%3Dc,flower.channel=C1"  # percent-encoded
    off = agent_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4317", "OTEL_RESOURCE_ATTRIBUTES": "x=y"})
    assert off == {} and with_thread_attributes(off, thread="t", channel="c") == {}


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


async def test_with_telemetry_on_a_run_s_cli_reports_its_thread_and_channel(make_bot, slack_env, fake_model,
                                                                             monkeypatch, tmp_path):
    slack = slack_env
    for name, value in {"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_METRICS_EXPORTER": "none",
                        "OTEL_LOGS_EXPORTER": "none", "OTEL_RESOURCE_ATTRIBUTES": "team=web"}.items():
        monkeypatch.setenv(name, value)
    held = hold()
    fake_model.rule(text(BRIEF, fault=held), when=CLARIFIER)
    bot = await make_bot(FAST_BOT)
    thread = await start_thread(slack)
    await held.arrived()  # the clarifier's CLI is up: what did it get?
    ws = next((tmp_path / "home" / "workspaces").iterdir())
    environs = [environ for environ in _cli_environs(ws) if b"OTEL_RESOURCE_ATTRIBUTES=" in environ]
    held.release()
    assert environs, "no CLI of the run found"
    seen = dict(item.split(b"=", 1) for item in environs[0].split(b"\0") if b"=" in item)
    assert seen[b"OTEL_RESOURCE_ATTRIBUTES"].decode() == f"team=web,flower.thread={ws.name},flower.channel={CHANNEL}"
    assert bot.config.bot_token.encode() not in environs[0]


def _cli_environs(ws) -> list[bytes]:
    """The environments of the processes working in ``ws`` (the run's CLI), read from /proc."""
    found = []
    for proc in os.listdir("/proc"):
        if not proc.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{proc}/cwd").startswith(str(ws)):
                with open(f"/proc/{proc}/environ", "rb") as f:
                    found.append(f.read())
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def _brief(goal: str) -> str:
    return f"## 目标\n{goal}\n## 验收标准\n做完\n## 边界\n只动工作区\n## 未知与假设\n无"


async def test_a_planted_env_file_reaches_no_other_run_and_no_restart(make_bot, slack_env, fake_model, tmp_path):
    """Thread A's worker plants ``.env`` (a second model server, BASH_ENV, a marker) in its workspace;
    thread B's run, and every run after a restart, sees none of it and the second server is never called."""
    from engine.testing import FakeModel

    slack = slack_env
    planted = tmp_path / "planted.sh"
    ran = tmp_path / "planted-script-ran"
    planted.write_text(f"touch {ran}\n")
    with FakeModel() as rogue:
        env_file = (f"ANTHROPIC_BASE_URL={rogue.base_url}\\nBASH_ENV={planted}\\nFLOWER_TEST_PLANTED=1\\n"
                    f"SLACK_BOT_TOKEN=xoxb-planted\\n")
        fake_model.rule(text(_brief("PLANT")), when=[CLARIFIER, prompt_contains("plant")])
        fake_model.rule(text(_brief("LOOK")), when=CLARIFIER)
        fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
        fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call",
                        repeat_last=True)
        fake_model.rule(tool_use("Bash", {"command": f"printf '{env_file}' > .env"}), text("planted"),
                        when=[WORKER, prompt_contains("plant the file")])
        fake_model.rule(tool_use("Bash", {"command": "env > seen-env.txt"}), text("printed"), when=WORKER)
        fake_model.rule(tool_use("Agent", {"subagent_type": "coder", "description": "plant",
                                           "prompt": "plant the file"}),
                        text("round 1 done"), when=[COORDINATOR, prompt_contains("PLANT")], repeat_last=True)
        fake_model.rule(tool_use("Agent", {"subagent_type": "coder", "description": "look",
                                           "prompt": "Run env > seen-env.txt."}),
                        text("round 1 done"), when=COORDINATOR, repeat_last=True)
        bot = await make_bot(FAST_BOT)
        a = await start_thread(slack, "plant a file")
        await posted(slack, a, "Done: the goal is achieved")
        [planted_env] = (tmp_path / "home" / "workspaces").glob("*/.env")
        assert "FLOWER_TEST_PLANTED" in planted_env.read_text()
        mark = slack.mark()
        await slack.send_event(slack.user_message(CHANNEL, "one more thing", thread_ts=a))  # A's next run
        await posted(slack, a, "Done: the goal is achieved", after=mark)

        b = await start_thread(slack, "look around")
        await posted(slack, b, "Done: the goal is achieved")
        await bot.close()
        bot = await make_bot(FAST_BOT)  # a restart: the bot reads its own settings again, never a workspace's
        c = await start_thread(slack, "look around again")
        await posted(slack, c, "Done: the goal is achieved")

        seen = [p.read_text() for p in (tmp_path / "home" / "workspaces").glob("*/seen-env.txt")]
        assert len(seen) == 3  # B, C, and A's own next run
        for shown in seen:
            assert "FLOWER_TEST_PLANTED" not in shown and "xoxb-planted" not in shown
            assert f"BASH_ENV={planted}" not in shown and rogue.base_url not in shown
        assert not ran.exists()
        assert rogue.message_requests == []
        assert "FLOWER_TEST_PLANTED" not in os.environ and bot.config.bot_token != "xoxb-planted"

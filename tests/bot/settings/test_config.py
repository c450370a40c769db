"""load_config: every setting read, defaulted, normalized or refused with one line that says the fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.errors import ConfigError
from bot.settings.config import AUTO, Config, load_config, mask
from engine._errors import FlowerError

BOT = "xoxb-1111-2222-abcdefSECRETbot"
APP = "xapp-1-A0-3333-SECRETappTOKEN"
SIGNING = "8f14e45fceea167aSECRETsigning9f"
BASE = {"SLACK_BOT_TOKEN": BOT, "SLACK_APP_TOKEN": APP}


def load(**env: str) -> Config:
    return load_config({**BASE, **env}, dotenv=None)


def test_defaults() -> None:
    cfg = load_config(dict(BASE), dotenv=None)
    assert cfg.bot_token == BOT and cfg.app_token == APP and cfg.signing_secret == ""
    assert cfg.mode == "socket"
    assert cfg.port == 3000
    assert cfg.api_url == "https://slack.com/api/"
    assert cfg.home == Path("~/.flower").expanduser() and cfg.home.is_absolute()
    assert cfg.db_path == cfg.home / "bot.db"
    assert cfg.allowed_users == cfg.allowed_channels == cfg.admins == frozenset()
    assert cfg.max_runs == 2
    assert cfg.question_wait_s == 1800.0
    assert cfg.user_allowed("U0ANYONE") and cfg.channel_allowed("C0ANY")


@pytest.mark.parametrize(
    ("env", "attr", "expected"),
    [
        ({"PORT": "8080"}, "port", 8080),
        ({"PORT": "0"}, "port", 0),
        ({"PORT": " 65535 "}, "port", 65535),
        ({"SLACK_API_URL": "http://127.0.0.1:9999/api"}, "api_url", "http://127.0.0.1:9999/api/"),
        ({"SLACK_API_URL": "https://proxy.example/slack/api/"}, "api_url", "https://proxy.example/slack/api/"),
        ({"FLOWER_MAX_RUNS": "1"}, "max_runs", 1),
        ({"FLOWER_MAX_RUNS": "12"}, "max_runs", 12),
        ({"FLOWER_ALLOWED_USERS": "U0ALICE, W0BOB  U0CAROL"}, "allowed_users", {"U0ALICE", "W0BOB", "U0CAROL"}),
        ({"FLOWER_ALLOWED_USERS": ",,"}, "allowed_users", frozenset()),
        ({"FLOWER_ALLOWED_USERS": ""}, "allowed_users", frozenset()),
        ({"FLOWER_ALLOWED_CHANNELS": "C0GENERAL,G0PRIV\nD0DM"}, "allowed_channels", {"C0GENERAL", "G0PRIV", "D0DM"}),
        ({"FLOWER_ADMINS": "U0ALICE"}, "admins", {"U0ALICE"}),
        ({"FLOWER_QUESTION_WAIT_S": "7200"}, "question_wait_s", 7200.0),
        ({"FLOWER_QUESTION_WAIT_S": "0"}, "question_wait_s", 0.0),
        ({"SLACK_APP_TOKEN": "", "SLACK_SIGNING_SECRET": SIGNING}, "mode", "http"),
        ({"SLACK_SIGNING_SECRET": SIGNING}, "mode", "socket"),  # both: Socket Mode wins
        ({"SLACK_BOT_TOKEN": f"  {BOT}\n"}, "bot_token", BOT),  # a pasted newline is forgiven
        ({}, "slack_language", "en"),
        ({"FLOWER_LANGUAGE": "zh"}, "slack_language", "zh"),  # unset: the bot's sentences follow FLOWER_LANGUAGE
        ({"FLOWER_LANGUAGE": "zh", "FLOWER_SLACK_LANGUAGE": ""}, "slack_language", "zh"),
        ({"FLOWER_LANGUAGE": "zh", "FLOWER_SLACK_LANGUAGE": "en"}, "slack_language", "en"),
        ({"FLOWER_LANGUAGE": "zh", "FLOWER_SLACK_LANGUAGE": "en"}, "language", "zh"),  # the models keep theirs
        ({"FLOWER_SLACK_LANGUAGE": "zh-CN"}, "slack_language", "zh"),
        ({}, "metrics_host", "127.0.0.1"),  # the operator's endpoint is this machine's unless told otherwise
        ({"FLOWER_METRICS_HOST": "0.0.0.0"}, "metrics_host", "0.0.0.0"),
        ({"FLOWER_METRICS_HOST": "::1"}, "metrics_host", "::1"),
        ({"FLOWER_METRICS_HOST": "localhost"}, "metrics_host", "localhost"),
        ({}, "metrics_token", ""),
        ({"FLOWER_SANDBOX_DOMAINS": "none"}, "sandbox_domains", ()),  # read under its documented name
        ({"FLOWER_SANDBOX_DOMAINS": "pypi.org, *.example.com"}, "sandbox_domains", ("pypi.org", "*.example.com")),
    ],
)
def test_values(env: dict, attr: str, expected: object) -> None:
    assert getattr(load(**env), attr) == expected


def test_home_is_expanded_and_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load(FLOWER_HOME="rel/home").home == tmp_path / "rel/home"
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert load(FLOWER_HOME="~/fl").home == tmp_path / "h/fl"


def test_allow_lists() -> None:
    cfg = load(FLOWER_ALLOWED_USERS="U0ALICE", FLOWER_ALLOWED_CHANNELS="C0GENERAL")
    assert cfg.user_allowed("U0ALICE") and not cfg.user_allowed("U0BOB")
    assert cfg.channel_allowed("C0GENERAL") and not cfg.channel_allowed("C0RANDOM")


# (env overrides, the variable named, words the fix must contain, the value as shown)
ERRORS = [
    ({"SLACK_BOT_TOKEN": ""}, "SLACK_BOT_TOKEN is not set", "OAuth & Permissions", None),
    ({"SLACK_BOT_TOKEN": "xoxp-1234567890abcdef"}, "SLACK_BOT_TOKEN must start with xoxb-", "Bot User OAuth Token",
     "'xoxp-12…'"),
    ({"SLACK_APP_TOKEN": "xoxb-1234567890abcdef"}, "SLACK_APP_TOKEN must start with xapp-", "connections:write",
     "'xoxb-12…'"),
    ({"SLACK_APP_TOKEN": "xapp-12 34567890"}, "SLACK_APP_TOKEN contains whitespace", "one line", "'xapp-12…'"),
    ({"SLACK_APP_TOKEN": ""}, "SLACK_APP_TOKEN is not set, and neither is SLACK_SIGNING_SECRET", "PORT", None),
    ({"SLACK_APP_TOKEN": "", "SLACK_SIGNING_SECRET": "xoxb-1234567890abcdef"}, "SLACK_SIGNING_SECRET does not look",
     "App Credentials", "'xoxb-12…'"),
    ({"PORT": "http"}, "PORT must be a whole number from 0 to 65535", "default 3000", "'http'"),
    ({"PORT": "70000"}, "PORT must be a whole number", "listens", "'70000'"),
    ({"PORT": "-1"}, "PORT must be a whole number", "listens", "'-1'"),
    ({"FLOWER_MAX_RUNS": "0"}, "FLOWER_MAX_RUNS must be a whole number of at least 1", "default 2", "'0'"),
    ({"FLOWER_MAX_RUNS": "2.5"}, "FLOWER_MAX_RUNS must be a whole number", "at once", "'2.5'"),
    ({"SLACK_API_URL": "slack.com/api"}, "SLACK_API_URL must be an http(s) URL", "https://slack.com/api/",
     "'slack.com/api'"),
    ({"SLACK_API_URL": "ftp://x/api/"}, "SLACK_API_URL must be an http(s) URL", "proxy", "'ftp://x/api/'"),
    ({"SLACK_API_URL": "https:///api/"}, "SLACK_API_URL must be an http(s) URL", "proxy", "'https:///api/'"),
    ({"FLOWER_ALLOWED_USERS": "U0ALICE,@bob"}, "FLOWER_ALLOWED_USERS must list Slack user ids", "Copy member ID",
     "'@bob'"),
    ({"FLOWER_ALLOWED_USERS": "u0alice"}, "FLOWER_ALLOWED_USERS must list Slack user ids", "allow everyone",
     "'u0alice'"),
    ({"FLOWER_ALLOWED_CHANNELS": "#general"}, "FLOWER_ALLOWED_CHANNELS must list Slack channel ids",
     "Channel ID", "'#general'"),
    ({"FLOWER_ALLOWED_CHANNELS": "U0ALICE"}, "FLOWER_ALLOWED_CHANNELS must list", "C…, G… or D…", "'U0ALICE'"),
    ({"FLOWER_ADMINS": "alice"}, "FLOWER_ADMINS must list Slack user ids", "have no admins", "'alice'"),
    ({"FLOWER_QUESTION_WAIT_S": "30m"}, "FLOWER_QUESTION_WAIT_S must be a number of seconds", "default 1800",
     "'30m'"),
    ({"FLOWER_SLACK_LANGUAGE": "fr"}, "FLOWER_SLACK_LANGUAGE must be one of en, zh",
     "Set FLOWER_SLACK_LANGUAGE=en for English or FLOWER_SLACK_LANGUAGE=zh for Chinese. Or leave it unset", "'fr'"),
    ({"FLOWER_LANGUAGE": "fr"}, "FLOWER_LANGUAGE must be one of en, zh", "FLOWER_LANGUAGE=zh", "'fr'"),
    ({"FLOWER_PR_POLL_S": "0"}, "FLOWER_PR_POLL_S must be a number of seconds, more than 0", "default 60", "'0'"),
    ({"FLOWER_PR_BATCH_S": "soon"}, "FLOWER_PR_BATCH_S must be a number of seconds, 0 or more", "default 120",
     "'soon'"),
    ({"GITHUB_WEBHOOK_SECRET": "two words"}, "GITHUB_WEBHOOK_SECRET contains whitespace", "one line", None),
    ({"FLOWER_METRICS_HOST": "every interface"}, "FLOWER_METRICS_HOST must be an IP address to listen on",
     "Leave it unset for 127.0.0.1 (this machine only), or set 0.0.0.0", "'every interface'"),
    ({"FLOWER_METRICS_HOST": "http://0.0.0.0:9100"}, "FLOWER_METRICS_HOST must be an IP address",
     "FLOWER_METRICS_TOKEN", "'http://0.0.0.0:9100'"),
    ({"FLOWER_METRICS_TOKEN": "1234567890abcdef two"}, "FLOWER_METRICS_TOKEN must be at least 16 printable ASCII",
     "secrets.token_urlsafe", "'1234…'"),
    ({"FLOWER_SANDBOX_DOMAINS": "https://pypi.org"}, "FLOWER_SANDBOX_DOMAINS must list host names",
     "without scheme, port or path", "'https://pypi.org'"),
    ({"FLOWER_METRICS_TOKEN": "SECRETshort"}, "FLOWER_METRICS_TOKEN must be at least 16", "token_urlsafe", "'…'"),
]


@pytest.mark.parametrize(("env", "starts", "fix", "shown"), ERRORS)
def test_errors_name_variable_value_and_fix(env: dict, starts: str, fix: str, shown: str | None) -> None:
    with pytest.raises(ConfigError) as info:
        load(**env)
    message = str(info.value)
    assert isinstance(info.value, FlowerError)
    assert message.startswith(starts)
    assert fix in message
    assert "\n" not in message
    if shown is not None:
        assert f"got {shown}" in message
    for secret in (BOT, APP, SIGNING, "1234567890abcdef"):
        assert secret not in message


def test_home_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match=r"^FLOWER_HOME must be a folder; got .*/f', which is a file"):
        load(FLOWER_HOME=str(tmp_path / "f"))


@pytest.mark.parametrize(
    ("secret", "shown"),
    [
        ("xoxb-1234567890", "'xoxb-12…'"),
        ("xoxb-test", "'xoxb-…'"),  # too short to show any of it
        ("xapp-1-A0-3333", "'xapp-1-…'"),
        ("8f14e45fceea167a9f", "'8f14…'"),
        ("short", "'…'"),
        ("", "'…'"),
    ],
)
def test_mask(secret: str, shown: str) -> None:
    assert mask(secret) == shown


def test_repr_masks_secrets() -> None:
    cfg = load(SLACK_SIGNING_SECRET=SIGNING, FLOWER_ALLOWED_USERS="U0B U0A")
    for text in (repr(cfg), str(cfg), f"{cfg}"):
        assert BOT not in text and APP not in text and SIGNING not in text
        assert "bot_token='xoxb-11…'" in text and "app_token='xapp-1-…'" in text
        assert "signing_secret='8f14…'" in text
        assert "allowed_users=['U0A', 'U0B']" in text and "port=3000" in text


def test_the_metrics_token_is_masked_and_never_reaches_a_run() -> None:
    token = "SECRETmetrics-0123456789abcdef"
    cfg = load(FLOWER_METRICS_TOKEN=token, FLOWER_METRICS_HOST="0.0.0.0", FLOWER_AGENT_ENV="EXTRA")
    assert cfg.metrics_token == token
    assert token not in repr(cfg) and "metrics_token='SECR…'" in repr(cfg)
    assert "FLOWER_METRICS_TOKEN" not in cfg.agent_env  # what a run's CLI is given
    with pytest.raises(ConfigError, match="FLOWER_AGENT_ENV names FLOWER_METRICS_TOKEN, which a run never gets"):
        load(FLOWER_METRICS_TOKEN=token, FLOWER_AGENT_ENV="FLOWER_METRICS_TOKEN")


def test_mode_without_any_transport_raises() -> None:
    cfg = Config(bot_token=BOT)
    with pytest.raises(ConfigError, match="SLACK_APP_TOKEN is not set"):
        _ = cfg.mode


def test_config_is_frozen() -> None:
    cfg = load()
    with pytest.raises(AttributeError):
        cfg.port = 1  # type: ignore[misc]


def test_dotenv_fills_in_and_environment_wins(tmp_path: Path) -> None:
    env_file = tmp_path / "settings.env"
    env_file.write_text(
        f"SLACK_BOT_TOKEN={BOT}\nSLACK_APP_TOKEN='{APP}'\nFLOWER_MAX_RUNS=5\nPORT=4000\nFLOWER_HOME\n"
    )
    cfg = load_config({"PORT": "5000"}, dotenv=env_file)
    assert (cfg.bot_token, cfg.app_token, cfg.max_runs, cfg.port) == (BOT, APP, 5, 5000)
    assert cfg.home == Path("~/.flower").expanduser()  # a bare name in .env counts as unset


def test_explicit_dotenv_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^the settings file .*missing\.env' does not exist"):
        load_config(dict(BASE), dotenv=tmp_path / "missing.env")


def test_auto_dotenv_reads_cwd_only_for_the_process_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(f"SLACK_BOT_TOKEN={BOT}\nSLACK_APP_TOKEN={APP}\nFLOWER_MAX_RUNS=7\n")
    monkeypatch.setenv("FLOWER_MAX_RUNS", "3")
    cfg = load_config()  # os.environ + ./.env
    assert cfg.bot_token == BOT and cfg.max_runs == 3
    assert os.environ.get("SLACK_BOT_TOKEN") is None  # reading never exports
    # An explicit mapping sees only itself, even with a .env in the folder.
    with pytest.raises(ConfigError, match="SLACK_BOT_TOKEN is not set"):
        load_config({})
    assert load_config({}, dotenv=AUTO.resolve()).max_runs == 7  # unless asked for


def test_no_dotenv_in_cwd_is_fine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name, value in BASE.items():
        monkeypatch.setenv(name, value)
    assert load_config().app_token == APP


# -- FLOWER_DATABASE_URL ---------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["postgresql://flower:pw@db.internal:5432/flower", "postgres://db/flower",
                                 "postgresql://flower@/flower?host=/run/postgresql"])
def test_database_url_is_taken_and_its_password_never_shown(url: str) -> None:
    assert load().database_url is None and load(FLOWER_DATABASE_URL="  ").database_url is None  # unset: bot.db
    cfg = load(FLOWER_DATABASE_URL=url)
    assert cfg.database_url == url
    assert ":pw@" not in repr(cfg) and ("flower:***@db.internal" in repr(cfg) or ":pw" not in url)


@pytest.mark.parametrize("url", ["mysql://flower:s3cret@db/flower", "sqlite:///var/lib/flower/bot.db", "db.internal"])
def test_a_database_url_that_is_not_postgresql_names_the_variable_hides_the_password_and_says_the_fix(url: str) -> None:
    with pytest.raises(ConfigError, match=r"^FLOWER_DATABASE_URL must be a postgresql:// URL; got '.*'\. Set it to "
                                          r"postgresql://user:password@host:5432/database, or leave it unset") as caught:
        load(FLOWER_DATABASE_URL=url)
    assert "s3cret" not in str(caught.value)
    if "s3cret" in url:
        assert "flower:***@db" in str(caught.value)


def test_a_database_url_without_the_driver_installed_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setattr("bot.settings.config.find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=r"^FLOWER_DATABASE_URL is set, but the PostgreSQL driver \(asyncpg\) is not "
                                          r"installed\. Run: pip install 'flower\[postgres\]'"):
        load(FLOWER_DATABASE_URL="postgresql://db/flower")

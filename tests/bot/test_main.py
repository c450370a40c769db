"""The flower-bot command: a bad setting is one line on stderr and exit code 2."""

from __future__ import annotations

from bot.main import EXIT_CONFIG, main


def test_missing_token_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no .env here
    assert main([]) == EXIT_CONFIG
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "SLACK_BOT_TOKEN" in err


def test_neither_app_token_nor_signing_secret(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    assert main([]) == EXIT_CONFIG
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "SLACK_APP_TOKEN" in err


def test_no_allow_list_refuses_to_start_unless_everyone_is_allowed_on_purpose(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1")
    for name in ("FLOWER_ALLOWED_USERS", "FLOWER_ALLOWED_CHANNELS", "FLOWER_ALLOW_EVERYONE"):
        monkeypatch.delenv(name, raising=False)
    assert main([]) == EXIT_CONFIG
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert all(name in err for name in ("FLOWER_ALLOWED_USERS", "FLOWER_ALLOWED_CHANNELS", "FLOWER_ALLOW_EVERYONE=1"))
    monkeypatch.setenv("FLOWER_ALLOW_EVERYONE", "yes")
    assert main([]) == EXIT_CONFIG
    assert "FLOWER_ALLOW_EVERYONE must be 1 or 0; got 'yes'" in capsys.readouterr().err

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

"""Shared test setup: a clean environment per test and the offline model fixtures."""

from __future__ import annotations

import os
import signal

import pytest

from bot.render import texts

pytest_plugins = ["engine.testing.pytest_plugin", "bot.testing.pytest_plugin"]

# The helper modules hold checks that test modules share (a test module imports no other): their
# asserts are rewritten as a test module's are, so a failing one shows its values.
pytest.register_assert_rewrite("tests.helpers", "tests.bot.helpers")

_LEAKY_PREFIXES = ("SLACK_", "ANTHROPIC_", "CLAUDE", "FLOWER_")

# A suite started in the background of a script inherits SIGINT ignored (POSIX shells do that to
# background jobs without job control), and every child would keep ignoring it: the tests that
# press Ctrl-C or stop the bot with SIGINT would hang. Caught here, it is default again in children.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    """Nothing from the developer's shell (tokens, base URLs, CLAUDE* settings) reaches a test."""
    for name in list(os.environ):
        if name.startswith(_LEAKY_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    # The suite was written against the spec's Chinese texts; English runs set FLOWER_LANGUAGE=en.
    monkeypatch.setenv("FLOWER_LANGUAGE", "zh")
    # ...and asserts the bot's own Slack sentences in English: tests of the Chinese bot unset this.
    monkeypatch.setenv("FLOWER_SLACK_LANGUAGE", "en")
    texts.use("en")  # a bot started by an earlier test in this process may have switched the table

"""pytest fixtures for the fake Slack: add "bot.testing.pytest_plugin" to `pytest_plugins`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from bot.testing.fake_slack import FakeSlack


@pytest_asyncio.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    """A started FakeSlack with the default workspace (team T0001, bot U0BOT/B0BOT); closed after the test."""
    async with FakeSlack() as slack:
        yield slack


@pytest.fixture
def slack_env(fake_slack: FakeSlack, monkeypatch: pytest.MonkeyPatch) -> FakeSlack:
    """The fake Slack, with SLACK_BOT_TOKEN, SLACK_APP_TOKEN and SLACK_API_URL set to reach it."""
    for name, value in fake_slack.env().items():
        monkeypatch.setenv(name, value)
    return fake_slack

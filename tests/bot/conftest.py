"""Fixtures the bot's tests share: a bot started (again) on one FLOWER_HOME, the bot as a real
process, git repositories with a test identity, and the bot store on either backend. What the
tests share besides fixtures is in tests/bot/helpers/."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio

from bot.main import start_bot
from bot.settings.config import load_config
from tests.bot.helpers.app import OPTIONS
from tests.bot.helpers.process import BotProcess, bot_env
from tests.bot.helpers.store import Backend


def pytest_generate_tests(metafunc):
    if "make_bot" in metafunc.fixturenames and metafunc.definition.get_closest_marker("both_backends"):
        metafunc.parametrize("bot_backend", ["sqlite", "postgres"], indirect=True)


@pytest.fixture
def bot_backend(request) -> str:
    """Where ``make_bot``'s bots keep their state: "sqlite" (bot.db, the default) or "postgres"."""
    return getattr(request, "param", "sqlite")


@pytest_asyncio.fixture
async def make_bot(slack_env, fake_model, tmp_path, monkeypatch, bot_backend, request):
    """Start a bot (again) on the same FLOWER_HOME: ``await make_bot(options, **env)``. In a test
    marked ``both_backends`` it runs once on bot.db and once on a fresh PostgreSQL database."""
    monkeypatch.setenv("FLOWER_HOME", str(tmp_path / "home"))
    if bot_backend == "postgres":
        monkeypatch.setenv("FLOWER_DATABASE_URL", request.getfixturevalue("postgres_url"))
    started = []

    async def make(options=OPTIONS, **env):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        running = await start_bot(load_config(dotenv=None), options=options)
        started.append(running)
        await slack_env.wait_connected(len(started))
        return running

    yield make
    for running in started:
        await running.close()
    if bot_backend == "postgres":  # with a database URL no SQLite file is ever opened under FLOWER_HOME
        assert sorted((tmp_path / "home").rglob("*.db")) == []


@pytest.fixture
def git_identity(monkeypatch, tmp_path):
    """Test repos need a committer; nothing from the developer's git config may leak in."""
    cfg = tmp_path / "gitconfig"
    cfg.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "test@example.com")


@pytest.fixture
def bot_process(slack_env, fake_model, tmp_path):
    """``python -m bot`` on this test's FLOWER_HOME, killed (and its logs printed) at teardown."""
    bot = BotProcess(tmp_path, bot_env(slack_env, fake_model, tmp_path))
    yield bot
    bot.kill()
    print(bot.logs())


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """The bot store's state for a store test, once on SQLite (``tmp_path/home/bot.db``) and once on
    a fresh PostgreSQL database; ``@sqlite_only`` (tests/bot/helpers/store.py) keeps the first."""
    if request.param == "sqlite":
        return Backend("sqlite", tmp_path / "home" / "bot.db")
    return Backend("postgres", request.getfixturevalue("postgres_url"))

"""pytest fixtures for the offline model (``fake_model``, ``fake_model_env``) and a throwaway
PostgreSQL (``postgres_server``, ``postgres_url``).

Load with ``pytest_plugins = ["engine.testing.pytest_plugin"]`` in a conftest.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.testing.fake_model import FakeModel
from engine.testing.postgres import PostgresServer


@pytest.fixture
def fake_model(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModel]:
    """A started ``FakeModel`` with the offline environment applied to ``os.environ``.

    The environment (``fake_model.env``, see ``offline_env``) is set in this process with
    monkeypatch, because the engine's Runtime reads credentials from the environment and the
    SDK's transcript mirror reads ``CLAUDE_CONFIG_DIR`` here. Each test gets its own config dir.
    """
    config_dir = tmp_path_factory.mktemp("claude-config")
    with FakeModel() as fm:
        for name, value in fm.offline_env(config_dir).items():
            monkeypatch.setenv(name, value)
        yield fm


@pytest.fixture
def fake_model_env(fake_model: FakeModel) -> dict[str, str]:
    """The offline environment for ``ClaudeAgentOptions(env=...)`` (already in ``os.environ``)."""
    return dict(fake_model.env)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One started ``PostgresServer`` per test process (so one per xdist worker), deleted at the end.

    Fails (never skips) when PostgreSQL is not installed, with the command that installs it.
    """
    with PostgresServer() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of a fresh, empty database for this test alone, dropped afterwards."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)

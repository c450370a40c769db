"""pytest fixtures for the offline model: ``fake_model`` and ``fake_model_env``.

Load with ``pytest_plugins = ["engine.testing.pytest_plugin"]`` in a conftest.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.testing.fake_model import FakeModel


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

"""The ``backend`` fixture: a test that takes it runs once on SQLite and once on PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.stores.backends import Backend


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "sqlite":
        return Backend("sqlite", tmp_path / "sessions.db")
    return Backend("postgres", request.getfixturevalue("postgres_url"))

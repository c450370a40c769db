"""The composition object runs with trim on, so the bot and the ``flower`` command resume alike.

The spec keeps ``Runtime(trim=False)`` as the default; ``StarterRun`` (what every front end
builds, the Slack bot included) turns the large-result layer on. Built here without a model: an
empty ask in a fresh workspace makes ``starter_flow`` refuse after the Runtime exists.
"""

from __future__ import annotations

import asyncio

import pytest

from bot.runs.run import thread_run
from engine import StarterRun


def _store_of(starter: StarterRun):
    with pytest.raises(ValueError):  # the empty ask
        asyncio.run(starter.run(""))
    assert starter.runtime is not None
    return starter.runtime.store


@pytest.fixture(autouse=True)
def _a_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-dummy")  # checked before the flow is built


def test_a_starter_run_resumes_with_trim_on(tmp_path):
    store = _store_of(StarterRun(tmp_path, run_dir=tmp_path / "runs"))
    assert store.policy.enabled and store.ephemeral.enabled and store.prune.keep_denials == 1


def test_the_bots_thread_run_resumes_with_trim_on(tmp_path):
    store = _store_of(thread_run(tmp_path))
    assert store.policy.enabled


def test_trim_can_still_be_turned_off(tmp_path):
    store = _store_of(StarterRun(tmp_path, run_dir=tmp_path / "runs", trim=False))
    assert not store.policy.enabled and store.ephemeral.enabled

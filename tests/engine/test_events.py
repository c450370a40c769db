"""Progress events: one frozen class per kind, ``kind`` as before, ``payload`` the kind's own fields."""

from __future__ import annotations

import dataclasses
import json

import pytest

import engine.events
from engine import Event
from engine.events import AskEvent, HandoffEvent, StepStarted, VerdictGiven, WorkflowDone
from engine._cli.view import event_line
from engine._events import EventKind


def test_every_kind_has_one_public_class():
    classes = [getattr(engine.events, n) for n in engine.events.__all__
               if isinstance(getattr(engine.events, n), type) and issubclass(getattr(engine.events, n), Event)]
    kinds = [c.kind for c in classes]
    assert sorted(kinds) == sorted(EventKind.__args__)
    assert "wake" not in kinds


def test_kind_payload_and_frozen():
    e = VerdictGiven("干活", round=2, state="not_yet", reason="r", failed=("a",), at=5.0)
    assert (e.kind, e.step, e.at) == ("verdict", "干活", 5.0)
    assert e.payload == {"round": 2, "state": "not_yet", "reason": "r", "failed": ("a",), "error": None}
    assert json.loads(json.dumps(e.payload))["failed"] == ["a"]  # a JSON dump needs nothing more
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.round = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        e.payload = {}  # type: ignore[misc]


def test_done_says_ok_failed_aborted():
    assert WorkflowDone("flow", ok=False, failed="干活", aborted="no answer").payload == {
        "ok": False, "failed": "干活", "aborted": "no answer"}


def test_the_base_class_is_not_an_event_of_its_own():
    with pytest.raises(TypeError):
        Event("x")


def test_terminal_lines_read_the_attributes():
    assert event_line(StepStarted("干活", index=2, total=3, resumed=True, woke=3)).endswith(
        "3/3  <- 接上次 · 第 3 次唤醒")
    assert "170.0K" in event_line(HandoffEvent("干活", phase="near", used=150_000, due_at=170_000))
    assert event_line(VerdictGiven("干活", round=1, state="not_yet", failed=("x",))).endswith("- x")
    assert event_line(AskEvent("干活", phase="asked", question="q")) is None

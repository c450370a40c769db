"""Errors the fake Slack raises at the test that drives it (never at the client under test)."""

from __future__ import annotations

from engine import FlowerError


class FakeSlackError(FlowerError):
    """A test asked the fake Slack for something it cannot do (unknown message, no connection...)."""


class FakeSlackTimeout(FakeSlackError, TimeoutError):
    """A `wait_*` helper gave up: what it waited for never happened within the timeout."""

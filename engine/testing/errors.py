"""The offline test kit's error class."""

from engine._errors import FlowerError


class FakeModelError(FlowerError):
    """A test-kit misuse or an unmet expectation (no rule matched, a held request never came)."""

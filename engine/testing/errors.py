"""The offline test kit's error class."""

from engine._errors import FlowerError


class FakeModelError(FlowerError):
    """A test-kit misuse or an unmet expectation (no rule matched, a held request never came)."""


class PostgresServerError(FlowerError):
    """The test kit's throwaway PostgreSQL could not be found, started, stopped or given a database."""

"""The engine's one error base class; every error the engine raises on purpose derives from it."""


class FlowerError(Exception):
    """Base class of the engine's own errors. Messages name what was wrong, the value, and the fix."""

"""Every sentence the bot says in Slack, in the team's language: ``texts.NAME`` is the table in effect.

``en.py`` and ``zh.py`` hold the same names with the same shapes and fields; ``use(language)``
picks one (``bot.main.start_bot`` does, from ``FLOWER_SLACK_LANGUAGE``), English until then.
Names are looked up on each use, so code reads ``texts.NAME`` where it says the sentence: a module
constant or a default argument computed from ``texts.NAME`` would keep the language of import time.
"""

from __future__ import annotations

from types import ModuleType

from bot.render.texts import chinese as zh
from bot.render.texts import english as en
from engine.lang import check_language

__all__ = ["current", "use"]

_TABLES: dict[str, ModuleType] = {"en": en, "zh": zh}
# One bot process speaks one language, so a module-level setting is enough (no per-thread lookup).
_table: ModuleType = en


def use(language: str) -> None:
    """Speak ``language`` (``en`` / ``zh``, as ``engine.lang.check_language`` reads it) from now on."""
    global _table
    _table = _TABLES[check_language(language)]


def current() -> str:
    """The language in effect: ``en`` or ``zh``."""
    return next(code for code, table in _TABLES.items() if table is _table)


def __getattr__(name: str) -> object:
    if name.startswith("_"):  # the package's own machinery (and Python's probes) are not sentences
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return getattr(_table, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None

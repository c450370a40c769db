"""The language flower speaks to models and people: ``en`` or ``zh``, chosen once per run.

Every text the engine writes (rules, prompts, section titles, file names, step names, the ask
tool's answers) lives twice, with the same names and placeholders: ``engine._lang.zh`` (the
spec's Chinese, byte for byte) and ``engine._lang.en``. ``words()`` is the table of the language
in effect: the one given to ``speaking()`` around the current code (a context variable, so two
runs in one process may speak differently), else the library default ``zh`` (the spec's).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import ModuleType
from typing import Literal

from engine._lang import en, zh

LANGUAGES = ("en", "zh")
ENV = "FLOWER_LANGUAGE"
LIBRARY_DEFAULT = "zh"  # the spec's defaults; the bot and `flower` choose their own (see below)
_TABLES: dict[str, ModuleType] = {"en": en, "zh": zh}
_current: ContextVar[str] = ContextVar("flower_language", default=LIBRARY_DEFAULT)


def check(value: str, *, source: str = ENV) -> str:
    """``value`` as a language code (``en`` / ``zh``; ``EN``, ``zh-CN``, ``zh_TW.UTF-8`` too), or a
    ``ValueError`` naming ``source``, the value and the choices."""
    code = (value or "").strip().lower().replace("-", "_").split(".")[0].split("_")[0]
    if code not in LANGUAGES:
        raise ValueError(f"{source} must be one of {', '.join(LANGUAGES)}; got {value!r}. "
                         f"Set {source}=en for English or {source}=zh for Chinese.")
    return code


def from_locale(env: Mapping[str, str] = os.environ) -> str:
    """``zh`` when the locale's language is Chinese (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, the first
    one set, as POSIX orders them), else ``en``."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def current() -> str:
    """The language in effect here."""
    return _current.get()


def words(language: str | None = None) -> ModuleType:
    """The text table of ``language`` (default: the one in effect)."""
    return _TABLES[check(language) if language else current()]


@contextmanager
def speaking(language: str) -> Iterator[str]:
    """Make ``language`` the one in effect inside the block (and in tasks started inside it)."""
    token = _current.set(check(language, source="language"))
    try:
        yield current()
    finally:
        _current.reset(token)


def other_names(name: str, attribute: str) -> tuple[str, ...]:
    """``name`` and its counterparts in every language, for the table entry ``attribute``: a
    workspace made in one language is found again in the other (file names, step names)."""
    names = [getattr(t, attribute) for t in _TABLES.values()]
    return (name, *[n for n in names if n != name]) if name in names else (name,)


# The starter flow's three steps: the table entry naming each, and what a front end calls it
_STARTER_STEPS: tuple[tuple[str, Literal["clarify", "goal", "work"]], ...] = (
    ("CLARIFY_STEP", "clarify"), ("GOAL_STEP", "goal"), ("WORK_STEP", "work"))


def starter_step(name: str) -> Literal["clarify", "goal", "work"] | None:
    """Which of the starter flow's three steps ``name`` is, in any language (a front end says it
    in a person's words); None for any other step."""
    for attribute, kind in _STARTER_STEPS:
        if name in {getattr(t, attribute) for t in _TABLES.values()}:
            return kind
    return None


def starter_step_name(kind: Literal["clarify", "goal", "work"], language: str | None = None) -> str:
    """The name of the starter flow's step ``kind`` in ``language`` (default: the one in effect),
    as a front end shows it: the inverse of ``starter_step``."""
    (attribute,) = [attr for attr, k in _STARTER_STEPS if k == kind]
    return getattr(words(language), attribute)


def step_names(name: str) -> tuple[str, ...]:
    """``name`` and, for the starter's three steps, its name in every other language: a step's
    session is found again when a workspace is resumed in the other language."""
    for attribute, _ in _STARTER_STEPS:
        names = other_names(name, attribute)
        if len(names) > 1:
            return names
    return (name,)

"""The language flower speaks to models and people, ``en`` or ``zh``, chosen once per run.

A front end reads its choice (``check_language`` on the setting ``LANGUAGE_ENV``, or
``locale_language`` from the locale) and runs the engine inside ``speaking(language)``, a
context variable, so two runs in one process may speak differently; ``current_language`` is the
one in effect. ``starter_step`` tells which of the starter flow's three steps a step name is, in
any language, and ``starter_step_name`` names one in a language; ``step_names`` gives a step's
name in every language (a workspace begun in one is resumed in the other). The library default
is the spec's (``zh``); the texts themselves live in ``engine._lang``.
"""

from engine._lang import (
    ENV as LANGUAGE_ENV,
    LANGUAGES,
    check as check_language,
    current as current_language,
    from_locale as locale_language,
    speaking,
    starter_step,
    starter_step_name,
    step_names,
)

__all__ = [
    # The choices, and the setting a front end reads its choice from
    "LANGUAGES",
    "LANGUAGE_ENV",
    "check_language",
    "locale_language",
    # Speaking: the language in effect around a run (a context variable), and which one it is
    "speaking",
    "current_language",
    # The starter flow's steps in every language: which one a name is, one's name in a language
    "step_names",
    "starter_step",
    "starter_step_name",
]

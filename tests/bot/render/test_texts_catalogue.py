"""The bot's Slack sentences in two tables (``bot.render.texts.english`` / ``.zh``): the same names, shapes
and fields, and ``texts.NAME`` reading the table in effect at the moment it is said."""

from __future__ import annotations

import re
import string

import pytest

from bot.core.outside_text import Sentence
from bot.render import controls, failures, messages, plan, pull_request, texts
from bot.render.texts import chinese as zh
from bot.render.texts import english as en
from engine.authoring import CheckState, FlowFailure


def _names(table) -> set[str]:
    return {n for n in vars(table) if n.isupper()}


def _strings(value, where: str):
    """(where, text) for every string inside a catalogue value (pairs, dicts, dicts of pairs)."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, tuple):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")
    else:
        for k, v in value.items():
            yield from _strings(v, f"{where}[{k!r}]")


def _shape(value):
    """What code relies on: a Sentence or a str, a tuple of its length, a dict of its keys."""
    if isinstance(value, Sentence):
        return "Sentence"
    if isinstance(value, str):
        return "str"
    if isinstance(value, tuple):
        return tuple(_shape(v) for v in value)
    assert isinstance(value, dict), type(value)
    return {k: _shape(v) for k, v in value.items()}


def _fields(text: str) -> set[tuple[str, str, str | None]]:
    return {(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(text) if name is not None}


def test_both_tables_have_the_same_names():
    assert _names(en) and _names(zh) == _names(en)


@pytest.mark.parametrize("name", sorted(_names(en)))
def test_each_name_has_the_same_shape_and_fields_in_both(name):
    mine, theirs = getattr(en, name), getattr(zh, name)
    assert _shape(theirs) == _shape(mine)
    for (where, a), (_, b) in zip(_strings(mine, name), _strings(theirs, name), strict=True):
        assert _fields(b) == _fields(a), where
        # what Slack and the reader act on stays as it is: code spans, settings, commands, links
        assert b.count("`") == a.count("`"), where
        assert set(re.findall(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", b)) == set(re.findall(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", a)), where
        for mark in ("/new", "@flower", "<{", "|", "```"):
            assert (mark in b) == (mark in a), (where, mark)


def test_the_chinese_table_is_chinese():
    english = [w for w, s in _strings({n: getattr(zh, n) for n in _names(zh)}, "zh")
               if re.search(r"\b[a-z]{3,} [a-z]{3,} [a-z]{3,}\b", re.sub(r"`[^`]*`|\{[^}]*\}|<[^>]*>", "", s))]
    assert english == []


def test_use_switches_the_table_and_refuses_an_unknown_language():
    assert texts.current() == "en" and texts.STARTED == en.STARTED  # the suite's default (tests/conftest.py)
    texts.use("zh-CN")
    assert texts.current() == "zh" and texts.STARTED == zh.STARTED and texts.ROUNDS is zh.ROUNDS
    texts.use("EN")
    assert texts.STARTED == en.STARTED
    with pytest.raises(ValueError, match="must be one of en, zh"):
        texts.use("fr")
    assert texts.current() == "en"
    with pytest.raises(AttributeError):
        texts.NO_SUCH_SENTENCE  # noqa: B018


def test_what_the_renderers_say_follows_the_table_in_effect_not_the_one_at_import():
    """Defaults and module tables read the catalogue when they speak (none is bound at import)."""
    checks = [CheckState(1, "hello.txt exists", "passed"), CheckState(2, "it says hi", "pending")]
    report = pull_request.Report(goal="g", checks=[("it says hi", "pending")], rounds=1, cost=0.5)
    cause = FlowFailure(kind="step", step="work", cause="auth", detail="invalid x-api-key")

    def said() -> str:
        return "\n".join([
            str(messages.closed_question_message("q")), str(plan.plan_message(checks, stopped=True)),
            controls.thanks("positive", changed=False), str(controls.feedback_block(("T", "C", "1.0"))),
            pull_request.body(report, thread_link="", branch="b"), failures.failure_reason(cause),
            messages.started_message()["text"],
        ])

    english = said()
    texts.use("zh")
    chinese = said()
    for sentence in (zh.NO_ANSWER_IN_TIME, zh.PLAN_STOPPED, zh.PLAN_TITLE_JUDGED.format(passed=1, n=2),
                     zh.FEEDBACK_SAY["positive"], zh.PR_BODY_CHECKS, zh.PR_THREAD_UNKNOWN, "模型拒绝了 API key"):
        assert sentence in chinese and sentence not in english
    for sentence in (en.NO_ANSWER_IN_TIME, en.PLAN_STOPPED, en.FEEDBACK_SAY["positive"], en.PR_BODY_CHECKS,
                     "the model refused the API key"):
        assert sentence in english and sentence not in chinese

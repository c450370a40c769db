"""The language flower speaks (``engine._lang``): zh is the spec's texts byte for byte, en has the
same contract, and a workspace made in one language keeps working in the other."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest

from engine import Brief, Goal
from engine.authoring import starter_paths
from engine.lang import (
    check_language,
    current_language,
    locale_language,
    speaking,
    starter_step,
    starter_step_name,
)
from engine._lang import en, step_names, words, zh

from tests.helpers.lang_render import rendered

DATA = Path(__file__).parent / "data"
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


def _table(module) -> dict[str, object]:
    return {k: v for k, v in vars(module).items() if k.isupper() and not k.startswith("_")}


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_zh_keeps_every_text_of_the_spec_byte_for_byte(tmp_path):
    """Every Chinese text the engine had before the English ones existed is still a zh value,
    and what the engine renders from them (system prompts, files, feedback) is unchanged."""
    before = json.loads((DATA / "zh_texts.json").read_text(encoding="utf-8"))
    values = set()
    for value in _table(zh).values():
        values |= set(value.values()) if isinstance(value, dict) else {value}
    lost = {k: v for k, v in before.items()
            if v not in values and "__doc__" not in k and not k.startswith(("engine.cli", "engine._cli", "engine._docs.sections:_NUM"))}
    assert lost == {}
    (tmp_path / "ws").mkdir()
    assert rendered("zh", tmp_path / "ws") == json.loads((DATA / "zh_rendered.json").read_text(encoding="utf-8"))


def test_en_has_the_same_names_placeholders_and_no_chinese(tmp_path):
    zh_t, en_t = _table(zh), _table(en)
    assert zh_t.keys() == en_t.keys()
    for name, value in zh_t.items():
        other = en_t[name]
        if isinstance(value, dict):
            assert value.keys() == other.keys(), name
            continue
        if other:  # an empty en text is one English does not need (HANDOFF_CONTINUE_NOTE)
            assert _fields(value) == _fields(other), name
    (tmp_path / "ws").mkdir()
    shown = rendered("en", tmp_path / "ws")
    assert {k: v for k, v in shown.items() if CJK.search(v)} == {}


def test_the_english_rules_keep_the_contract_sections_and_order():
    """The sections the English rules ask for are the ones the parsers read, in the same order."""
    heads = lambda rules: re.findall(r"^## (.+)$", rules, re.MULTILINE)
    assert heads(en.CLARIFY_RULES) == list(en.BRIEF_TITLES.values())
    assert heads(en.JUDGE_RULES) == [*en.GOAL_TITLES.values(), *en.VERDICT_TITLES.values()]
    assert heads(en.HANDOFF_PROMPT) == list(en.HANDOFF_TITLES.values())
    answer = "\n".join(f"## {t}\n{t} text" for t in en.BRIEF_TITLES.values())
    assert Brief.parse(answer).complete()
    with speaking("en"):
        goal = Goal.parse(Goal("g", ["one", "[unverifiable here: no macOS] two"]).to_markdown())
    assert goal.checks == ["one", "[unverifiable here: no macOS] two"] and goal.unverifiable()


@pytest.mark.parametrize("value, code", [("en", "en"), ("ZH", "zh"), ("zh-CN", "zh"), ("zh_TW.UTF-8", "zh")])
def test_language_values(value, code):
    assert check_language(value) == code


def test_a_bad_language_names_the_value_and_the_choices():
    with pytest.raises(ValueError, match=r"FLOWER_LANGUAGE must be one of en, zh; got 'fr'.*FLOWER_LANGUAGE=en"):
        check_language("fr")


def test_the_locale_decides_for_the_terminal():
    assert locale_language({"LANG": "zh_CN.UTF-8"}) == "zh"
    assert locale_language({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"
    assert locale_language({}) == "en"


def test_a_front_end_reads_the_language_in_effect_and_names_the_starters_steps_in_it():
    with speaking("en"):
        assert current_language() == "en" and starter_step_name("work") == "work"
        with speaking("zh"):
            assert current_language() == "zh" and starter_step_name("work") == zh.WORK_STEP
    for kind in ("clarify", "goal", "work"):
        for language in ("en", "zh"):
            assert starter_step(starter_step_name(kind, language)) == kind


def test_a_workspace_made_in_one_language_is_found_in_the_other(tmp_path):
    with speaking("zh"):
        zh_paths = starter_paths(tmp_path)
        zh_paths.workbench.ensure()
        Brief("目标", "验收", "边界", "无").write(zh_paths.brief)
    with speaking("en"):
        paths = starter_paths(tmp_path)
        assert paths.brief == zh_paths.brief and paths.goal.name == "goal.md" and paths.log.name == "qa-log.md"
        assert Brief.load(paths.brief).complete()
    assert step_names("work") == ("work", "干活") and step_names("确认需求") == ("确认需求", "clarify")
    assert words("en").WORK_STEP == "work"

"""The shared section machinery: fences, heading forms, aliases, first copy wins, lists."""

from __future__ import annotations

import pytest

from engine._docs.fences import code_mask, has_unclosed_fence
from engine._docs.sections import PLACEHOLDER, SectionTable, is_placeholder, list_items, numbered

T = SectionTable(
    {
        "a": ("目标", "Goal"),
        "b": ("未知与假设", "未知", "Unknowns"),
        "c": ("边界", "Bounds", "Out"),
    }
)
STRICT = SectionTable({"a": ("目标", "Goal"), "c": ("下一步", "Next")}, loose=False)


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("## 目标", ("a", 2, "")),
        ("# 目标", ("a", 1, "")),
        ("#### Goal", ("a", 4, "")),
        ("**目标**", ("a", None, "")),
        ("__目标__", ("a", None, "")),
        ("目标:", ("a", None, "")),
        ("目标：", ("a", None, "")),
        ("目标: 做一个 X", ("a", None, "做一个 X")),
        ("**目标**：做一个 X", ("a", None, "做一个 X")),
        ("**目标：** 做一个 X", ("a", None, "做一个 X")),
        ("3. 边界", ("c", None, "")),
        ("3) Bounds", ("c", None, "")),
        ("一、目标", ("a", None, "")),
        ("## 1. 目标", ("a", 2, "")),
        ("## **目标**", ("a", 2, "")),
        ("## 目标（一句话）", ("a", 2, "")),
        ("## Goal (one line)", ("a", 2, "")),
        ("## 目标 / Goal", ("a", 2, "")),
        ("## 目标 ##", ("a", 2, "")),
        ("## 目标 做一个 X", ("a", 2, "做一个 X")),
        ("## GOAL", ("a", 2, "")),
        ("## 🎯 目标", ("a", 2, "")),
        ("**✅ 边界**：只改 src", ("c", None, "只改 src")),
        ("## 3. ⚠️ 未知与假设", ("b", 2, "")),
        ("  ## 目标", ("a", 2, "")),
        ("## 未知与假设", ("b", 2, "")),
        ("## 未知", ("b", 2, "")),
        ("未知与假设：无", ("b", None, "无")),
        ("目标", None),  # a bare word is an answer, not a heading
        ("目标是做一个 X", None),
        ("## 目标是做一个 X", None),
        ("Goalkeeper: Bob", None),
        ("**目标是**做一个 X", None),
        ("**目标", None),
        ("- 目标: X", None),
        ("做一个 X", None),
        ("    ## 目标", None),  # indented code, not a heading
    ],
)
def test_heading_forms(line, want):
    assert T.match(line) == want


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("## 下一步", ("c", 2, "")),
        ("**Next**", ("c", None, "")),
        ("Next: run the tests", None),
        ("1. 下一步是跑测试", None),
        ("2. Next, run it", None),
    ],
)
def test_strict_table_needs_hash_or_bold(line, want):
    assert STRICT.match(line) == want


def test_longest_alias_first():
    p = T.parse("## 未知与假设\n默认用 UTF-8")
    assert p.sections["b"] == "默认用 UTF-8"


def test_first_copy_with_content_wins():
    p = T.parse("## 目标\n\n## 目标\n第一份\n## 目标\n第二份")
    assert p.sections["a"] == "第一份"
    assert p.seen == ["a", "a", "a"]


def test_placeholder_counts_as_missing_and_later_copy_fills_it():
    assert T.parse(f"## 目标\n{PLACEHOLDER}\n## 边界\n（未填）").sections == {"a": "", "b": "", "c": ""}
    assert T.parse(f"## 目标\n{PLACEHOLDER}\n## 目标\n真的").sections["a"] == "真的"


def test_closed_fence_is_content_not_headings():
    text = "## 目标\n做 X:\n```python\n# 边界\ndef f():\n    pass\n```\n## 边界\n只改 src"
    p = T.parse(text)
    assert p.sections["a"] == "做 X:\n```python\n# 边界\ndef f():\n    pass\n```"
    assert p.sections["c"] == "只改 src"
    assert not p.truncated


def test_unclosed_fence_drops_the_rest():
    text = "## 目标\n做 X\n```python\ndef f():\n## 边界\n只改 src\n"
    p = T.parse(text)
    assert p.sections == {"a": "做 X", "b": "", "c": ""}
    assert p.truncated


def test_tilde_fence_and_longer_closer():
    p = T.parse("## 目标\n~~~~\n## 边界\n~~~\n~~~~~\n## 边界\n真的")
    assert p.sections["c"] == "真的"
    assert p.sections["a"].startswith("~~~~")


def test_backtick_fence_not_closed_by_tildes_or_shorter_run():
    assert has_unclosed_fence("````\n```\n~~~~\n")
    assert not has_unclosed_fence("````\n```\n`````\n")
    assert not has_unclosed_fence("no fences at all")


def test_code_mask_marks_fence_lines():
    kept, mask = code_mask(["a", "```", "b", "```", "c", "```", "d"])
    assert kept == ["a", "```", "b", "```", "c"]
    assert mask == [False, True, True, True, False]


def test_unknown_heading_at_same_level_goes_to_extra():
    p = T.parse("## 目标\nX\n### 细节\n保持\n## 唤醒时追加\n加高亮\n\n## 边界\n只改 src")
    assert p.sections["a"] == "X\n### 细节\n保持"
    assert p.extra == "## 唤醒时追加\n加高亮"
    assert p.sections["c"] == "只改 src"


def test_thematic_break_drops_trailing_chatter():
    p = T.parse("## 目标\nX\n\n---\n\n以上是我的理解，有问题请指出。")
    assert p.sections["a"] == "X"
    assert p.extra == ""


def test_preamble_is_kept_apart():
    p = T.parse("好的，下面是整理后的需求。\n\n# 需求\n\n## 目标\nX")
    assert p.preamble == "好的，下面是整理后的需求。\n\n# 需求"
    assert p.sections["a"] == "X"
    assert p.extra == ""


@pytest.mark.parametrize("text", ["", None, "   \n\n", "只是一段闲聊，没有标题。"])
def test_nothing_found(text):
    p = T.parse(text)
    assert p.sections == {"a": "", "b": "", "c": ""}
    assert p.seen == []


def test_render_round_trip_and_placeholder():
    values = {"a": "X", "b": "", "c": "只改 src\n- 不碰 API"}
    md = T.render(values)
    assert "## 未知与假设\n\n(未填)" in md
    assert T.parse(md).sections == values
    assert "未知与假设" not in T.render(values, placeholder=False)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("- a\n- b", ["a", "b"]),
        ("* a\n+ b\n• c", ["a", "b", "c"]),
        ("1. a\n2) b\n3、c\n(4) d", ["a", "b", "c", "d"]),
        ("- [ ] a\n- [x] b\n- [X] c", ["a", "b", "c"]),
        ("以下每项都要过：\n- a\n- b", ["a", "b"]),
        ("- a\n  续行\n- b", ["a 续行", "b"]),
        ("- a\n续行\n\n- b", ["a 续行", "b"]),
        ("- a\n\n  缩进续行\n- b", ["a 缩进续行", "b"]),
        ("- a\n- b\n\n以上两项没过，请修。", ["a", "b"]),
        ("1. 功能：\n   - 能登录\n   - 能登出\n2. 文档", ["功能： 能登录 能登出", "文档"]),
        ("a\nb\n\nc", ["a", "b", "c"]),
        ("无", []),
        ("- 无", []),
        ("None", []),
        (PLACEHOLDER, []),
        ("", []),
        ("- a\n- (未填)", ["a"]),
    ],
)
def test_list_items(text, want):
    assert list_items(text) == want


def test_small_helpers():
    assert is_placeholder(" (未填) ") and is_placeholder("（未填）") and not is_placeholder("未填")
    assert numbered(["a", "b"]) == "1. a\n2. b"


@pytest.mark.parametrize(
    "text",
    [
        "下面是需求:\n```markdown\n## 目标\nX\n## 边界\nY\n```\n有问题再说。",
        "```md\n## 目标\nX\n## 边界\nY\n```",
        "```\n## 目标\nX\n## 边界\nY\n```",  # bare wrapper: used only when nothing else has headings
        "````markdown\n## 目标\nX\n## 边界\nY\n````",
    ],
)
def test_markdown_wrapper_is_unwrapped(text):
    assert T.parse(text).sections == {"a": "X", "b": "", "c": "Y"}


def test_inner_code_of_a_wrapped_document_stays_code():
    text = "````markdown\n## 目标\nX\n```\n## 边界\n```\n## 边界\nY\n````"
    assert T.parse(text).sections == {"a": "X\n```\n## 边界\n```", "b": "", "c": "Y"}


def test_bare_fence_is_code_when_headings_exist_outside():
    text = "## 目标\n示例:\n```\n## 边界\nZ\n```\n## 边界\nY"
    assert T.parse(text).sections == {"a": "示例:\n```\n## 边界\nZ\n```", "b": "", "c": "Y"}


def test_unclosed_markdown_wrapper_still_truncates():
    p = T.parse("```markdown\n## 目标\nX\n## 边界\n只")
    assert p.sections == {"a": "", "b": "", "c": ""} and p.truncated

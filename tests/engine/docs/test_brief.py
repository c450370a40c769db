"""Brief: real-looking clarifier answers in, four sections out; file round trips."""

from __future__ import annotations

import pytest

from engine._docs import Brief
from engine._lang.zh import AMEND_LABEL

FULL = Brief(goal="做一个 Markdown 转 HTML 的命令行工具", accept="`mdh in.md` 输出 HTML;测试全过",
             bounds="只用标准库;不改现有 API", unknowns="假设输入都是 UTF-8")

ZH_HASH = """好的，我已经和你确认清楚了，下面是整理后的需求：

## 目标
做一个 Markdown 转 HTML 的命令行工具

## 验收标准
`mdh in.md` 输出 HTML;测试全过

## 边界
只用标准库;不改现有 API

## 未知与假设
假设输入都是 UTF-8
"""

ZH_BOLD = """**目标**：做一个 Markdown 转 HTML 的命令行工具
**验收标准**：`mdh in.md` 输出 HTML;测试全过
**边界**：只用标准库;不改现有 API
**未知与假设**：假设输入都是 UTF-8"""

ZH_NUMBERED = """需求确认完毕。

1. 目标
做一个 Markdown 转 HTML 的命令行工具
2. 验收标准
`mdh in.md` 输出 HTML;测试全过
3. 边界
只用标准库;不改现有 API
4. 未知与假设
假设输入都是 UTF-8
"""

ZH_COLON = """目标: 做一个 Markdown 转 HTML 的命令行工具
验收标准：`mdh in.md` 输出 HTML;测试全过
边界：只用标准库;不改现有 API
未知与假设: 假设输入都是 UTF-8"""

EN = """Sure! Here's the brief.

## Goal
做一个 Markdown 转 HTML 的命令行工具

## Acceptance criteria
`mdh in.md` 输出 HTML;测试全过

## Scope
只用标准库;不改现有 API

## Unknowns and assumptions
假设输入都是 UTF-8

---
Let me know if anything is off."""

ZH_CHINESE_NUMBERS = """### 一、目标
做一个 Markdown 转 HTML 的命令行工具
### 二、验收标准
`mdh in.md` 输出 HTML;测试全过
### 三、边界
只用标准库;不改现有 API
### 四、未知与假设
假设输入都是 UTF-8"""

MIXED_TITLES = """# Objective / 目标
做一个 Markdown 转 HTML 的命令行工具
# Done when
`mdh in.md` 输出 HTML;测试全过
# Constraints
只用标准库;不改现有 API
# Open questions
假设输入都是 UTF-8"""


WRAPPED = "需求整理如下（可直接保存为 需求.md）：\n\n```markdown\n" + ZH_HASH.split("：\n\n", 1)[1] + \
    "```\n\n确认无误的话我就结束了。"

EMOJI = ZH_HASH.replace("## 目标", "## 🎯 目标").replace("## 边界", "## 🚧 边界")


@pytest.mark.parametrize(
    "text",
    [ZH_HASH, ZH_BOLD, ZH_NUMBERED, ZH_COLON, EN, ZH_CHINESE_NUMBERS, MIXED_TITLES, WRAPPED, EMOJI],
)
def test_heading_styles_all_give_the_same_brief(text):
    b = Brief.parse(text)
    assert b == FULL
    assert b.complete() and b.missing() == []


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("", ["目标", "验收标准", "边界", "未知与假设"]),
        ("我还需要问你几个问题。", ["目标", "验收标准", "边界", "未知与假设"]),
        ("## 目标\nX\n## 验收标准\nY", ["边界", "未知与假设"]),
        # truncated mid-section: the last section is there, the rest is not
        ("## 目标\nX\n## 验收标准\nY\n## 边界\n只用标", ["未知与假设"]),
        # truncated inside a code block: everything from the fence on is gone
        ("## 目标\nX\n## 验收标准\n跑这个:\n```bash\npytest -q\n## 边界\nZ\n## 未知与假设\nW",
         ["边界", "未知与假设"]),
        ("## 目标\nX\n## 验收标准\n(未填)\n## 边界\nZ\n## 未知与假设\n（未填）", ["验收标准", "未知与假设"]),
        ("## 目标\n\n## 验收标准\nY\n## 边界\nZ\n## 未知与假设\nW", ["目标"]),
        ("## 未知\nW\n## 目标\nX\n## 验收\nY\n## 约束\nZ", []),
    ],
)
def test_missing_sections(text, missing):
    b = Brief.parse(text)
    assert b.missing() == missing
    assert b.complete() is (missing == [])


def test_fenced_code_inside_a_section_is_kept_and_not_read_as_headings():
    text = ("## 目标\n修 bug\n## 验收标准\n下面的脚本输出 ok:\n```python\n# 边界\nprint('ok')\n```\n"
            "## 边界\n只改 parser.py\n## 未知与假设\n无")
    b = Brief.parse(text)
    assert b.accept == "下面的脚本输出 ok:\n```python\n# 边界\nprint('ok')\n```"
    assert b.bounds == "只改 parser.py"
    assert b.complete()


def test_pasted_unclosed_code_truncates():
    text = "## 目标\n修 bug\n## 验收标准\n原代码:\n~~~\ndef f():\n    return 1\n"
    b = Brief.parse(text)
    assert b.accept == "原代码:"
    assert not b.complete()


def test_duplicated_sections_first_with_content_wins():
    text = ("草稿:\n## 目标\n\n## 目标\n第一版\n## 验收标准\nA1\n## 边界\nB1\n## 未知与假设\nU1\n"
            "修改后:\n## 目标\n第二版\n## 验收标准\nA2")
    b = Brief.parse(text)
    assert (b.goal, b.accept, b.bounds) == ("第一版", "A1", "B1")
    assert b.unknowns == "U1\n修改后:"


def test_trailing_chatter_without_a_break_stays_in_the_last_section():
    # No reliable way to tell chatter from content; a "---" before it is what drops it.
    b = Brief.parse(ZH_HASH + "\n如果有理解不对的地方，随时告诉我。")
    assert b.unknowns == "假设输入都是 UTF-8\n\n如果有理解不对的地方，随时告诉我。"
    assert Brief.parse(ZH_HASH + "\n---\n如果有理解不对的地方，随时告诉我。") == FULL


def test_unknowns_is_not_swallowed_by_short_alias():
    b = Brief.parse("## 未知与假设\n无\n## 未知\n另一个")
    assert b.unknowns == "无"


def test_out_of_scope_is_kept_as_extra_not_dropped():
    b = Brief.parse(EN.replace("\n---", "\n## Out of scope\nWindows support\n---"))
    assert b == FULL
    assert b.extra == "## Out of scope\nWindows support"
    assert "Windows support" in b.prompt_block()


def test_to_markdown_round_trip_and_placeholders():
    assert Brief.parse(FULL.to_markdown()) == FULL
    half = Brief(goal="X")
    md = half.to_markdown()
    assert md.count("(未填)") == 3
    assert Brief.parse(md) == half
    assert Brief.parse(md).missing() == ["验收标准", "边界", "未知与假设"]


def test_prompt_block_has_filled_sections_only():
    pb = Brief(goal="X", accept="Y").prompt_block()
    assert pb == "## 目标\n\nX\n\n## 验收标准\n\nY"


def test_amend_appends_once_and_survives_write_load(tmp_path):
    path = tmp_path / "需求.md"
    b = FULL.amend("顺便支持代码块高亮")
    assert b == FULL  # the four sections are unchanged; extra is not part of equality
    assert b.extra == f"## {AMEND_LABEL}\n\n顺便支持代码块高亮"
    assert b.amend("顺便支持代码块高亮").extra == b.extra
    assert b.amend("  ").extra == b.extra
    b2 = b.amend("还要支持表格")
    b2.write(path)
    loaded = Brief.load(path)
    assert loaded == FULL and loaded.path == path
    assert loaded.extra == b2.extra
    assert loaded.prompt_block().endswith("## 唤醒时追加\n\n还要支持表格")
    assert loaded.to_markdown() == b2.to_markdown()


def test_human_channel_style_append_to_file_is_preserved(tmp_path):
    path = tmp_path / "需求.md"
    FULL.write(path)
    with open(path, "a", encoding="utf-8") as f:  # what a human channel's amend does
        f.write("\n## 唤醒时追加\n\n顺便支持代码块高亮\n")
    loaded = Brief.load(path)
    assert loaded == FULL and loaded.unknowns == FULL.unknowns
    assert "顺便支持代码块高亮" in loaded.extra and "顺便支持代码块高亮" in loaded.prompt_block()
    loaded.write(path)
    assert Brief.load(path).extra == loaded.extra


def test_write_load_round_trip(tmp_path):
    path = tmp_path / "sub" / "需求.md"
    b = Brief.parse(ZH_HASH)
    assert b.write(path) is b and b.path == path
    assert path.read_text(encoding="utf-8") == FULL.to_markdown()
    assert Brief.load(path) == FULL
    assert Brief.load(str(path)).path == path


def test_load_missing_or_unreadable_is_none(tmp_path):
    assert Brief.load(tmp_path / "nope.md") is None
    assert Brief.load(tmp_path) is None  # a folder
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    assert Brief.load(bad) is None


def test_load_incomplete_file_is_a_brief_not_none(tmp_path):
    path = tmp_path / "需求.md"
    path.write_text("## 目标\nX\n", encoding="utf-8")
    b = Brief.load(path)
    assert b is not None and not b.complete() and b.goal == "X"

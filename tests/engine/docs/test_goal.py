"""Goal: the judge's goal answers in, statement + checklist out; unverifiable items; amend."""

from __future__ import annotations

import pytest

from engine._docs import Goal
from engine._lang.zh import GOAL_AMEND_NOTE as AMEND_NOTE

CHECKS = ["`mdh in.md` 输出合法 HTML", "pytest 全部通过", "[此环境无法验证: macOS 上能编译]"]
FULL = Goal("做一个 Markdown 转 HTML 的命令行工具", CHECKS)


@pytest.mark.parametrize(
    "text",
    [
        # the canonical file form
        "## 目标\n\n做一个 Markdown 转 HTML 的命令行工具\n\n## 判定清单\n\n"
        "- `mdh in.md` 输出合法 HTML\n- pytest 全部通过\n- [此环境无法验证: macOS 上能编译]\n",
        # preamble, numbered checks, alias title, trailing break + chatter
        "我先看了一下仓库，目标设定如下。\n\n## 目标\n做一个 Markdown 转 HTML 的命令行工具\n\n"
        "## 验收清单\n1. `mdh in.md` 输出合法 HTML\n2. pytest 全部通过\n"
        "3. [此环境无法验证: macOS 上能编译]\n\n---\n判定时我会逐项检查。",
        # checkboxes and an intro line
        "**目标**：做一个 Markdown 转 HTML 的命令行工具\n**检查项**：\n逐项都要满足：\n"
        "- [ ] `mdh in.md` 输出合法 HTML\n- [ ] pytest 全部通过\n"
        "- [ ] [此环境无法验证: macOS 上能编译]",
        # English titles, star bullets
        "## Goal\n做一个 Markdown 转 HTML 的命令行工具\n## Checklist\n* `mdh in.md` 输出合法 HTML\n"
        "* pytest 全部通过\n* [此环境无法验证: macOS 上能编译]",
        # checks first, then the goal
        "## Acceptance checks\n- `mdh in.md` 输出合法 HTML\n- pytest 全部通过\n"
        "- [此环境无法验证: macOS 上能编译]\n## Objective\n做一个 Markdown 转 HTML 的命令行工具",
        # the prompt_block form (numbered)
        FULL.prompt_block(),
    ],
)
def test_goal_answers_parse_to_the_same_goal(text):
    g = Goal.parse(text)
    assert g == FULL
    assert g.complete()


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("", ["目标", "判定清单"]),
        ("## 目标\nX", ["判定清单"]),
        ("## 判定清单\n- a", ["目标"]),
        ("## 目标\nX\n## 判定清单\n(未填)", ["判定清单"]),
        ("## 目标\nX\n## 判定清单\n- 无", ["判定清单"]),
        ("## 目标\n(未填)\n## 判定清单\n- a", ["目标"]),
        # cut off inside a fenced example: the checklist never arrived
        ("## 目标\nX,用法:\n```\nmdh in.md\n## 判定清单\n- a", ["判定清单"]),
    ],
)
def test_missing(text, missing):
    g = Goal.parse(text)
    assert g.missing() == missing
    assert g.complete() is (missing == [])


def test_multiline_checks_join_and_fenced_code_in_statement_is_kept():
    text = ("## 目标\n修复解析器:\n```\n# 判定清单\n```\n## 判定清单\n- 跑 `pytest -q`\n"
            "  包括新加的测试\n- 文档更新")
    g = Goal.parse(text)
    assert g.statement == "修复解析器:\n```\n# 判定清单\n```"
    assert g.checks == ["跑 `pytest -q` 包括新加的测试", "文档更新"]


@pytest.mark.parametrize(
    ("check", "unverifiable"),
    [
        ("[此环境无法验证: macOS 上能编译]", True),
        ("[此环境无法验证：在 iPhone 上能打开]", True),
        ("【此环境无法验证：Windows 安装包】", True),
        ("[unverifiable here: runs on macOS 14]", True),
        ("[Unverifiable here - GPU needed]", True),
        ("pytest 全部通过", False),
        ("说明此环境无法验证的部分", False),
        ("[x] 测试通过", False),
    ],
)
def test_unverifiable(check, unverifiable):
    g = Goal("X", ["pytest 全部通过", check])
    assert (g.unverifiable() == [check]) is unverifiable


def test_round_trips(tmp_path):
    assert Goal.parse(FULL.to_markdown()) == FULL
    assert Goal.parse(Goal().to_markdown()) == Goal()
    path = tmp_path / "目标.md"
    assert FULL.write(path).path == path
    loaded = Goal.load(path)
    assert loaded == FULL and loaded.path == path
    assert loaded.unverifiable() == ["[此环境无法验证: macOS 上能编译]"]
    assert Goal.load(tmp_path / "none.md") is None


def test_prompt_block_numbers_checks():
    assert FULL.prompt_block() == (
        "## 目标\n\n做一个 Markdown 转 HTML 的命令行工具\n\n## 判定清单\n\n"
        "1. `mdh in.md` 输出合法 HTML\n2. pytest 全部通过\n3. [此环境无法验证: macOS 上能编译]"
    )
    assert Goal().prompt_block() == ""


def test_placeholder_rendering():
    md = Goal().to_markdown()
    assert md == "## 目标\n\n(未填)\n\n## 判定清单\n\n(未填)\n"


def test_amend_adds_statement_line_and_check(tmp_path):
    g = FULL.amend("只要 macOS 上能编译就行,不用 Windows")
    assert g.statement == f"{FULL.statement}\n\n{AMEND_NOTE}只要 macOS 上能编译就行,不用 Windows"
    assert g.checks == [*CHECKS, "符合人工修改：只要 macOS 上能编译就行,不用 Windows"]
    assert FULL.checks == CHECKS  # the original is untouched
    assert g.amend("只要 macOS 上能编译就行,不用 Windows") == g  # idempotent
    assert FULL.amend("   ") == FULL
    path = tmp_path / "目标.md"
    g.write(path)
    assert Goal.load(path) == g
    assert Goal().amend("做 Y").complete()

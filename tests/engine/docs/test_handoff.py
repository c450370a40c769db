"""Handoff: the filling session's answer in, five sections out; overflow detection; degraded."""

from __future__ import annotations

import pytest

from engine._docs import Handoff
from engine._docs.handoff_doc import degraded, is_overflow
from engine._lang.zh import HANDOFF_PROMPT

FULL = Handoff(
    doing="实现 Markdown 表格渲染,已完成解析,渲染写了一半",
    decided="- 用 markdown-it 的 token 流,不自己写 parser",
    deadends="- 试过正则匹配表格:对齐行处理不了",
    next="1. 写 render_table\n2. 跑 `pytest tests/test_table.py`",
    scene="- 分支 feat/table\n- 改动在 src/mdh/table.py",
    step="干活",
)

ANSWER = """好的，我来写交接文档。

## 在做什么
实现 Markdown 表格渲染,已完成解析,渲染写了一半

## 已定的事
- 用 markdown-it 的 token 流,不自己写 parser

## 走不通的路
- 试过正则匹配表格:对齐行处理不了

## 下一步
1. 写 render_table
2. 跑 `pytest tests/test_table.py`

## 现场
- 分支 feat/table
- 改动在 src/mdh/table.py
"""


@pytest.mark.parametrize(
    "text",
    [
        ANSWER,
        ANSWER.replace("## ", "### "),
        ANSWER.replace("## 在做什么", "## Doing").replace("## 已定的事", "## Decisions")
        .replace("## 走不通的路", "## Dead ends").replace("## 下一步", "## Next steps")
        .replace("## 现场", "## Where things are"),
        ANSWER.replace("## 在做什么\n", "**在做什么**\n").replace("## 现场\n", "**现场**:\n"),
        ANSWER + "\n---\n交接完毕，新会话可以接手了。",
    ],
)
def test_answers_parse(text):
    h = Handoff.parse(text, step="干活")
    assert h == FULL
    assert h.complete()


def test_prose_sentences_are_not_headings():
    text = ("## 已定的事\nNext: 我们决定用 sqlite\n1. 下一步再说缓存\nState: 稳定\n"
            "## 在做什么\nX\n## 下一步\nY")
    h = Handoff.parse(text)
    assert h.decided == "Next: 我们决定用 sqlite\n1. 下一步再说缓存\nState: 稳定"
    assert (h.doing, h.next) == ("X", "Y")


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("", ["在做什么", "下一步"]),
        ("## 在做什么\nX\n## 下一步\nY", []),  # the other three are optional
        ("## 在做什么\nX\n## 走不通的路\n(未填)", ["下一步"]),
        ("## 在做什么\nX\n## 现场\n```bash\n$ pytest\n## 下一步\nY", ["下一步"]),  # cut off
        ("## 下一步\n(未填)\n## 在做什么\n\n", ["在做什么", "下一步"]),
    ],
)
def test_missing(text, missing):
    assert Handoff.parse(text).missing() == missing


def test_round_trips(tmp_path):
    assert Handoff.parse(FULL.to_markdown()) == FULL  # the step comes back from the title
    assert Handoff.parse(FULL.to_markdown(), step="别的").step == "别的"
    path = tmp_path / "notes" / "交接-干活.md"
    FULL.write(path)
    loaded = Handoff.load(path)
    assert loaded == FULL and loaded.path == path and not loaded.degraded
    assert path.read_text(encoding="utf-8").startswith("# 交接 · 干活\n")
    assert Handoff.load(tmp_path / "missing.md") is None


def test_prompt_block_says_it_is_a_continuation():
    pb = FULL.prompt_block()
    first = pb.splitlines()[0]
    assert "接续" in first and "步骤「干活」" in first and "上下文满了" in first
    assert "not start over" in pb
    for title, value in [("在做什么", FULL.doing), ("下一步", FULL.next), ("现场", FULL.scene)]:
        assert f"## {title}\n\n{value}" in pb
    assert "(未填)" not in Handoff(doing="X", next="Y").prompt_block()
    assert "走不通的路" not in Handoff(doing="X", next="Y").prompt_block()


def test_handoff_prompt_formats_and_its_titles_parse():
    text = HANDOFF_PROMPT.format(used="180,000", window="200,000")
    assert "180,000" in text and "200,000" in text
    h = Handoff.parse(text)
    assert all([h.doing, h.decided, h.deadends, h.next, h.scene])  # every title is recognized
    assert h.doing.startswith("这一步的任务是什么")


def test_degraded_quotes_the_task_and_why(tmp_path):
    task = "## 目标\n做 X\n```python\nprint(1)\n## 下一步\n" + "很长的任务" * 400
    h = degraded("干活", task, why="prompt is too long")
    assert h.degraded and h.complete() and h.step == "干活"
    assert "prompt is too long" in h.doing
    assert task[:1200] in h.scene and task[:1201] not in h.scene and "已截断" in h.scene
    assert "机械生成" in h.prompt_block()
    path = tmp_path / "交接-干活.md"
    h.write(path)
    loaded = Handoff.load(path)
    assert loaded == h and loaded.degraded  # headings and the open fence in the task stay quoted


def test_degraded_short_task_and_backtick_runs():
    h = degraded("s", "做 ````` 这件事", why="")
    assert "``````text\n做 ````` 这件事\n``````" in h.scene
    assert "已截断" not in h.scene and "原因" not in h.doing
    assert Handoff.parse(h.to_markdown()) == h


@pytest.mark.parametrize(
    ("texts", "want"),
    [
        (("prompt is too long: 210000 tokens > 200000 maximum",), True),
        (("API Error: 400 Prompt is too long",), True),
        (("This model's maximum context length is 128000 tokens",), True),
        (("context length exceeded",), True),
        (("error: context_length_exceeded",), True),
        (("too many total text bytes: 9000000 > 8000000",), True),
        (("input length and `max_tokens` exceed context limit: 199000 + 8192 > 200000",), True),
        (("input length and max_tokens exceed context limit",), True),
        (("Request exceeds the context window",), True),
        (("The context window is full",), True),
        (("Input is too long for requested model.",), True),
        ((None, "", "prompt is too long"), True),
        (("overloaded_error", None),  False),
        (("rate limited",), False),
        (("string too long. Expected a string with maximum length 9, maximum context length",),
         False),
        (("I read about context windows today.",), False),
        ((), False),
    ],
)
def test_is_overflow(texts, want):
    assert is_overflow(*texts) is want

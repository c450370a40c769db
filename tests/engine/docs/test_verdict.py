"""Verdict: the judge's answers in every recognition step; feedback; round trips."""

from __future__ import annotations

import pytest

from engine._docs import Verdict

TITLED = """我逐项检查了判定清单。

## 结论
{c}

## 理由
第 2 项:`pytest -q` 有 3 个失败。

## 未通过
- pytest 全部通过
"""


@pytest.mark.parametrize(
    ("conclusion", "state"),
    [
        ("达成", "achieved"),
        ("已达成", "achieved"),
        ("全部通过", "achieved"),
        ("未达成", "not_yet"),  # contains "达成": the longer word starts first
        ("没达成", "not_yet"),
        ("没有达成", "not_yet"),
        ("尚未达成", "not_yet"),
        ("还没达到", "not_yet"),
        ("部分达成", "not_yet"),
        ("基本达成,但还有一项没过", "not_yet"),
        ("未通过", "not_yet"),
        ("测试无法通过", "not_yet"),
        ("无法达成", "unreachable"),
        ("不可达成:需要付费 API", "unreachable"),
        ("做不到", "unreachable"),
        ("无法验证", "unreachable"),
        ("没法验证", "unreachable"),
        ("验证不了", "unreachable"),
        ("无法判定", "unreachable"),
        ("此环境无法验证(目标平台 macOS,当前是 Linux 容器)", "unreachable"),
        ("achieved", "achieved"),
        ("**Achieved**", "achieved"),
        ("Passed", "achieved"),
        ("Not yet", "not_yet"),
        ("not_yet", "not_yet"),
        ("NOT ACHIEVED", "not_yet"),
        ("Failed", "not_yet"),
        ("unreachable", "unreachable"),
        ("Unverifiable in this environment", "unreachable"),
        ("Cannot verify: needs a real iPhone", "unreachable"),
        ("1", "achieved"),
        ("true", "achieved"),
        ("0", "not_yet"),
        ("False", "not_yet"),
        ("1(全部满足)", "achieved"),
        ("判定值 0", "not_yet"),
        ("嗯……", ""),
        ("(未填)", "not_yet"),  # placeholder: fall back to the whole text, which says 失败
    ],
)
def test_titled_conclusions(conclusion, state):
    v = Verdict.parse(TITLED.format(c=conclusion))
    assert v.state == state
    assert v.ok is (state != "")
    assert v.reason == "第 2 项:`pytest -q` 有 3 个失败。"
    assert v.failed == ["pytest 全部通过"]


@pytest.mark.parametrize(
    ("text", "state"),
    [
        # step 2: the whole untitled text is a bare 1/true/0/false
        ("1", "achieved"),
        ("  true\n", "achieved"),
        ("TRUE", "achieved"),
        ("0", "not_yet"),
        ("false", "not_yet"),
        ("`1`", "achieved"),
        # step 3: state words, leftmost first
        ("目标已达成，所有检查项都通过了。", "achieved"),
        ("还没有达成：第三项没通过。", "not_yet"),
        ("未达成。虽然第 1、2 项通过了，第 3 项没有。", "not_yet"),
        ("无法验证：目标平台是 macOS，这里是 Linux 容器，源码里的分支看着对但没法跑。", "unreachable"),
        ("Not yet. Two of three checks pass; the build fails on CI.", "not_yet"),
        ("All checks passed. Done.", "achieved"),
        ("The goal is unreachable: the API was removed upstream.", "unreachable"),
        ("Impossible without network access.", "unreachable"),
        ("The password check bypasses nothing; status: incomplete", "not_yet"),
        # step 4: an isolated digit
        ("判定：\n\n1", "achieved"),
        ("结果是 0 分", "not_yet"),
        ("score 10", ""),
        # step 5: nothing
        ("", ""),
        ("   ", ""),
        ("我需要更多信息才能判断。", ""),
    ],
)
def test_untitled_and_fallback_steps(text, state):
    assert Verdict.parse(text).state == state


@pytest.mark.parametrize(
    ("text", "state", "reason", "failed"),
    [
        ("结论：达成\n理由：三项都过了\n未通过：无", "achieved", "三项都过了", []),
        ("**判定**：未达成\n**原因**：缺文档\n**没通过**：\n1. 文档更新\n2. 示例可运行",
         "not_yet", "缺文档", ["文档更新", "示例可运行"]),
        ("## Verdict\nNot achieved\n## Reason\nTests fail.\n## Failed checks\n- [ ] tests pass",
         "not_yet", "Tests fail.", ["tests pass"]),
        ("## Conclusion: achieved\n## Reasoning\nAll green.\n## Failed\nNone",
         "achieved", "All green.", []),
        # the bold answer line became the failed-checks heading: fall back to the whole text
        ("## 结论\n**未通过**\n\n## 理由\n第二项没过", "not_yet", "第二项没过", []),
        # duplicated conclusion: the first with content wins
        ("## 结论\n\n## 结论\n未达成\n## 结论\n达成\n## 理由\nx", "not_yet", "x", []),
        # truncated in the reason's code block: the failed list never arrived
        ("## 结论\n未达成\n## 理由\n输出:\n```\nFAILED test_a\n## 未通过\n- a", "not_yet", "输出:", []),
        # a reason that mentions 达成 does not change a titled conclusion
        ("## 结论\n无法验证\n## 理由\n若在 macOS 上也许能达成", "unreachable", "若在 macOS 上也许能达成", []),
    ],
)
def test_section_forms(text, state, reason, failed):
    v = Verdict.parse(text)
    assert (v.state, v.reason, v.failed) == (state, reason, failed)


def test_untitled_text_is_its_own_reason_but_a_bare_digit_is_not():
    assert Verdict.parse("Not yet: the build fails.").reason == "Not yet: the build fails."
    assert Verdict.parse("1").reason == ""
    assert Verdict.parse("1").missing() == ["理由"]


@pytest.mark.parametrize(
    ("state", "ok", "achieved", "unreachable"),
    [
        ("achieved", True, True, False),
        ("not_yet", True, False, False),
        ("unreachable", True, False, True),
        ("", False, False, False),
    ],
)
def test_properties(state, ok, achieved, unreachable):
    v = Verdict(state, "r")
    assert (v.ok, v.achieved, v.unreachable) == (ok, achieved, unreachable)
    assert v.complete() is ok


@pytest.mark.parametrize(
    "v",
    [
        Verdict("achieved", "三项都过了"),
        Verdict("not_yet", "第 2 项失败", ["pytest 全部通过", "文档更新"]),
        Verdict("unreachable", "目标平台 macOS,此环境是 Linux", ["[此环境无法验证: macOS 上能编译]"]),
    ],
)
def test_round_trips(v, tmp_path):
    assert Verdict.parse(v.to_markdown()) == v
    assert Verdict.parse(v.prompt_block()) == v
    path = tmp_path / "verdict.md"
    v.write(path)
    assert Verdict.load(path) == v and Verdict.load(path).path == path


def test_feedback_says_continue_and_lists_failed_checks():
    fb = Verdict("not_yet", "第 2 项失败", ["pytest 全部通过", "文档更新"]).feedback()
    assert "还没有达成" in fb and "当前会话里接着做" in fb and "不要从头重来" in fb
    assert "理由：\n第 2 项失败" in fb
    assert "1. pytest 全部通过\n2. 文档更新" in fb


def test_feedback_for_ambiguous_and_unreachable():
    assert "按未达成处理" in Verdict().feedback()
    assert "理由" not in Verdict().feedback()
    fb = Verdict("unreachable", "人说:你判错了,这台机器能跑").feedback()
    assert "人说:你判错了" in fb


def test_missing_and_placeholders():
    assert Verdict().missing() == ["结论", "理由"]
    assert Verdict().to_markdown().count("(未填)") == 3


REAL_EN = """I ran the test suite and inspected the CLI output.

**Verdict:** NOT ACHIEVED

**Reason:** `mdh in.md` works, but tables render as plain text and 2 tests fail:
```
FAILED tests/test_table.py::test_align - AssertionError
## not a heading
```

**Failed checks:**
1. Tables render as <table>
2. pytest passes

Let me know if you want me to look deeper."""

REAL_ZH = """### 🧑‍⚖️ 判定结果：无法验证

### 理由
目标平台是 macOS，而当前运行环境是 Linux 容器；源码里的 darwin 分支看起来没问题，
但没法实际编译运行，不能据此判定通过。

### 未通过
- [此环境无法验证: macOS 上能编译]
"""


def test_real_judge_answers():
    v = Verdict.parse(REAL_EN)
    assert v.state == "not_yet"
    assert v.reason.startswith("`mdh in.md` works") and "## not a heading" in v.reason
    assert v.failed == ["Tables render as <table>", "pytest passes"]
    z = Verdict.parse(REAL_ZH)
    assert z.unreachable and z.failed == ["[此环境无法验证: macOS 上能编译]"]
    assert "Linux 容器" in z.reason

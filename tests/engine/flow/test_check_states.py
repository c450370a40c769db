"""Each check's state after a verdict: the checklist people see in Slack and in the final message."""

from engine import Goal, Verdict
from engine.authoring import check_states

GOAL = Goal("hello.py prints hello", ["hello.py exists", "python hello.py prints hello",
                                      "[unverifiable here: needs macOS] it runs on macOS"])


def states(verdict):
    return [c.state for c in check_states(GOAL, verdict)]


def test_before_any_verdict_every_check_is_pending_but_the_unverifiable_one():
    assert states(None) == ["pending", "pending", "unverifiable"]


def test_failed_items_match_by_number_or_by_text():
    by_number = Verdict.parse("## 结论\n未达成\n## 理由\n输出不对\n## 未通过\n- 第 2 项:输出是 hi")
    assert states(by_number) == ["passed", "failing", "unverifiable"]
    by_text = Verdict.parse("## Verdict\nnot achieved\n## Reason\nwrong\n## Failed\n- Python hello.py prints hello.")
    assert states(by_text) == ["passed", "failing", "unverifiable"]


def test_achieved_passes_every_check_and_an_unclear_verdict_confirms_none():
    assert states(Verdict.parse("## 结论\n达成\n## 理由\n都过了\n## 未通过\n无")) == ["passed", "passed", "unverifiable"]
    assert states(Verdict.parse("looks fine I guess")) == ["pending", "pending", "unverifiable"]
    assert states(Verdict.parse("## 结论\n未达成\n## 理由\n不行\n## 未通过\n无")) == ["pending", "pending", "unverifiable"]

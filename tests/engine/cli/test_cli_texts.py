"""The ``flower`` command's own texts: one table per language with the same keys and placeholders,
the Chinese ones exactly as the command printed them before the English table existed, and the
lines built from them (banners by display width, verdicts in words, why a run failed)."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from wcwidth import wcswidth

from engine.lang import speaking
from engine._cli.cli_failure import failure
from engine._flow.failure import flow_failure
from engine._flow.run_result import WakeState
from engine._cli.cli_texts import EN, TABLES, ZH, say
from engine._cli.view import event_line, step_banner, wake_banner
from engine._events import (
    AskEvent,
    HandoffEvent,
    Interrupted,
    RetryScheduled,
    StepStarted,
    TaskWarning,
    VerdictGiven,
    WaitingOnline,
)
from engine._run.manifest import StepResult

CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")

# What the command printed before this table existed (its constants, and its f-strings filled in).
BEFORE = {
    "wake_question": "接着上次? 直接回车 = 接着做;也可以说点新的;/new = 重开一件事(Ctrl-C 退出)",
    "new_question": "要做什么? 一句话就够,回车开始(Ctrl-C 退出)",
    "empty_ask": "要给一句诉求,例如 flower '帮我做一个 X'",
    "interrupt_question": "\n已打断。想补充什么?回车 = 照原样继续;再按一次 Ctrl-C 退出",
    "wake_eof": "\nflower: 没有输入(Ctrl-D),什么也没做。要接着做,直接回车;要说点新的,输入后回车。",
    "prompt_ctrl_c": "\nflower: 已取消(Ctrl-C),什么也没做;下次在这里运行 flower 还能接着做。",
    "once_needs_prompt": "flower once needs a prompt, e.g. flower once \"list the files\"",
    "gone": ("flower: the current folder no longer exists (deleted or moved while this shell was in it). "
             "cd into the workspace again (or pass -C <folder>) and run flower there."),
    "this_step": "这一步",
    "nothing_said": "  (什么也没说,接着做)",
    "go_on": "继续",
    "exited": "\n已退出;下次在这里运行 flower 会接着做。",
    "sent": "  -> 交给干活的协调者:它在下一个消息边界停下,带着这句话接着做",
    "ask_cancelled": "  (这个问题撤回了:这一步被打断,带着你的话接着做)",
}
BEFORE_FILLED = {
    ("hold_question", "干活·判定#1"): ("\n干活·判定#1正在进行,不打断它。想对干活的协调者说什么?它下一轮一开始就会收到;"
                                   "回车 = 不说;再按一次 Ctrl-C 退出"),
    ("wake_again", "a / b"): "\n<- 这一轮结束了,你的话还没交给干活的协调者;带着它再唤醒一次:a / b",
    ("held", "确认需求"): "  -> 记下了:确认需求结束后,干活的协调者下一轮一开始就会收到这句话",
    ("given", "use blue"): "  -> 交给干活的协调者:use blue",
    ("restored", "x"): "<- 上次 Ctrl-C 后说的话还没交给干活的协调者,这次它一开始就会收到:x",
    ("kept", "x"): "  ! 这些话还没交给干活的协调者,已记下,下次在这里运行 flower 会先交给它:x",
    ("dropped", "x"): "  (上次没交出去的话不再交给协调者(--new 重开了一件事):x)",
}


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_both_tables_have_the_same_keys_and_placeholders():
    assert set(ZH) == set(EN)
    for key in ZH:
        assert _fields(ZH[key]) == _fields(EN[key]), key


def test_the_english_table_has_no_cjk_character():
    assert not [k for k, v in EN.items() if CJK.search(v)]


def test_the_chinese_texts_are_the_ones_printed_before_byte_for_byte():
    with speaking("zh"):
        for key, before in BEFORE.items():
            assert say(key) == before, key
        for (key, value), before in BEFORE_FILLED.items():
            field = _fields(ZH[key]).pop()
            assert say(key, **{field: value}) == before, key


def test_the_chinese_event_lines_are_the_ones_printed_before():
    with speaking("zh"):
        assert event_line(StepStarted("干活", index=2, total=3, resumed=True, woke=3)) == (
            "== 干活 " + "=" * 30 + "  3/3  <- 接上次 · 第 3 次唤醒")
        assert event_line(RetryScheduled("干活", attempt=1, max_attempts=3, delay_s=4.6)) == (
            "  ! 模型暂时不可用,第 1/3 次失败,5s 后接着同一会话重试")
        assert event_line(WaitingOnline("干活", host="h", port=443, waited_s=12.2)) == (
            "  ! 连不上 h:443,已等 12s,继续等")
        assert event_line(HandoffEvent("干活", phase="near", used=150_000, due_at=170_000)) == (
            "  ~ 上下文 150.0K,接近交接线 170.0K")
        assert event_line(HandoffEvent("干活", phase="writing", used=180_000)) == (
            "  ~ 上下文满了(180.0K),正在写交接文档")
        assert event_line(HandoffEvent("干活", phase="done", degraded=True, path="p.md")) == (
            "  ~ 交接完成(降级),新会话接手:p.md")
        assert event_line(TaskWarning("干活", unverifiable=("a",), total=3, path="g.md")) == (
            "  ! 目标里有 1/3 条在这个环境无法验证,见 g.md")
        assert event_line(Interrupted("干活", said="hi")) == "  <- 收到:hi"
        state = WakeState(waking=True, checks=15, context=80_200, woke=2)
        assert wake_banner(Path("/nowhere/proj"), state) == (
            "<- 在 /nowhere/proj 接上上次  需求已确认 · 目标 15 条 · 干活上下文 80.2K · 第 3 次唤醒")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_verdicts_are_words_of_the_language_not_state_codes(lang):
    with speaking(lang):
        lines = [event_line(VerdictGiven("干活", round=1, state=s, reason="r", failed=("x",)))
                 for s in ("achieved", "not_yet", "unreachable", "unclear")]
    for line in lines:
        assert not re.search(r"#1: (achieved|not_yet|unreachable|unclear)\b", line), line
        assert line.endswith("\n    - x")
    assert len(set(lines)) == 4
    if lang == "zh":
        assert lines[0].startswith("  判定 #1: 达成  r") and lines[1].startswith("  判定 #1: 未达成  r")
    else:
        assert lines[0].startswith("  verdict #1: goal achieved  r") and "not yet" in lines[1]


def test_an_unclear_verdict_says_why_when_the_judges_run_failed():
    with speaking("en"):
        line = event_line(VerdictGiven("work", round=2, state="unclear", error="judge crashed"))
    assert line == "  verdict #2: no verdict could be read  judge crashed"


def test_step_banners_line_up_by_display_width_whatever_the_script():
    banners = [step_banner(StepStarted(name, index=2, total=3))
               for name in ("干活", "work", "干活·判定", "set the goal", "确认需求")]
    columns = {wcswidth(b.split("  3/3")[0]) for b in banners}
    assert columns == {38}, banners


def test_a_failed_run_names_the_cause_and_the_next_step_not_the_step():
    bad_key = StepResult("确认需求", ok=False, error="Invalid API key · Fix external API key",
                         error_kind="authentication_failed")
    with speaking("en"):
        why = failure(flow_failure({"_ok": False, "_failed": "确认需求", "_results": {"确认需求": bad_key}}))
        assert why.reason.startswith("the model refused the API key (401: authentication_failed Invalid API key")
        assert "ANTHROPIC_API_KEY" in why.next and "run flower again" in why.next
        other = StepResult("work", ok=False, error="boom", error_kind="server_error")
        assert failure(flow_failure({"_failed": "work", "_results": {"work": other}})).reason == (
            "the step work failed: server_error boom")
        ran_out = failure(flow_failure({"_failed": "work", "_results": {"work": StepResult("work", ok=True)}}), rounds=3)
        assert ran_out.reason == "the judge's 3 rounds ran out before the goal was achieved"
        assert "--new" in ran_out.next
        assert failure(flow_failure({"_aborted": "the goal cannot be verified here"})).reason == (
            "the goal cannot be verified here")
    with speaking("zh"):
        why = failure(flow_failure({"_failed": "确认需求", "_results": {"确认需求": bad_key}}))
    assert why.reason.startswith("模型拒绝了 API key(401:") and "flower" in why.next


def test_every_question_is_asked_with_no_ask_event_line():
    assert event_line(AskEvent("干活", phase="asked", question="q")) is None
    assert set(TABLES) == {"en", "zh"}

"""The `flower` command as a real subprocess on a pseudo-terminal, against the offline model."""

from __future__ import annotations

import pytest

from engine.testing import hold, prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, JUDGE, COORDINATOR
from tests.helpers.flower_cli import ACHIEVED, BRIEF, GOAL, flower


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "proj"
    ws.mkdir()
    return ws


def script(fm, coordinator_fault=None):
    fm.rule(tool_use("mcp__human__ask", {"question": "用什么语言?", "options": ["Python", "Go"]}),
            text(BRIEF.format(lang="{answer}")), when=CLARIFIER)
    fm.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], repeat_last=True)
    fm.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], repeat_last=True)
    fm.rule(text("adjusted to blue"), when=[COORDINATOR, prompt_contains("use blue")])
    fm.rule(text("work done", fault=coordinator_fault), when=COORDINATOR, repeat_last=True)


def test_question_at_the_prompt_then_wake_banner(fake_model, ws):
    script(fake_model)
    term = flower(ws, "写 hello")
    term.expect("用什么语言?")
    term.expect("2. Go")
    term.type("1\n")
    assert term.wait() == 0, term.out[-3000:]
    assert "== 确认需求" in term.out and "== 干活" in term.out and "== 结束:达成" in term.out
    assert "Python" in (ws / ".flower" / "notes" / "问答记录.md").read_text()

    again = flower(ws)  # nothing said, in a terminal: the wake banner, then the wake prompt
    again.expect("<- 在")
    again.expect("接着上次?")
    again.type("\n")
    assert again.wait() == 0, again.out[-3000:]
    assert "需求已确认 · 目标 1 条" in again.out and "第 2 次唤醒" in again.out
    assert "<- 接上次" in again.out


def test_ctrl_c_once_adds_a_word_and_twice_exits(fake_model, ws):
    held = hold()
    script(fake_model, coordinator_fault=held)
    term = flower(ws, "写 hello")
    term.expect("用什么语言?")
    term.type("2\n")
    held.wait_arrived()
    term.type("\x03")  # Ctrl-C once: flower asks for a word, the CLI keeps its session
    term.expect("想补充什么")
    term.type("use blue\n")
    term.expect("收到:use blue")
    held.release()
    assert term.wait() == 0, term.out[-3000:]
    words = [r for r in fake_model.message_requests if "use blue" in r.prompt]
    assert words and "写 hello" in words[0].shown  # the same session went on with the word

    second = hold()
    fake_model.rules[-1].replies[0] = text("work done", fault=second)
    term = flower(ws, "再来一次")
    second.wait_arrived()
    term.type("\x03")
    term.expect("想补充什么")
    term.type("\x03")  # twice: exit, storage closed, the next run continues
    assert term.wait() == 130, term.out[-3000:]
    second.release()
    assert "下次在这里运行 flower 会接着做" in term.out

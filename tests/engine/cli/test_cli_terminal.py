"""The ``flower`` command on a real pseudo-terminal: where a person's words go after a Ctrl-C,
that none is lost, that nothing typed ahead answers a question, and what the prompts say on
Ctrl-D / Ctrl-C. Each against the offline model, with the real CLI."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from engine._agents.rules import JUDGE_RULES
from engine._cli.words import UNSENT_FILE
from engine._run.runtime import Runtime
from engine.testing import hold, prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE
from tests.helpers.flower_cli import ACHIEVED, BRIEF, GOAL, Terminal, flower

NOT_YET = "## 结论\n未达成\n## 理由\n还差一点\n## 未通过\n- 有 hello"
QUESTION = {"question": "用什么语言?", "options": ["Python", "Go"]}
ASK = tool_use("mcp__human__ask", QUESTION)


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "proj"
    ws.mkdir()
    return ws


def _judged(fm, *verdicts: str) -> None:
    fm.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], repeat_last=True)
    fm.rule(*[text(v) for v in verdicts], when=[JUDGE, prompt_contains("判定这一轮")], repeat_last=True)


def _said_to(fm, role, words: str) -> list:
    return [r for r in fm.message_requests if role(r.body) and words in r.shown]


def _expect_again(term: Terminal, needle: str, timeout: float = 60) -> None:
    """Wait until ``needle`` was printed a second time (two Ctrl-Cs typed at once would reach
    the process as one signal: the kernel merges a pending SIGINT with the next)."""
    with term._changed:
        term._changed.wait_for(lambda: term.out.count(needle) >= 2 or term.proc.poll() is not None, timeout)
    assert term.out.count(needle) >= 2, term.out[-3000:]


def _qa(ws) -> str:
    return (ws / ".flower" / "notes" / "问答记录.md").read_text()


def test_words_after_ctrl_c_at_an_open_question_are_held_for_the_coordinator(fake_model, ws):
    blue = hold()
    fake_model.rule(ASK, text(BRIEF.format(lang="{answer}")), when=CLARIFIER)
    _judged(fake_model, ACHIEVED)
    fake_model.rule(text("adjusted to blue", fault=blue), when=[COORDINATOR, prompt_contains("use blue")],
                    repeat_last=True)
    fake_model.rule(text("work done"), when=COORDINATOR, repeat_last=True)
    term = flower(ws, "写 hello")
    term.expect("2. Go")
    term.type("\x03")  # the clarifier's question is open
    term.expect("确认需求正在进行,不打断它")
    term.type("use blue\n")
    term.expect("记下了")
    term.expect("(still waiting for your answer)")  # one reader: the words did not answer it
    term.type("1\n")
    term.expect("交给干活的协调者:use blue")  # given as the coordinator's turn started
    term.expect("收到:use blue")
    blue.wait_arrived()
    term.type("\x03")  # a single Ctrl-C again asks for a word, it does not exit
    term.expect("想补充什么")
    blue.release()
    term.type("\n")
    assert term.wait() == 0, term.out[-3000:]
    assert "Python" in _qa(ws) and "use blue" not in _qa(ws)
    assert not _said_to(fake_model, CLARIFIER, "use blue")
    assert _said_to(fake_model, COORDINATOR, "use blue")
    assert not (ws / "runs" / UNSENT_FILE).exists()  # in the coordinator's transcript: nothing kept


def test_words_said_while_the_judge_runs_reach_the_coordinators_next_round(fake_model, ws):
    judging = hold()
    fake_model.rule(text(BRIEF.format(lang="Python")), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("tests added")], repeat_last=True)
    fake_model.rule(text(NOT_YET, fault=judging), when=[JUDGE, prompt_contains("判定这一轮")], repeat_last=True)
    fake_model.rule(text("tests added"), when=[COORDINATOR, prompt_contains("add tests")], repeat_last=True)
    fake_model.rule(text("work done"), when=COORDINATOR, repeat_last=True)
    term = flower(ws, "写 hello")
    judging.wait_arrived()
    term.type("\x03")
    term.expect("干活·判定#1正在进行,不打断它")
    term.type("add tests\n")
    term.expect("记下了")
    judging.release()
    term.expect("交给干活的协调者:add tests")
    assert term.wait() == 0, term.out[-3000:]
    assert _said_to(fake_model, COORDINATOR, "add tests")
    judge_marker = JUDGE_RULES.splitlines()[0][:12]
    assert not [r for r in fake_model.message_requests
                if judge_marker in r.system and Runtime.INTERRUPT_NOTE.strip()[:12] in r.shown]


def test_words_held_when_the_judge_passes_wake_the_run_once_more(fake_model, ws):
    judging = hold()
    fake_model.rule(text(BRIEF.format(lang="Python")), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], repeat_last=True)
    fake_model.rule(text(ACHIEVED, fault=judging), when=[JUDGE, prompt_contains("判定这一轮")], repeat_last=True)
    fake_model.rule(text("work done"), when=COORDINATOR, repeat_last=True)
    term = flower(ws, "写 hello")
    judging.wait_arrived()
    term.type("\x03")
    term.expect("不打断它")
    term.type("dark mode too\n")
    term.expect("记下了")
    judging.release()
    term.expect("带着它再唤醒一次:dark mode too")
    assert term.wait() == 0, term.out[-3000:]
    assert _said_to(fake_model, COORDINATOR, "dark mode too")
    assert "dark mode too" in (ws / ".flower" / "需求.md").read_text()  # a wake sentence, in the brief


def test_ctrl_c_twice_right_after_the_word_was_acknowledged_loses_nothing(fake_model, ws):
    held = hold()
    fake_model.rule(text(BRIEF.format(lang="Python")), when=CLARIFIER)
    _judged(fake_model, ACHIEVED)
    fake_model.rule(text("adjusted to blue"), when=[COORDINATOR, prompt_contains("use blue")], repeat_last=True)
    fake_model.rule(text("work done", fault=held), when=COORDINATOR, repeat_last=True)
    term = flower(ws, "写 hello")
    held.wait_arrived()
    term.type("\x03")
    term.expect("想补充什么")
    term.type("use blue\n")
    term.expect("收到:use blue")
    term.type("\x03")
    _expect_again(term, "想补充什么")
    term.type("\x03")  # well within a second: the resumed CLI has not stored the words yet
    assert term.wait() == 130, term.out[-3000:]
    held.release()
    before = len(fake_model.message_requests)

    again = Terminal([sys.executable, "-m", "engine.cli"], ws)
    again.expect("接着上次?")
    again.type("\n")
    assert again.wait() == 0, again.out[-3000:]
    later = fake_model.message_requests[before:]
    assert [r for r in later if COORDINATOR(r.body) and "use blue" in r.shown], again.out[-3000:]
    assert not (ws / "runs" / UNSENT_FILE).exists()


def test_text_typed_while_work_runs_never_answers_the_next_question(fake_model, ws):
    thinking = hold()
    fake_model.rule(tool_use("mcp__human__ask", QUESTION, fault=thinking), text(BRIEF.format(lang="{answer}")),
                    when=CLARIFIER)
    _judged(fake_model, ACHIEVED)
    fake_model.rule(text("work done"), when=COORDINATOR, repeat_last=True)
    term = flower(ws, "写 hello")
    thinking.wait_arrived()
    term.type("Go\n")  # typed while the clarifier works, before any question is shown
    term.expect("Go")  # the terminal's echo: it is in the terminal's input queue now
    thinking.release()
    term.expect("not taken as its answer: 'Go'")
    term.type("1\n")
    assert term.wait() == 0, term.out[-3000:]
    assert "Python" in _qa(ws) and "Go" not in _qa(ws).split("用什么语言?")[-1].replace("2. Go", "")


@pytest.fixture
def woken(ws):
    """A folder that has a run: a complete brief on disk."""
    (ws / ".flower").mkdir()
    (ws / ".flower" / "需求.md").write_text(BRIEF.format(lang="Python"), encoding="utf-8")
    return ws


def test_ctrl_d_at_the_wake_prompt_says_nothing_was_done_and_exits_0(fake_model, woken):
    term = flower(woken)
    term.expect("接着上次?")
    term.type("\x04")
    assert term.wait() == 0, term.out
    assert "没有输入(Ctrl-D),什么也没做" in term.out and "要给一句诉求" not in term.out
    assert fake_model.message_requests == []


def test_ctrl_c_at_the_wake_prompt_ends_the_line_and_says_so(fake_model, woken):
    term = flower(woken)
    term.expect("接着上次?")
    term.expect("> ", after="接着上次?")  # the line is being read: a person presses Ctrl-C at the "> "
    term.type("\x03")
    try:
        code = term.wait(60)
    except subprocess.TimeoutExpired:  # the key came between the "> " and the read (a busy machine): again
        term.type("\x03")
        code = term.wait()
    assert code == 130, term.out
    assert re.search(r"\n\s*flower: 已取消\(Ctrl-C\),什么也没做", term.out), term.out


def test_a_deleted_working_folder_gives_one_line(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f'cd "{gone}" && rmdir "{gone}" && exec "{sys.executable}" -m engine.cli "写 hello"'
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "no longer exists" in done.stderr

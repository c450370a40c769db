"""The live progress line of ``flower`` while a step runs: redrawn in place on a terminal, plain
and rare lines on a log, never over a question. The unit tests drive ``Progress`` with a clock of
their own; the end-to-end ones run the real command against the offline model, a step held."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import threading
import time

from engine.lang import speaking
from engine._cli.progress import Progress, clock_text
from engine._cli.screen import CLEAR, Screen, fit
from engine._events import AskEvent, ResultReported, SessionStarted, StepStarted, TurnEnded, WorkflowDone
from engine.testing import hold, prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE
from tests.helpers.flower_cli import ACHIEVED, BRIEF, GOAL, flower

DRAWN = re.compile(r"\r\x1b\[2K  ~ 干活 · (\d+):(\d\d)")  # a redraw of the work step's line


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _progress(tty: bool, reading=lambda: False):
    out, clock = io.StringIO(), _Clock()
    return Progress(Screen(out, tty=tty), reading, clock=clock), out, clock


def test_clock_text():
    assert [clock_text(s) for s in (0, 7.9, 65, 3723)] == ["0:00", "0:07", "1:05", "1:02:03"]


def test_fit_cuts_by_display_width():
    assert fit("干活干活", 5) == "干活" and fit("work", 10) == "work"


def test_on_a_terminal_the_line_is_redrawn_in_place_and_cleared_before_any_other_text():
    p, out, clock = _progress(tty=True)
    with speaking("en"):
        p(StepStarted("work", index=2, total=3))
        p(SessionStarted("work", session_id="s"))
        p(TurnEnded("work", context=12_300))
        p(ResultReported("work", cost_usd=0.123))
        clock.now += 5
        p.tick()
        assert out.getvalue() == CLEAR + "  ~ work · 0:05 · context 12.3K · $0.12"
        print("== next", file=p.screen)
        assert out.getvalue().endswith("$0.12" + CLEAR + "== next\n")
        p(SessionStarted("work · judge#1", session_id="j"))
        p(ResultReported("work · judge#1", cost_usd=0.01))
        clock.now += 1
        p.tick()
        assert out.getvalue().endswith(CLEAR + "  ~ work · judge#1 · 0:06 · $0.13")


def test_nothing_is_drawn_while_a_line_is_read_or_a_question_waits():
    reading = [False]
    p, out, clock = _progress(tty=True, reading=lambda: reading[0])
    p(StepStarted("干活", index=2, total=3))
    p(AskEvent("干活", phase="asked", question="q"))
    p.tick()
    p(AskEvent("干活", phase="answered", question="q"))
    reading[0] = True  # the Ctrl-C prompt is open
    p.tick()
    assert out.getvalue() == ""
    reading[0] = False
    p.tick()
    assert out.getvalue().startswith(CLEAR + "  ~ 干活 · 0:00")
    p(WorkflowDone("starter", ok=True))
    p.tick()
    assert out.getvalue().endswith(CLEAR)  # cleared, and not drawn again between runs


def test_on_a_log_lines_come_when_who_works_changes_or_every_30_seconds():
    p, out, clock = _progress(tty=False)
    p(StepStarted("干活", index=2, total=3))
    p(SessionStarted("干活", session_id="s"))
    for _ in range(29):
        clock.now += 1
        p.tick()
    assert out.getvalue() == ""  # the banner said it; nothing changed
    clock.now += 1
    p.tick()
    p(SessionStarted("干活·判定#1", session_id="j"))
    clock.now += 1
    p.tick()
    p.tick()
    assert out.getvalue().splitlines() == ["  ~ 干活 · 0:30 · $0.00", "  ~ 干活·判定#1 · 0:31 · $0.00"]
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()


def _judged(fm, *, verdict_fault=None) -> None:
    fm.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], repeat_last=True)
    fm.rule(text(ACHIEVED, fault=verdict_fault), when=[JUDGE, prompt_contains("判定这一轮")], repeat_last=True)


def test_a_held_step_shows_a_progress_line_whose_elapsed_time_grows_on_a_terminal(fake_model, tmp_path):
    held = hold()
    fake_model.rule(tool_use("mcp__human__ask", {"question": "用什么语言?", "options": ["Python", "Go"]}),
                    text(BRIEF.format(lang="{answer}")), when=CLARIFIER)
    _judged(fake_model)
    fake_model.rule(text("work done", fault=held), when=COORDINATOR, repeat_last=True)
    term = flower(tmp_path, "写 hello")
    term.expect("2. Go")
    asked_at = len(term.out)
    time.sleep(2.5)  # proving an absence: no progress line is drawn over an open question
    assert "\x1b[2K  ~" not in term.out[asked_at:], term.out[asked_at:]
    term.type("1\n")
    held.wait_arrived()
    with term._changed:
        term._changed.wait_for(lambda: len({m.group(0) for m in DRAWN.finditer(term.out)}) >= 3, 240)
    held.release()
    assert term.wait() == 0, term.out[-3000:]
    seconds = [int(m) * 60 + int(s) for m, s in DRAWN.findall(term.out)]
    assert len(set(seconds)) >= 3 and seconds == sorted(seconds), seconds
    assert not re.search(r"\x1b\[2K  ~ [^\r\n]*\n", term.out)  # always cleared, never left as a line
    assert "\r\x1b[2K== 结束:达成" in term.out or "\r\x1b[2K  判定 #1" in term.out


def test_with_stderr_not_a_terminal_progress_is_plain_and_rare(fake_model, tmp_path):
    judging = hold()
    fake_model.rule(text(BRIEF.format(lang="Python")), when=CLARIFIER)
    _judged(fake_model, verdict_fault=judging)
    fake_model.rule(text("work done"), when=COORDINATOR, repeat_last=True)
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "写 hello"], cwd=tmp_path,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    err: list[str] = []
    seen = threading.Event()

    def read() -> None:
        for line in proc.stderr:
            err.append(line)
            if line.startswith("  ~ 干活·判定#1 · "):
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    judging.wait_arrived(240)
    assert seen.wait(240), "".join(err)[-3000:]  # who works changed: the judge, said once
    judging.release()
    assert proc.wait(300) == 0, "".join(err)[-3000:]
    reader.join(60)
    out = "".join(err)
    assert "\r" not in out and "\x1b" not in out
    progress = [line for line in err if line.startswith("  ~ ")]
    assert 1 <= len(progress) <= 4, progress

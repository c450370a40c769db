"""The `flower` command as a real subprocess on a pseudo-terminal, against the offline model."""

from __future__ import annotations

import fcntl
import os
import pty
import subprocess
import sys
import termios
import threading

import pytest

from engine.testing import hold, prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, JUDGE, COORDINATOR

BRIEF = ("## 目标\n写 hello\n## 验收标准\n有 hello\n## 边界\n无\n## 未知与假设\n用 {lang}")
GOAL = "## 目标\n有 hello\n## 判定清单\n- 有 hello"
ACHIEVED = "## 结论\n达成\n## 理由\n好\n## 未通过\n无"


class Terminal:
    """A process on a pseudo-terminal: type into it, wait for what it prints."""

    def __init__(self, args: list[str], cwd) -> None:
        master, slave = pty.openpty()
        self.master = master
        self.proc = subprocess.Popen(
            args, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))  # a real controlling tty
        os.close(slave)
        self.out = ""
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                chunk = b""
            with self._changed:
                if not chunk:
                    self._changed.notify_all()
                    return
                self.out += chunk.decode("utf-8", "replace")
                self._changed.notify_all()

    def expect(self, needle: str, timeout: float = 180) -> None:
        with self._changed:
            ok = self._changed.wait_for(lambda: needle in self.out or self.proc.poll() is not None,
                                        timeout)
        assert ok and needle in self.out, f"{needle!r} never appeared; output:\n{self.out[-3000:]}"

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def wait(self, timeout: float = 300) -> int:
        return self.proc.wait(timeout)


def flower(ws, *args: str) -> Terminal:
    return Terminal([sys.executable, "-m", "engine.cli", *args], ws)


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

"""The ``flower`` command as a real subprocess on a pseudo-terminal, for the tests that drive it
(tests/e2e/test_flower_cli.py, tests/engine/test_cli_*.py): a brief, a goal and a verdict the
offline model answers with, ``Terminal`` to type into the process and wait for what it prints, and
``flower`` to start the command in a workspace."""

from __future__ import annotations

import fcntl
import os
import pty
import subprocess
import sys
import termios
import threading

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

    def expect(self, needle: str, timeout: float = 180, *, after: str = "") -> None:
        """Wait until ``needle`` is in the output (past the first ``after``, when given)."""
        def seen() -> bool:
            start = self.out.find(after) if after else 0
            return start >= 0 and needle in self.out[start + len(after):]

        with self._changed:
            ok = self._changed.wait_for(lambda: seen() or self.proc.poll() is not None, timeout)
        assert ok and seen(), f"{needle!r} never appeared; output:\n{self.out[-3000:]}"

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def wait(self, timeout: float = 300) -> int:
        return self.proc.wait(timeout)


def flower(ws, *args: str) -> Terminal:
    return Terminal([sys.executable, "-m", "engine.cli", *args], ws)

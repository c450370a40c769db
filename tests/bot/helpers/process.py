"""The bot as a real process (``python -m bot``) and what the process tests check afterwards.

``BotProcess`` starts the bot (again) in its own process group on one FLOWER_HOME and kills it the
way a service manager does; ``bot_env`` is that process's environment (the ``bot_process``
fixture in tests/bot/conftest.py puts the two together).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from tests.bot.helpers.app import CHANNEL


class BotProcess:
    """``python -m bot`` started (again) on one FLOWER_HOME; output goes to numbered log files.
    ``module`` is what ``-m`` runs: the bot, or a helper wrapping it (tests/bot/helpers/swapping_bot.py)."""

    def __init__(self, tmp_path: Path, env: dict[str, str], *, module: str = "bot") -> None:
        self.tmp_path, self.env, self.module = tmp_path, env, module
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        """Start the bot in a new session (its own process group), output to ``bot-<n>.log``."""
        self.starts += 1
        log = self.tmp_path / f"bot-{self.starts}.log"
        with log.open("wb") as out:  # files, not pipes: an orphaned CLI child would hold a pipe open
            self.proc = subprocess.Popen([sys.executable, "-m", self.module], env=self.env, cwd=self.tmp_path,
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)

    def kill(self) -> None:
        """SIGKILL the whole group (the bot and its CLI children), as a service manager does."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()

    def logs(self) -> str:
        """Every start's output, in order (printed at teardown: pytest shows it when a test fails)."""
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.tmp_path.glob("bot-*.log")))


async def first_mention(bot_process, slack) -> str:
    """Start the bot, wait for its connection, mention it once; the new thread's ts."""
    bot_process.start()
    await slack.wait_connected(1)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event)
    return event["ts"]


def first_button(q_call) -> dict:
    """The first button of a posted question."""
    return [e for b in q_call.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button"][0]


def posts(slack, thread_ts, needle):
    return [c for c in slack.calls("chat.postMessage", thread_ts=thread_ts) if needle in (c.body.get("text") or "")]


def assert_home_is_sound(home: Path) -> None:
    """The bot's db passes SQLite's integrity check and every JSON file under home parses."""
    with closing(sqlite3.connect(home / "bot.db")) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    found = list(home.rglob("*.json"))
    assert found, "no JSON file under FLOWER_HOME"
    for path in found:
        json.loads(path.read_text(encoding="utf-8"))


def assert_no_secrets(slack, fake_model, bot_process, home: Path) -> None:
    """Tokens and the API key appear nowhere the bot writes: its logs, what it posted to Slack
    (bodies; the Authorization header is where a token belongs), files under FLOWER_HOME."""
    secrets = [slack.bot_token, slack.app_token, fake_model.env["ANTHROPIC_API_KEY"]]
    places = {"logs": bot_process.logs(),
              "slack": json.dumps([c.body for c in slack.calls()], ensure_ascii=False, default=str)}
    for path in home.rglob("*"):
        if path.is_file():
            places[str(path)] = path.read_bytes().decode("utf-8", "replace")
    leaks = [(where, secret) for where, text in places.items() for secret in secrets if secret in text]
    assert leaks == []


def bot_env(slack_env, fake_model, tmp_path) -> dict[str, str]:
    """The environment of ``python -m bot`` on this test's FLOWER_HOME, the fake Slack and model."""
    return {**os.environ, **fake_model.env, **slack_env.env(), "FLOWER_HOME": str(tmp_path / "home"),
            "FLOWER_ALLOW_EVERYONE": "1",  # the tests' fake workspace: every fake person may start runs
            "PYTHONPATH": os.pathsep.join(p for p in [str(Path(__file__).resolve().parents[3]),
                                                       os.environ.get("PYTHONPATH", "")] if p)}

"""The bot as a real process: killed with SIGKILL mid-run, started again, nothing lost or said twice.

The fake Slack serves from this test's event loop and the fake model from its own thread; the
bot is ``python -m bot`` in its own process group, killed the way a service manager kills it
(SIGKILL to the whole group, so the Claude Code CLI children die with it).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bot.store import ThreadKey
from engine.testing import hold, prompt_contains, text
from engine.workflow.starter import starter_paths
from tests.bot.test_app_e2e import (
    ACHIEVED, BRIEF, CHANNEL, CLARIFIER, COORDINATOR, GOAL, JUDGE, question, script, workspace,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")

RESUMED = "bot restarted"  # the resume notice of a run that had not confirmed its requirement yet
WOKE = "Picking up where this left off"  # the wake banner of a run past its requirement


class BotProcess:
    """``python -m bot`` started (again) on one FLOWER_HOME; output goes to numbered log files."""

    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        self.tmp_path, self.env = tmp_path, env
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        log = self.tmp_path / f"bot-{self.starts}.log"
        with log.open("wb") as out:  # files, not pipes: an orphaned CLI child would hold a pipe open
            self.proc = subprocess.Popen([sys.executable, "-m", "bot"], env=self.env, cwd=self.tmp_path,
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)

    def kill(self) -> None:
        """SIGKILL the whole group (the bot and its CLI children), as a service manager does."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.tmp_path.glob("bot-*.log")))


@pytest.fixture
def bot_process(slack_env, fake_model, tmp_path):
    env = {**os.environ, **fake_model.env, **slack_env.env(), "FLOWER_HOME": str(tmp_path / "home"),
           "PYTHONPATH": os.pathsep.join(p for p in [str(Path(__file__).resolve().parents[2]),
                                                      os.environ.get("PYTHONPATH", "")] if p)}
    bot = BotProcess(tmp_path, env)
    yield bot
    bot.kill()


async def posted(slack, thread_ts, needle, *, after=0, timeout=60):
    """The first chat.postMessage in the thread (index >= ``after``) whose text contains ``needle``."""
    return await slack.wait_for("chat.postMessage", lambda c: needle in (c.body.get("text") or ""),
                                after=after, thread_ts=thread_ts, timeout=timeout)


def posts(slack, thread_ts, needle):
    return [c for c in slack.calls("chat.postMessage", thread_ts=thread_ts) if needle in (c.body.get("text") or "")]


def assert_home_is_sound(home: Path) -> None:
    """The bot's db passes SQLite's integrity check and every JSON file under home parses."""
    with sqlite3.connect(home / "bot.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    found = list(home.rglob("*.json"))
    assert found, "no JSON file under FLOWER_HOME"
    for path in found:
        json.loads(path.read_text(encoding="utf-8"))


async def test_sigkill_while_a_question_is_pending(bot_process, slack_env, fake_model, tmp_path):
    slack = slack_env
    script(fake_model, verdicts=(ACHIEVED,))
    bot_process.start()
    await slack.wait_connected(1)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    q_ts, q_call = await question(slack, thread)
    bot_process.kill()

    mark = slack.mark()
    bot_process.start()
    await slack.wait_connected(2)
    await posted(slack, thread, RESUMED, after=mark)
    await fake_model.wait_for(lambda r: CLARIFIER(r.body), count=2)  # the resumed clarifier asks again, in the model
    button = [e for b in q_call.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button"][0]
    await slack.click(CHANNEL, q_ts, button["action_id"], user="U0BOB")  # the button from before the kill
    await posted(slack, thread, "Done: the goal is achieved", timeout=180)

    assert len(posts(slack, thread, RESUMED)) == 1
    assert not posts(slack, thread, WOKE)
    questions = [c for c in slack.calls("chat.postMessage", thread_ts=thread)
                 if (c.body.get("text") or "").startswith("Question")]
    assert len(questions) == 1
    assert len(posts(slack, thread, "Done: the goal is achieved")) == 1
    assert len(posts(slack, thread, "Started")) == 1
    ws = workspace(tmp_path, thread)
    assert "Python" in starter_paths(ws).brief.read_text() and (ws / "hello.txt").read_text() == "hi"
    clar = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
    assert any("Python" in t for _, t in clar[-1].tool_results)  # the old button's answer reached the model
    bot_process.kill()
    assert_home_is_sound(tmp_path / "home")


async def test_sigkill_while_a_step_runs(bot_process, slack_env, fake_model, tmp_path):
    slack = slack_env
    held = hold()
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(text("working", fault=held), text("resumed and done"), when=COORDINATOR, repeat_last=True)
    bot_process.start()
    await slack.wait_connected(1)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    first = await held.arrived()
    bot_process.kill()
    held.release()

    mark = slack.mark()
    bot_process.start()
    await slack.wait_connected(2)
    await posted(slack, thread, WOKE, after=mark)
    await posted(slack, thread, "Done: the goal is achieved", timeout=180)

    assert len(posts(slack, thread, WOKE)) == 1
    assert not posts(slack, thread, RESUMED)
    assert len(posts(slack, thread, "Done: the goal is achieved")) == 1
    resumed = [r for r in fake_model.message_requests if COORDINATOR(r.body) and r.index > first.index]
    assert resumed and "写个 hello.txt" in resumed[0].shown  # the same session went on
    key = ThreadKey("T0001", CHANNEL, thread)
    bot_process.kill()
    assert_home_is_sound(tmp_path / "home")
    with sqlite3.connect(tmp_path / "home" / "bot.db") as db:
        state = db.execute("SELECT state FROM threads WHERE team=? AND channel=? AND thread_ts=?", key).fetchone()
    assert state == ("done",)

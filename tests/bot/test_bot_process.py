"""The bot as a real process: killed with SIGKILL mid-run, started again, nothing lost or said twice.

The fake Slack serves from this test's event loop and the fake model from its own thread; the
bot is ``python -m bot`` in its own process group, killed the way a service manager kills it
(SIGKILL to the whole group, so the Claude Code CLI children die with it).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey
from bot.main import start_bot
from bot.outbound.outbox import NOTICE_EVENT, Outbox
from bot.runs import status_feed
from bot.runs.jobs import BotOptions
from bot.settings.config import load_config
from bot.store.bot_store import BotStore
from engine import Resilience
from engine._flow.starter import WORK_STEP, starter_paths
from engine._lang.zh import WAKE_SILENT
from engine._run.lineage import LINEAGE_FILE
from engine.testing import hold, prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE, WORKER
from tests.bot.helpers.app import ACHIEVED, BRIEF, CHANNEL, GOAL, posted, question, script, workspace
from tests.bot.helpers.process import (
    assert_home_is_sound,
    assert_no_secrets,
    first_button,
    first_mention,
    posts,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")

RESUMED = "bot restarted"  # the resume notice of a run that had not confirmed its requirement yet
WOKE = "Picking up where this left off"  # the wake banner of a run past its requirement


async def test_sigkill_while_a_question_is_pending(bot_process, slack_env, fake_model, tmp_path):
    slack = slack_env
    script(fake_model, verdicts=(ACHIEVED,))
    thread = await first_mention(bot_process, slack)
    q_ts, q_call = await question(slack, thread)
    bot_process.kill()

    mark = slack.mark()
    bot_process.start()
    await slack.wait_connected(2)
    await posted(slack, thread, RESUMED, after=mark)
    await fake_model.wait_for(lambda r: CLARIFIER(r.body), count=2)  # the resumed clarifier asks again, in the model
    button = first_button(q_call)
    await slack.click(CHANNEL, q_ts, button["action_id"], user="U0BOB")  # the button from before the kill
    await posted(slack, thread, "Done: the goal is achieved")

    resumed = posts(slack, thread, RESUMED)
    assert len(resumed) == 1, [(c.index, c.status, (c.body.get("metadata") or {}), mark) for c in resumed] + [
        bot_process.logs()[-4000:]]
    assert not posts(slack, thread, WOKE)
    questions = [c for c in slack.calls("chat.postMessage", thread_ts=thread)
                 if (c.body.get("text") or "").startswith("Question")]
    assert len(questions) == 1
    assert len(posts(slack, thread, "Done: the goal is achieved")) == 1
    assert len(posts(slack, thread, "Started")) == 1
    # one status message (the acknowledgement, edited), edited in place after the restart too
    assert len(posts(slack, thread, "Running")) <= 1
    ws = workspace(tmp_path, thread)
    assert "Python" in starter_paths(ws).brief.read_text() and (ws / "hello.txt").read_text() == "hi"
    clar = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
    assert any("Python" in t for _, t in clar[-1].tool_results)  # the old button's answer reached the model
    bot_process.kill()
    assert_home_is_sound(tmp_path / "home")
    assert_no_secrets(slack, fake_model, bot_process, tmp_path / "home")


async def test_sigkill_while_a_step_runs(bot_process, slack_env, fake_model, tmp_path):
    slack = slack_env
    held = hold()
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(tool_use("Write", {"file_path": "hello.txt", "content": "hi"}), text("wrote hello.txt"),
                    when=WORKER)
    # the coordinator starts a worker in the background and ends its turn (a result: the transcript
    # reaches the store); its next turn, on the worker's notification, is held and the bot killed there
    fake_model.rule(text("picked up after the restart"), when=[COORDINATOR, prompt_contains(WAKE_SILENT)])
    fake_model.rule(tool_use("Agent", {"subagent_type": "coder", "description": "write hello",
                                       "prompt": "Write hello.txt with hi."}),
                    text("round 1 started"), text("worker reported", fault=held), when=COORDINATOR)
    thread = await first_mention(bot_process, slack)
    first = await held.arrived()
    bot_process.kill()
    held.release()
    lineage = workspace(tmp_path, thread) / "runs" / LINEAGE_FILE
    session = json.loads(lineage.read_text(encoding="utf-8"))["steps"][WORK_STEP]

    mark = slack.mark()
    bot_process.start()
    await slack.wait_connected(2)
    await posted(slack, thread, WOKE, after=mark)
    await posted(slack, thread, "Done: the goal is achieved")

    assert len(posts(slack, thread, WOKE)) == 1
    assert not posts(slack, thread, RESUMED)
    assert len(posts(slack, thread, "Done: the goal is achieved")) == 1
    assert len(posts(slack, thread, "Running")) <= 1  # one status message (the acknowledgement), edited in place
    resumed = [r for r in fake_model.message_requests if COORDINATOR(r.body) and r.index > first.index]
    assert resumed and WAKE_SILENT in resumed[0].prompt
    assert "round 1 started" in resumed[0].shown  # the same conversation went on, not a fresh one
    assert json.loads(lineage.read_text(encoding="utf-8"))["steps"][WORK_STEP] == session
    key = ThreadKey("T0001", CHANNEL, thread)
    bot_process.kill()
    assert_home_is_sound(tmp_path / "home")
    with closing(sqlite3.connect(tmp_path / "home" / "bot.db")) as db:
        state = db.execute("SELECT state FROM threads WHERE team=? AND channel=? AND thread_ts=?", key).fetchone()
    assert state == ("done",)


async def test_sigint_to_the_group_stops_the_bot_cleanly_and_the_run_resumes(bot_process, slack_env, fake_model,
                                                                               tmp_path):
    """A service manager's stop (systemd with KillSignal=SIGINT signals the whole group): the bot
    exits by itself, promptly and with status 0, and its next start picks the run up."""
    slack = slack_env
    held = hold()
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(text("picked up after the restart"), when=[COORDINATOR, prompt_contains(WAKE_SILENT)])
    fake_model.rule(text("round 1 done", fault=held), when=COORDINATOR)
    thread = await first_mention(bot_process, slack)
    await held.arrived()
    os.killpg(bot_process.proc.pid, signal.SIGINT)
    try:
        code = await asyncio.wait_for(asyncio.to_thread(bot_process.proc.wait), 30)
    finally:
        held.release()
    assert code == 0, bot_process.logs()

    mark = slack.mark()
    bot_process.start()
    await slack.wait_connected(2)
    await posted(slack, thread, WOKE, after=mark)
    await posted(slack, thread, "Done: the goal is achieved")
    assert len(posts(slack, thread, "Done: the goal is achieved")) == 1


async def test_a_notice_posted_just_before_a_kill_is_not_posted_again(slack_env, tmp_path):
    """The window a SIGKILL can hit: Slack took the post, the process died before recording it."""
    slack = slack_env
    store = BotStore(tmp_path / "bot.db")
    client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
    thread = slack.mention(CHANNEL, "写个 hello.txt")["ts"]
    key = ThreadKey("T0001", CHANNEL, thread)
    for n in (1, 2):
        await store.enqueue(key, "note", f"note:{n}", {"text": f"notice {n}"})
    # what the killed process did for notice 1: posted it, with its key, and died before mark_sent
    await client.chat_postMessage(channel=CHANNEL, thread_ts=thread, text="notice 1",
                                  metadata={"event_type": NOTICE_EVENT, "event_payload": {"key": "note:1"}})
    outbox = Outbox(store, client)
    outbox.start()
    try:
        assert await outbox.post(key, "note", "note:2", "notice 2")
    finally:
        await outbox.close()
        await store.aclose()
    assert [m["text"] for m in slack.messages_in(CHANNEL, thread)[1:]] == ["notice 1", "notice 2"]
    again = BotStore(tmp_path / "bot.db")
    first = await again.outbox_item("note:1")
    await again.aclose()
    assert first.state == "sent" and first.sent_ts == slack.messages_in(CHANNEL, thread)[1]["ts"]


async def test_words_said_while_queued_survive_a_sigkill(bot_process, slack_env, fake_model, tmp_path):
    slack = slack_env
    bot_process.env["FLOWER_MAX_RUNS"] = "1"
    held = hold()
    fake_model.rule(text(BRIEF, fault=held), when=[CLARIFIER, prompt_contains("写个 hello.txt")])
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(tool_use("mcp__human__inbox", {}), text("read the inbox"), when=COORDINATOR)
    bot_process.start()
    await slack.wait_connected(1)
    one, two = slack.mention(CHANNEL, "写个 hello.txt"), slack.mention(CHANNEL, "写个 bye.txt")
    await slack.send_event(one)
    await held.arrived()
    await slack.send_event(two)
    await posted(slack, two["ts"], "Queued")
    reply = slack.user_message(CHANNEL, "use blue", thread_ts=two["ts"])
    await slack.send_event(reply)
    await slack.wait_for("reactions.add", channel=CHANNEL, timestamp=reply["ts"], name="eyes")  # taken
    bot_process.kill()
    held.release()

    bot_process.start()
    await slack.wait_connected(2)
    await posted(slack, one["ts"], "Done: the goal is achieved")
    await posted(slack, two["ts"], "Done: the goal is achieved")
    assert len(posts(slack, one["ts"], RESUMED)) == 1
    assert not posts(slack, two["ts"], RESUMED)  # it had not begun: nothing to redo, nothing to say
    assert len(posts(slack, two["ts"], "Queued")) == 1  # still the same wait in line
    for thread in (one["ts"], two["ts"]):
        assert len(posts(slack, thread, "Running")) <= 1 and len(posts(slack, thread, "Done")) == 1
    inboxes = [r for r in fake_model.message_requests
               if COORDINATOR(r.body) and any("use blue" in t for _, t in r.tool_results)]
    assert len(inboxes) == 1 and workspace(tmp_path, two["ts"]).name in inboxes[0].shown  # thread two's run
    bot_process.kill()
    assert_home_is_sound(tmp_path / "home")
    with closing(sqlite3.connect(tmp_path / "home" / "bot.db")) as db:
        kept = db.execute("SELECT text, drained_at IS NOT NULL FROM inbox").fetchall()
    assert kept == [("use blue", 1)]


async def test_words_said_while_a_run_ends_start_the_next_run(slack_env, fake_model, tmp_path, monkeypatch):
    """In process: a reply landing after the flow returned, before the run's task is over, is not lost.

    On a machine up for seconds (a fresh CI machine): monotonic time starts near 0 there, and the
    status feed once waited a whole status_every_s for its first edit (this test's 240 s wait)."""
    slack = slack_env
    monkeypatch.setenv("FLOWER_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(status_feed, "time", _JustBooted())
    held = hold()
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(text("continued after wake"), when=[COORDINATOR, prompt_contains("补充一句")])
    fake_model.rule(text("working", fault=held), when=COORDINATOR)
    # the status line is edited once early, then only when the run ends: that last edit is made slow
    options = BotOptions(runtime={"resilience": Resilience(base_delay=0.01)}, status_every_s=600)
    bot = await start_bot(load_config(dotenv=None), options=options)
    try:
        event = slack.mention(CHANNEL, "写个 hello.txt")
        thread = event["ts"]
        await slack.send_event(event)
        await held.arrived()
        status_ts = (await bot.store.get_thread(ThreadKey("T0001", CHANNEL, thread))).status_ts
        await slack.wait_for("chat.update", ts=status_ts)
        slack.rate_limit("chat.update", times=1, retry_after=2)  # the final edit waits: the run is ending
        held.release()
        await posted(slack, thread, "Done: the goal is achieved")
        reply = slack.user_message(CHANNEL, "顺便加一个 bye.txt", thread_ts=thread)
        await slack.send_event(reply)
        banner = await posted(slack, thread, WOKE)
        assert "顺便加一个 bye.txt" in banner.body["text"]
        await slack.wait_until(lambda: len(posts(slack, thread, "Done: the goal is achieved")) == 2,
                               what="the second run's summary")
        woke = [r for r in fake_model.message_requests if COORDINATOR(r.body) and "补充一句" in r.prompt]
        assert woke and "顺便加一个 bye.txt" in woke[0].prompt
    finally:
        await bot.close()


class _JustBooted:
    """The ``time`` module of a machine booted 5 s ago: ``monotonic()`` starts near 0."""

    def __init__(self) -> None:
        self._zero = time.monotonic() - 5.0

    def monotonic(self) -> float:
        return time.monotonic() - self._zero

    def __getattr__(self, name: str):
        return getattr(time, name)


def _clis_of(config_dir: str) -> list[int]:
    """Live Claude Code processes started for this test (their environment names its config dir)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes()
            env = (proc / "environ").read_bytes()
            state = (proc / "stat").read_text().split(") ", 1)[1][0]
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if b"claude" in cmd.split(b"\0")[0] and f"CLAUDE_CONFIG_DIR={config_dir}".encode() in env and state != "Z":
            found.append(int(proc.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc (Linux)")
async def test_a_cli_dies_with_the_bot_that_started_it(bot_process, slack_env, fake_model):
    """``kill -9`` of the bot's pid alone (the OOM killer): its CLI goes too, and the restart resumes once."""
    slack = slack_env
    held = hold()
    fake_model.rule(text("working", fault=held), when=COORDINATOR)  # first: it wins over the script's
    script(fake_model, verdicts=(ACHIEVED,))
    thread = await first_mention(bot_process, slack)
    q_ts, q_call = await question(slack, thread)
    button = first_button(q_call)
    await slack.click(CHANNEL, q_ts, button["action_id"], user="U0BOB")
    await held.arrived()
    config_dir = fake_model.env["CLAUDE_CONFIG_DIR"]
    assert _clis_of(config_dir), "no CLI found while the coordinator's request is held"

    os.kill(bot_process.proc.pid, signal.SIGKILL)  # the bot alone, not its process group
    bot_process.proc.wait()
    for _ in range(300):  # the kernel kills them at once; the cap is for a loaded machine
        if not _clis_of(config_dir):
            break
        await asyncio.sleep(0.1)
    assert _clis_of(config_dir) == []
    held.release()

    mark = slack.mark()
    bot_process.start()
    await slack.wait_connected(2)
    await posted(slack, thread, "Done: the goal is achieved", after=mark)
    assert len(posts(slack, thread, WOKE)) == 1  # resumed once
    home = Path(bot_process.env["FLOWER_HOME"])
    shared = [p for p in [home, *home.rglob("*")] if not p.is_symlink() and p.stat().st_mode & 0o077]
    assert shared == []  # bot.db, sessions.db, workspaces: the bot's user's alone (0700 / 0600)

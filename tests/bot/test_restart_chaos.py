"""Restart chaos: five threads, the bot SIGKILLed at 20 seeded-random moments and started again.

Afterwards every run has reached its verdict, no answer was lost, no question was asked twice,
no notice was posted twice, the bot's database passes SQLite's integrity check and every JSON
file under FLOWER_HOME parses. The counts are printed (pytest -s shows them).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter

import pytest

from tests.bot.helpers.app import ACHIEVED, CHANNEL, script, workspace
from tests.bot.helpers.process import assert_home_is_sound, assert_no_secrets

THREADS = 5
KILLS = 20
SEED = 20261130
DONE = "Done: the goal is achieved"
FINISH_S = 900.0  # five runs after twenty restarts, on two cores another suite shares: minutes, not seconds


def thread_posts(slack, thread_ts):
    return [c for c in slack.calls("chat.postMessage", thread_ts=thread_ts) if c.ok]


async def answer_questions(slack, threads, clicked: set[tuple[str, int]], generation: int) -> None:
    """Click every question whose message still shows buttons, once per bot start: a click the
    killed bot never handled is lost (Slack does not redeliver it), and a person clicks again."""
    for thread in threads:
        for call in thread_posts(slack, thread):
            if not (call.body.get("text") or "").startswith("Question"):
                continue
            ts = call.response["ts"]
            current = slack.message(CHANNEL, ts) or {}
            buttons = [e for b in current.get("blocks", []) for e in b.get("elements", [])
                       if e.get("type") == "button"]
            if buttons and (ts, generation) not in clicked:
                clicked.add((ts, generation))
                await slack.click(CHANNEL, ts, buttons[0]["action_id"], user="U0BOB")


@pytest.mark.timeout(FINISH_S + 300)
async def test_twenty_kills_across_five_threads_lose_nothing(bot_process, slack_env, fake_model, tmp_path):
    slack, rng = slack_env, random.Random(SEED)
    script(fake_model, verdicts=(ACHIEVED,))
    bot_process.start()
    await slack.wait_connected(1)
    threads = []
    for i in range(THREADS):
        event = slack.mention(CHANNEL, f"写个 hello.txt #{i}")
        threads.append(event["ts"])
        await slack.send_event(event)

    clicked: set[tuple[str, int]] = set()
    connections = 1
    for _ in range(KILLS):
        await asyncio.sleep(rng.uniform(0.05, 1.5))  # a random moment: the point of chaos
        await answer_questions(slack, threads, clicked, connections)
        bot_process.kill()
        bot_process.start()
        connections += 1
        await slack.wait_connected(connections)

    def finished() -> bool:
        return all(any(DONE in (c.body.get("text") or "") for c in thread_posts(slack, t))
                   for t in threads)

    deadline = time.monotonic() + FINISH_S
    while time.monotonic() < deadline:  # let every run finish, answering questions as they come
        await answer_questions(slack, threads, clicked, connections)
        if finished():
            break
        await asyncio.sleep(0.2)
    bot_process.kill()
    assert finished(), [[c.body.get("text", "")[:60] for c in thread_posts(slack, t)] for t in threads]

    counts = {}
    for thread in threads:
        texts = [c.body.get("text") or "" for c in thread_posts(slack, thread)]
        questions = [t for t in texts if t.startswith("Question")]
        assert len(questions) == 1, questions  # never asked twice
        assert sum(DONE in t for t in texts) == 1  # the final notice once
        assert sum("Started." in t for t in texts) == 1
        restarts = [t for t in texts if "restarted" in t or "Picking up where" in t]
        assert len(restarts) <= KILLS  # one resume notice per restart at most
        notices = Counter(t for t in texts if t not in restarts and not t.startswith("Question"))
        assert all(n == 1 for n in notices.values()), notices  # no other notice twice
        assert (workspace(tmp_path, thread) / "hello.txt").read_text() == "hi"
        counts[thread] = len(texts)
    assert_home_is_sound(tmp_path / "home")
    assert_no_secrets(slack, fake_model, bot_process, tmp_path / "home")
    print(f"\nchaos: {KILLS} kills, {THREADS} threads, {len(clicked)} clicks, "
          f"posts per thread {sorted(counts.values())}, model requests {len(fake_model.message_requests)}")

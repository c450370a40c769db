"""Nothing said to the bot is lost to a stop or a dead socket.

Replies posted while the bot was stopped are read back at start (``bot.inbound.catchup``) and acted on
once; a Socket Mode connection that goes quiet, is told to go, or is cut is replaced
(``bot.inbound.socket`` and slack_sdk), and the next event still starts a run.
"""

from __future__ import annotations

import pytest

from bot.core.thread import ThreadKey
from bot.errors import ConfigError
from bot.inbound.catchup import missed, recent_threads
from bot.settings.config import load_config
from bot.store.bot_store import BotStore, Thread
from engine.testing import prompt_contains, text
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE
from tests.bot.helpers.app import ACHIEVED, BRIEF, CHANNEL, CLARIFY_ONLY, GOAL, asked_thread, brief_only, posted

WOKE = "Picking up where this left off"


def thread(last_seen: str | None) -> Thread:
    return Thread(ThreadKey("T1", "C1", "100.000001"), "w", "done", last_seen, None, "", 0.0, 0.0)


def test_missed_skips_bots_and_subtypes():
    people = missed(thread(None), [
        {"ts": "100.2", "user": "U1", "text": "mine"},
        {"ts": "100.3", "bot_id": "B1", "user": "U0BOT", "text": "the bot's post"},
        {"ts": "100.4", "user": "U1", "subtype": "message_changed", "text": "an edit"},
        {"ts": "100.5", "subtype": "channel_join", "text": "joined"},
        {"ts": "100.6", "text": "no user"},
        {"ts": "100.7", "user": "U1", "subtype": "file_share", "text": "with a file", "files": [{"id": "F1"}]},
    ])
    assert [e["text"] for e in people] == ["mine", "with a file"]  # a file's words count, as live


@pytest.mark.parametrize(("last_seen", "ts_in", "ts_out"), [
    (None, ["100.000001", "100.000002", "99.5"], ["100.000002"]),  # the parent and older: never
    ("100.000005", ["100.000005", "100.000006", "100.000004"], ["100.000006"]),  # the seen one is not again
    ("100.000001", ["101", "100.9", "100.000002"], ["100.000002", "100.9", "101"]),  # oldest first
    ("100.000010", ["100.00001"], []),  # the same ts written shorter is the same message
    ("100.000001", ["junk", "", "100.5"], ["100.5"]),  # no ts: skipped
])
def test_missed_takes_the_newer_replies_in_order(last_seen, ts_in, ts_out):
    events = missed(thread(last_seen), [{"ts": ts, "user": "U1", "text": "x"} for ts in ts_in])
    assert [e["ts"] for e in events] == ts_out
    assert all(e["channel"] == "C1" and e["thread_ts"] == "100.000001" and e["type"] == "message" for e in events)


async def test_a_reply_said_while_stopped_answers_the_pending_question_once(make_bot, slack_env, fake_model):
    slack = slack_env
    first = await make_bot(CLARIFY_ONLY)
    thread_ts, q_ts, _ = await asked_thread(slack, fake_model)
    await slack.wait_until(lambda: [r for r in fake_model.message_requests if CLARIFIER(r.body)])
    await first.close()

    reply = slack.user_message(CHANNEL, "Go, please", thread_ts=thread_ts)  # said while stopped: no event
    slack.no_answer("conversations.replies")  # and Slack cannot be reached at first (a machine just booted)
    second = await make_bot(CLARIFY_ONLY)
    updated = await slack.wait_for("chat.update", ts=q_ts)
    assert "Go, please" in str(updated.arg("blocks"))
    await posted(slack, thread_ts, "Done")
    clar = [r for r in fake_model.message_requests if CLARIFIER(r.body)]
    assert any("Go, please" in t for _, t in clar[-1].tool_results)  # the model got the missed answer
    key = ThreadKey("T0001", CHANNEL, thread_ts)
    assert (await second.store.get_thread(key)).last_seen_ts == reply["ts"]
    assert [c.status for c in slack.calls("conversations.replies")][0] == 0  # the dropped read was tried again

    # Slack's late redelivery of the same reply, and a third start: both find it already handled
    await second.catchup
    await slack.wait_ack(await slack.send_event(reply))
    await second.close()
    third = await make_bot(CLARIFY_ONLY)
    assert await third.catchup == 0
    assert len(slack.calls("reactions.add", timestamp=reply["ts"])) == 1
    assert len([c for c in slack.calls("chat.postMessage") if "Done" in (c.body.get("text") or "")]) == 1


async def test_a_reply_said_after_the_run_finished_while_stopped_wakes_it(make_bot, slack_env, fake_model):
    slack = slack_env
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(text("continued after wake"), when=[COORDINATOR, prompt_contains("补充一句")])
    fake_model.rule(text("round 1 done"), when=COORDINATOR)
    first = await make_bot()
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread_ts = event["ts"]
    await slack.send_event(event)
    await posted(slack, thread_ts, "Done: the goal is achieved")
    await first.close()

    slack.user_message(CHANNEL, "顺便加一个 bye.txt", thread_ts=thread_ts)
    await make_bot()
    banner = await posted(slack, thread_ts, WOKE)
    assert "顺便加一个 bye.txt" in banner.body["text"]
    await slack.wait_until(
        lambda: len([c for c in slack.calls("chat.postMessage", thread_ts=thread_ts)
                     if "Done: the goal is achieved" in (c.body.get("text") or "")]) == 2,
        what="the woken run's summary")
    woke = [r for r in fake_model.message_requests if COORDINATOR(r.body) and "补充一句" in r.prompt]
    assert len(woke) == 1 and "顺便加一个 bye.txt" in woke[0].prompt


async def a_mention_starts_a_run(slack, fake_model) -> None:
    """After the reconnect, a new mention is acked and its run starts and finishes."""
    brief_only(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.wait_ack(await slack.send_event(event))
    await posted(slack, event["ts"], "Started")
    await posted(slack, event["ts"], "Done")


@pytest.mark.parametrize("reason", ["warning", "refresh_requested", "link_disabled"])
async def test_a_disconnect_frame_reconnects_and_the_next_event_runs(make_bot, slack_env, fake_model, reason):
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    old = await slack.disconnect(reason)
    await slack.wait_connected(2)
    await slack.wait_until(lambda: slack.connections[old].closed, what=f"connection {old} closed")
    await a_mention_starts_a_run(slack, fake_model)


@pytest.mark.parametrize("how", ["silent", "pings_unanswered", "cut", "close_frame"])
async def test_a_quiet_or_broken_socket_is_replaced_and_the_next_event_runs(make_bot, slack_env, fake_model, how):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY, FLOWER_SOCKET_IDLE_S="0.5")
    if how == "pings_unanswered":
        await slack.stop_answering_pings()
    elif how in ("cut", "close_frame"):
        await slack.drop_connection(clean=how == "close_frame")
    # "silent": the fake sends nothing after hello and answers pings, a socket that looks alive
    await slack.wait_connected(2)
    await slack.wait_until(lambda: slack.connections[0].closed, what="the first connection closed")
    if how == "silent":
        assert bot.watchdog.reconnects >= 1  # slack_sdk alone never replaces a socket that answers pings
    bot.watchdog.idle_s = 600  # quiet from here on, so the event is not sent into a socket being swapped
    await slack.wait_connected(bot.watchdog.reconnects + 1)
    await slack.wait_until(lambda: sum(not c.closed for c in slack.connections) == 1, what="one open connection")
    await a_mention_starts_a_run(slack, fake_model)


@pytest.mark.parametrize(("raw", "want"), [(None, 600.0), ("0", 0.0), ("2.5", 2.5), ("30", 30.0)])
def test_socket_idle_setting(raw, want):
    env = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"}
    if raw is not None:
        env["FLOWER_SOCKET_IDLE_S"] = raw
    assert load_config(env).socket_idle_s == want


@pytest.mark.parametrize("raw", ["-1", "ten", "nan", "inf", ""])
def test_bad_socket_idle_setting_names_itself(raw):
    env = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "FLOWER_SOCKET_IDLE_S": raw}
    if raw == "":  # empty counts as unset
        assert load_config(env).socket_idle_s == 600.0
        return
    with pytest.raises(ConfigError, match=f"FLOWER_SOCKET_IDLE_S.*{raw!r}"):
        load_config(env)


async def test_recent_threads_are_the_active_the_recently_changed_and_the_recently_seen(tmp_path):
    store = BotStore(tmp_path / "bot.db", clock=lambda: 1_000_000.0)  # every row written "long ago"
    keys = {name: ThreadKey("T1", "C1", f"1.{i}") for i, name in enumerate(["old", "waiting", "seen", "changed"])}
    for name, key in keys.items():
        await store.upsert_thread(key, workspace=name, state="waiting" if name == "waiting" else "done")
    await store.touch_seen(keys["seen"], "5000000.000100")
    await store.touch_seen(keys["old"], "1000000.000100")
    got = await recent_threads(store, within_s=100, now=5_000_050.0)
    assert [t.workspace for t in got] == ["waiting", "seen"]
    store.close()
    changed = BotStore(tmp_path / "bot.db", clock=lambda: 5_000_000.0)
    await changed.set_state(keys["changed"], "done")
    assert [t.workspace for t in await recent_threads(changed, within_s=100, now=5_000_050.0)] == [
        "waiting", "seen", "changed"]
    changed.close()

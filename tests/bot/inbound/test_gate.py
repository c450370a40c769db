"""The bolt seams around ``Intake``: the gate's checks, and the error handler that logs a failed
listener by what it handled (never its token or text) while the app goes on."""

from __future__ import annotations

import logging

import pytest

from bot.core.thread import ThreadKey
from bot.inbound.app import describe
from bot.inbound.gate import Gate
from bot.inbound.intake import Intake
from bot.settings.config import load_config
from tests.bot.helpers.app import CHANNEL, CLARIFY_ONLY, asked_thread, posted


@pytest.mark.parametrize(("event", "person"), [
    ({"user": "U1", "thread_ts": "1.1", "text": "hi"}, True),
    ({"user": "U1", "thread_ts": "1.1", "subtype": "file_share"}, True),
    ({"user": "U1", "text": "top-level chatter"}, False),
    ({"user": "U1", "thread_ts": "1.1", "subtype": "message_changed"}, False),
    ({"user": "U1", "thread_ts": "1.1", "subtype": "channel_join"}, False),
    ({"user": "U0OTHER", "thread_ts": "1.1", "bot_id": "B1"}, False),
    ({"thread_ts": "1.1", "text": "no user"}, False),
])
def test_only_a_persons_reply_in_a_thread_counts(event, person):
    assert Gate.is_person_reply({"type": "message", "channel": "C1", "ts": "1.2", **event}) is person


async def test_refusals_name_the_list_that_refused(tmp_path):
    config = load_config({"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_APP_TOKEN": "xapp-test", "FLOWER_HOME": str(tmp_path),
                          "FLOWER_ALLOWED_USERS": "U0ALICE", "FLOWER_ALLOWED_CHANNELS": "C0GENERAL"})
    gate = Gate(config=config, store=None, client=None)  # type: ignore[arg-type]  # the lists only
    assert await gate.refusal("U0ALICE", "C0GENERAL") is None
    assert "FLOWER_ALLOWED_USERS" in await gate.refusal("U0BOB", "C0GENERAL")
    assert "FLOWER_ALLOWED_CHANNELS" in await gate.refusal("U0ALICE", "C0RANDOM")


def test_describe_names_type_and_ids_never_token_or_text():
    event = {"token": "verif-TOKEN", "team_id": "T1", "event_id": "Ev1", "type": "event_callback",
             "authorizations": [{"user_id": "U0BOT"}],
             "event": {"type": "message", "subtype": "file_share", "channel": "C1", "ts": "1.2",
                       "thread_ts": "1.1", "user": "U1", "text": "secret words"}}
    said = describe(event)
    assert said == "message event (file_share) event_id=Ev1 channel=C1 ts=1.2 thread_ts=1.1 user=U1"
    click = {"type": "block_actions", "token": "verif-TOKEN", "user": {"id": "U1"}, "channel": {"id": "C1"},
             "message": {"ts": "1.3", "text": "status"}, "actions": [{"action_id": "flower_stop", "value": "T|C|1"}],
             "response_url": "https://hooks.example/secret"}
    assert describe(click) == "block_actions flower_stop channel=C1 message_ts=1.3 user=U1"
    assert describe({}) == "?"


async def test_a_listener_that_raises_is_logged_and_the_app_goes_on(make_bot, slack_env, fake_model, monkeypatch,
                                                                     caplog):
    slack = slack_env
    caplog.set_level(logging.INFO)
    real = Intake.mention

    async def mention(self, key, event):
        if "explode" in event.get("text", ""):
            raise RuntimeError("boom in the listener")
        await real(self, key, event)

    monkeypatch.setattr(Intake, "mention", mention)
    await make_bot(CLARIFY_ONLY)
    boom = slack.mention(CHANNEL, "explode, please")
    eid = await slack.send_event(boom, event_id="Ev0BOOM")
    assert (await slack.wait_ack(eid)).envelope_id == eid  # bolt acked before the listener ran
    after = slack.mention(CHANNEL, "/repo")  # the next event is handled as usual
    await slack.send_event(after)
    await posted(slack, after["ts"], "not bound")

    failed = [r for r in caplog.records if r.name == "bot.inbound.app" and r.levelno == logging.ERROR]
    assert len(failed) == 1
    line = failed[0].getMessage()
    assert "app_mention event" in line and "event_id=Ev0BOOM" in line and f"channel={CHANNEL}" in line
    assert f"ts={boom['ts']}" in line and "boom in the listener" in line
    assert failed[0].exc_info and failed[0].exc_info[0] is RuntimeError  # the traceback is kept
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "fake-verification-token" not in logged and "xoxb-" not in logged and "explode" not in logged


async def test_someone_not_allowed_is_refused_in_a_running_thread_and_changes_nothing(make_bot, slack_env, fake_model):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY, FLOWER_ALLOWED_USERS="U0ALICE")
    thread, q_ts, _ = await asked_thread(slack, fake_model)  # asked by U0ALICE, allowed
    key = ThreadKey("T0001", CHANNEL, thread)

    def refusals():
        return [e for e in slack.ephemerals if e.get("user") == "U0BOB" and "FLOWER_ALLOWED_USERS" in e.get("text", "")]

    buttons = [e for b in (slack.message(CHANNEL, q_ts) or {}).get("blocks", []) for e in b.get("elements", [])
               if e.get("type") == "button"]
    eid = await slack.click(CHANNEL, q_ts, buttons[0]["action_id"], user="U0BOB")
    await slack.wait_ack(eid)  # acked at once; the refusal follows
    await slack.wait_until(lambda: refusals(), what="a refused click")
    assert refusals()[0].get("thread_ts") == thread
    reply = slack.user_message(CHANNEL, "Go", user="U0BOB", thread_ts=thread)
    await slack.send_event(reply)
    await slack.wait_until(lambda: len(refusals()) == 2, what="a refused reply")
    assert refusals()[1].get("thread_ts") == thread
    assert (await bot.store.get_thread(key)).last_seen_ts == reply["ts"]  # seen, though refused
    assert await bot.store.pending_questions(key)  # neither the click nor the reply answered it
    assert not [c for c in slack.calls("reactions.add") if c.body.get("timestamp") == reply["ts"]]

"""Faults end to end: question deadlines, a failing model, a failing Slack.

Real slack-bolt against the fake Slack, the real CLI against the offline model. A question with a
deadline says so and closes itself when it passes; 529s, a cut stream and a context overflow show
their notices and the run still finishes; 429 storms and 5xx answers from Slack lose nothing and
keep every thread's notices in order.
"""

from __future__ import annotations

import asyncio

from bot.core.thread import ThreadKey
from bot.main import web_client
from bot.outbound.outbox import MAX_ATTEMPTS, Outbox
from bot.runs.jobs import BotOptions
from bot.settings.config import load_config
from bot.store.bot_store import BotStore
from engine.testing import text, tool_use
from engine.testing.faults import cut_stream, hold, overloaded, prompt_too_long
from engine.testing.roles import CLARIFIER, COORDINATOR
from tests.bot.helpers.app import CHANNEL, marked_done, posted, settled, texts
from tests.bot.helpers.faults import BRIEF, FAST, FAST_BOT, script, start_thread

PORT_QUESTION = {"question": "用哪个端口?", "options": ["8080", "9000"]}


def in_order(shown, needles):
    """The index of each needle's first message in ``shown``; fails naming the missing one."""
    at = []
    for needle in needles:
        hits = [i for i, t in enumerate(shown) if needle in t]
        assert hits, f"no message with {needle!r} in the thread: {shown}"
        at.append(hits[0])
    return at


def model_saw(fake_model, role, needle):
    return any(needle in t for r in fake_model.message_requests if role(r.body) for _, t in r.tool_results)


# -- question deadlines ---------------------------------------------------------------------------



async def test_a_question_with_a_default_goes_on_with_it_when_its_deadline_passes(make_bot, slack_env, fake_model):
    slack = slack_env
    script(fake_model, ask={**PORT_QUESTION, "default": "8080", "deadline_minutes": 0.001})
    bot = await make_bot(FAST_BOT)
    thread = await start_thread(slack)

    q = await posted(slack, thread, "Question")
    assert "If nobody answers within" in str(q.arg("blocks")) and "go on with 8080" in str(q.arg("blocks"))
    closed = await slack.wait_for("chat.update", ts=q.response["ts"])
    shown = str(closed.arg("blocks"))
    assert "No answer in" in shown and "going on with 8080" in shown and "button" not in shown
    await posted(slack, thread, "Done: the goal is achieved")
    assert model_saw(fake_model, CLARIFIER, "8080")  # the tool said: nobody answered, default used
    assert model_saw(fake_model, CLARIFIER, "没有人回答")
    shown = texts(slack, thread)
    notice, done = in_order(shown, ["going on with *8080*", "Done: the goal is achieved"])
    assert notice < done
    key = ThreadKey("T0001", CHANNEL, thread)
    await marked_done(bot, key)
    assert (await bot.store.answered_unconsumed(key, "x")) is None


async def test_a_question_without_a_default_parks_the_run_until_it_is_answered(
        make_bot, slack_env, fake_model, monkeypatch):
    slack = slack_env
    script(fake_model, ask=PORT_QUESTION)
    monkeypatch.setenv("FLOWER_QUESTION_WAIT_S", "0.5")  # the setting, end to end
    bot = await make_bot(FAST_BOT)
    thread = await start_thread(slack)
    key = ThreadKey("T0001", CHANNEL, thread)

    q = await posted(slack, thread, "Question")
    assert "the run pauses until somebody does" in str(q.arg("blocks"))
    notice = await posted(slack, thread, "Paused: nobody answered the question above in 0.5 seconds")
    assert "Answer it" in notice.body["text"] and "`/new`" in notice.body["text"]
    await settled(bot, key)
    thread_row = await bot.store.get_thread(key)
    assert thread_row.state == "parked"
    await slack.wait_for("chat.update", lambda c: "Paused until someone answers" in (c.body.get("text") or ""),
                         ts=thread_row.status_ts)
    assert not model_saw(fake_model, CLARIFIER, "没有人回答")  # the model was told nothing: no assumption made
    offered = [t for r in fake_model.message_requests if CLARIFIER(r.body) for t in r.body.get("tools") or []
               if t.get("name") == "mcp__human__ask"]
    assert offered and "pauses the whole run" in offered[0]["description"]  # so it names defaults where it can
    buttons = [e for b in slack.message(CHANNEL, q.response["ts"])["blocks"] for e in b.get("elements", [])
               if e.get("type") == "button"]
    assert [b["text"]["text"] for b in buttons] == ["8080", "9000"]  # still open: answering resumes the run

    await bot.close()  # a parked thread stays parked across a restart: nothing resumes it but an answer
    bot = await make_bot(FAST_BOT)
    await asyncio.sleep(0.5)
    assert (await bot.store.get_thread(key)).state == "parked" and not bot.jobs.busy(key)

    await slack.click(CHANNEL, q.response["ts"], buttons[1]["action_id"], user="U0BOB")
    await posted(slack, thread, "Done: the goal is achieved")
    assert model_saw(fake_model, CLARIFIER, "9000")  # the answer reached the resumed clarifier
    await marked_done(bot, key)
    shown = texts(slack, thread)
    assert sum("Question" in t for t in shown) == 1  # asked once, answered once
    assert sum("Paused: nobody answered" in t for t in shown) == 1


async def test_a_coordinator_parked_mid_work_resumes_on_a_reply_with_one_wake_banner(make_bot, slack_env, fake_model):
    slack = slack_env
    ask = tool_use("mcp__human__ask", {"question": "覆盖已有的 hello.txt 吗?"})
    agent = tool_use("Agent", {"subagent_type": "coder", "description": "write hello", "prompt": "Write hello.txt."})
    script(fake_model, coordinator=[ask, agent, text("round 1 done")])
    bot = await make_bot(BotOptions(runtime=FAST, flow={"timeout_s": 0.5}, status_every_s=0))
    thread = await start_thread(slack)
    key = ThreadKey("T0001", CHANNEL, thread)

    await posted(slack, thread, "Question: 覆盖")
    await posted(slack, thread, "Paused: nobody answered")
    assert (await bot.store.get_thread(key)).state == "parked"
    await slack.send_event(slack.user_message(CHANNEL, "覆盖吧", thread_ts=thread))  # a reply answers it
    await posted(slack, thread, "Picking up where this left off")
    await posted(slack, thread, "Done: the goal is achieved")
    assert model_saw(fake_model, COORDINATOR, "覆盖吧")
    shown = texts(slack, thread)
    assert sum("Picking up where this left off" in t for t in shown) == 1
    assert sum("Question: 覆盖" in t for t in shown) == 1
    await marked_done(bot, key)


async def test_new_in_a_parked_thread_closes_its_question_for_good(make_bot, slack_env, fake_model):
    slack = slack_env
    script(fake_model, ask=PORT_QUESTION)
    bot = await make_bot(BotOptions(runtime=FAST, flow={"timeout_s": 0.2}, status_every_s=0))
    thread = await start_thread(slack)
    q = await posted(slack, thread, "Question")
    await posted(slack, thread, "Paused: nobody answered")
    button = next(e for b in q.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button")
    stale = slack.click_payload(CHANNEL, q.response["ts"], button["action_id"], user="U0BOB")  # an old client's view

    await slack.send_event(slack.user_message(CHANNEL, "/new", thread_ts=thread))
    await posted(slack, thread, "Archived the last run")
    closed = await slack.wait_for("chat.update", lambda c: "started over" in str(c.arg("blocks")), ts=q.response["ts"])
    assert "button" not in str(closed.arg("blocks"))
    key = ThreadKey("T0001", CHANNEL, thread)
    assert await bot.store.pending_questions(key) == [] and (await bot.store.get_thread(key)).state == "idle"
    await slack.socket.send("interactive", stale, timeout=60)
    await slack.wait_for("chat.postEphemeral", lambda c: "closed" in (c.body.get("text") or ""))
    assert not bot.jobs.busy(key)


# -- model faults -----------------------------------------------------------------------------------

async def test_overload_cut_stream_and_context_overflow_show_and_the_run_finishes(make_bot, slack_env, fake_model):
    slack = slack_env
    agent = tool_use("Agent", {"subagent_type": "coder", "description": "write hello",
                               "prompt": "Write hello.txt with hi."}, fault=overloaded(times=2))
    # the round-2 reply of the resumed coordinator session overflows: the engine hands off
    script(fake_model, coordinator=[agent, text("round 1 done")], worker_fault=cut_stream(after_events=3, times=1),
           round2_fault=prompt_too_long(times=1))
    await make_bot(FAST_BOT)
    thread = await start_thread(slack)

    await posted(slack, thread, "Done: the goal is achieved")
    shown = texts(slack, thread)
    retries = [t for t in shown if "The model is unavailable" in t]
    assert len(retries) >= 2, shown
    retry, writing, done, summary = in_order(
        shown, ["The model is unavailable", "writing down where the work stands", "Handoff written",
               "Done: the goal is achieved"])
    assert retry < writing < done < summary
    outcomes = [r.outcome for r in fake_model.message_requests]
    assert outcomes.count("http 529") == 2 and "cut_stream" in outcomes and "http 400" in outcomes
    assert any("交接" in r.prompt for r in fake_model.message_requests if COORDINATOR(r.body))


# -- Slack faults -----------------------------------------------------------------------------------

async def test_slack_429_storms_and_5xx_lose_nothing_and_keep_order(make_bot, slack_env, fake_model):
    slack = slack_env
    script(fake_model, ask=PORT_QUESTION)
    bot = await make_bot(FAST_BOT)
    slack.rate_limit("chat.postMessage", times=5, retry_after=1)
    slack.server_error("chat.update", times=3, status=503)
    thread = await start_thread(slack)

    q = await posted(slack, thread, "Question")
    slack.server_error("chat.postMessage", times=2, status=500)
    slack.server_error("chat.update", times=2, status=500)
    await slack.click(CHANNEL, q.response["ts"], q.arg("blocks")[-2]["elements"][0]["action_id"], user="U0BOB")
    answered = await slack.wait_for("chat.update", lambda c: "U0BOB" in str(c.body.get("blocks")),
                                    ts=q.response["ts"])
    assert "button" not in str(answered.arg("blocks"))
    slack.server_error("chat.postMessage", times=1, status=502)  # not retried by slack_sdk: the outbox's turn
    await posted(slack, thread, "Done: the goal is achieved")

    shown = texts(slack, thread)
    at = in_order(shown, ["Started", "Question", "Done: the goal is achieved"])
    assert at == sorted(at), shown
    assert sum("Done: the goal is achieved" in t for t in shown) == 1
    key = ThreadKey("T0001", CHANNEL, thread)
    status_ts = (await bot.store.get_thread(key)).status_ts
    await slack.wait_until(lambda: "Done" in (slack.message(CHANNEL, status_ts) or {}).get("text", ""),
                           what="the status message showing Done")
    await marked_done(bot, key)
    for _ in range(200):  # the post is visible in Slack a moment before the outbox records it
        if not await bot.store.pending_outbox():
            break
        await asyncio.sleep(0.05)
    assert not await bot.store.pending_outbox()


async def test_dropped_connections_to_slack_lose_nothing_and_post_nothing_twice(make_bot, slack_env, fake_model):
    """No answer at all from Slack (the network dropped): edits are tried again, a reaction is let
    go, and a notice whose post Slack took but whose answer was lost is not posted a second time."""
    slack = slack_env
    script(fake_model, ask=PORT_QUESTION)
    bot = await make_bot(FAST_BOT)
    slack.no_answer("reactions.add")
    slack.no_answer("chat.postMessage", after=True)  # the acceptance reply: posted, its answer lost
    thread = await start_thread(slack)

    q = await posted(slack, thread, "Question")
    slack.no_answer("chat.update", times=2)  # the question's edit after the click: tried again
    slack.no_answer("chat.postMessage", times=1)  # a later notice: not posted, then posted
    await slack.click(CHANNEL, q.response["ts"], q.arg("blocks")[-2]["elements"][0]["action_id"], user="U0BOB")
    answered = await slack.wait_for("chat.update", lambda c: "U0BOB" in str(c.body.get("blocks")),
                                    ts=q.response["ts"])
    assert "button" not in str(answered.arg("blocks"))
    await posted(slack, thread, "Done: the goal is achieved")

    await marked_done(bot, ThreadKey("T0001", CHANNEL, thread))  # a dropped edit does not fail the run
    shown = texts(slack, thread)
    assert sum("Started" in t for t in shown) == 1, shown  # Slack took it once: it is not posted again
    at = in_order(shown, ["Started", "Question", "Done: the goal is achieved"])
    assert at == sorted(at), shown
    dropped = [c for c in slack.calls() if c.status == 0]
    assert {c.method for c in dropped} == {"reactions.add", "chat.postMessage", "chat.update"}


async def test_a_click_before_the_bot_knows_its_question_message_still_takes_its_buttons(make_bot, slack_env,
                                                                                          fake_model):
    """Slack took the question's post but its answer was lost: the person sees the question and
    clicks while the bot does not know the message's ts yet. The click cannot edit it then; the
    bot edits it once it learns the ts, so the answered question never keeps live buttons."""
    slack = slack_env
    thinking = hold()
    fake_model.rule(tool_use("mcp__human__ask", PORT_QUESTION, fault=thinking), text(BRIEF), when=CLARIFIER)
    script(fake_model)
    await make_bot(FAST_BOT)
    thread = await start_thread(slack)
    await thinking.arrived()
    await slack.wait_until(lambda: [c for c in slack.calls() if c.method in ("chat.postMessage", "chat.update")
                                    and "Running" in (c.body.get("text") or "")], what="the status line")
    slack.no_answer("chat.postMessage", after=True)  # the question: posted, its answer lost
    thinking.release()
    q = await posted(slack, thread, "Question")
    ts = next(m["ts"] for m in slack.messages_in(CHANNEL, thread) if "Question" in m.get("text", ""))
    await slack.click(CHANNEL, ts, q.arg("blocks")[-2]["elements"][0]["action_id"], user="U0BOB")
    answered = await slack.wait_for("chat.update", lambda c: "U0BOB" in str(c.body.get("blocks")) and c.status == 200,
                                    ts=ts)
    assert "button" not in str(answered.arg("blocks"))
    await posted(slack, thread, "Done: the goal is achieved")
    assert "button" not in str(slack.message(CHANNEL, ts)["blocks"])


async def test_a_failed_post_holds_back_the_rest_of_its_thread(slack_env, tmp_path, monkeypatch):
    """A 502 (not retried by slack_sdk) on the first of three queued notices: the outbox retries it
    later, and the two after it wait for it instead of overtaking it."""
    slack = slack_env
    monkeypatch.setenv("FLOWER_HOME", str(tmp_path / "home"))
    event = slack.mention(CHANNEL, "hello")  # a thread to post into
    key = ThreadKey("T0001", CHANNEL, event["ts"])
    store = BotStore(tmp_path / "bot.db")
    outbox = Outbox(store, web_client(load_config(dotenv=None)))
    try:
        for n in (1, 2, 3):
            await outbox.send(key, "note", f"note:{n}", f"notice {n}")
        slack.server_error("chat.postMessage", times=1, status=502)
        outbox.start()
        await slack.wait_until(lambda: sum(t.startswith("notice") for t in texts(slack, key.thread_ts)) == 3,
                               what="the three notices posted")
        assert [t for t in texts(slack, key.thread_ts) if t.startswith("notice")] == ["notice 1", "notice 2",
                                                                                      "notice 3"]
        assert (await store.outbox_item("note:1")).attempts == 1  # it did fail once
    finally:
        await outbox.close()
        await store.aclose()


async def test_notices_wait_out_an_unreachable_slack_however_many_tries_it_takes(slack_env, tmp_path, monkeypatch):
    """No answer from Slack more times than a refused post is tried (MAX_ATTEMPTS): the notices
    are not given up, and go out once each, in order, when Slack answers again."""
    slack = slack_env
    monkeypatch.setenv("FLOWER_HOME", str(tmp_path / "home"))
    event = slack.mention(CHANNEL, "hello")
    key = ThreadKey("T0001", CHANNEL, event["ts"])
    store = BotStore(tmp_path / "bot.db")
    outbox = Outbox(store, web_client(load_config(dotenv=None)), retry_after_s=0.02)
    try:
        for n in (1, 2):
            await outbox.send(key, "note", f"note:{n}", f"notice {n}")
        slack.no_answer("chat.postMessage", times=MAX_ATTEMPTS + 2)
        outbox.start()
        await slack.wait_until(lambda: sum(t.startswith("notice") for t in texts(slack, key.thread_ts)) == 2,
                               what="the two notices posted")
        assert [t for t in texts(slack, key.thread_ts) if t.startswith("notice")] == ["notice 1", "notice 2"]
        assert (await store.outbox_item("note:1")).attempts == MAX_ATTEMPTS + 2
    finally:
        await outbox.close()
        await store.aclose()

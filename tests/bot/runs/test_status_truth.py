"""The status line, the final message and the notices tell the truth (issue 14), end to end.

The real bot against the fake Slack, the real CLI against the fake model: the status line says
when it waits for an answer (and links to it), every cost shown in a thread is the sum of the
engine's manifest, rounds count across a follow-up, the final message says what was done and
how it was checked, ``/new`` names its archive, the restart notice names the open question.
"""

from __future__ import annotations

from bot.core.thread import ThreadKey, run_dir
from bot.render.notices import cost
from engine._lang import words
from engine.authoring import starter_paths
from engine.host import MANIFEST_FILE, read_manifest
from engine.lang import LANGUAGES
from engine.testing import hold, prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE, WORKER
from tests.bot.helpers.app import (
    ACHIEVED,
    BRIEF,
    CHANNEL,
    CLARIFY_ONLY,
    GOAL,
    NOT_YET,
    posted,
    question,
    texts,
    workspace,
)

ASK = tool_use("mcp__human__ask", {"question": "用什么语言?", "options": ["Python", "Go"]})
JUDGES = {words(lang).JUDGE_LABEL.format(step=words(lang).WORK_STEP) for lang in LANGUAGES}


def buttons(call) -> list[dict]:
    return [e for b in call.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button"]


async def status_ts(bot, thread: str) -> str:
    key = ThreadKey("T0001", CHANNEL, thread)
    return (await bot.store.get_thread(key)).status_ts


async def test_status_line_waits_for_an_answer_with_its_link_then_runs_again(make_bot, slack_env, fake_model):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)
    held = hold()
    fake_model.rule(ASK, text(BRIEF, fault=held), when=CLARIFIER)  # after the answer: held, still running
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    q_ts, q_call = await question(slack, thread)
    ts = await status_ts(bot, thread)
    link = f"/archives/{CHANNEL}/p{q_ts.replace('.', '')}"  # the fake Slack's chat.getPermalink, as Slack's
    waiting = await slack.wait_for(
        "chat.update", lambda c: "Waiting for an answer" in (c.body.get("text") or "") and link in str(c.body),
        ts=ts)
    assert "the question" in waiting.arg("blocks")[0]["text"]["text"]
    assert [b["action_id"] for b in buttons(waiting)] == ["flower_stop", "flower_new", "flower_terminal"]

    mark = slack.mark()
    await slack.click(CHANNEL, q_ts, buttons(q_call)[0]["action_id"], user="U0BOB")
    await held.arrived()  # the clarifier goes on with the answer
    running = await slack.wait_for("chat.update", lambda c: "Running" in (c.body.get("text") or ""),
                                   ts=ts, after=mark)
    assert "Waiting" not in running.body["text"] and link not in str(running.body)
    held.release()
    await posted(slack, thread, "Done")


def priced_script(fm) -> None:
    """The starter flow with sessions of different costs: a missed session changes the sum."""
    fm.rule(ASK, text(BRIEF, usage={"output_tokens": 3_000}), when=CLARIFIER)
    fm.rule(text(GOAL, usage={"output_tokens": 7_000}), when=[JUDGE, prompt_contains("设定目标")],
            sequence="call", repeat_last=True)
    fm.rule(text(NOT_YET, usage={"output_tokens": 11_000}), text(ACHIEVED, usage={"output_tokens": 13_000}),
            when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fm.rule(tool_use("Write", {"file_path": "hello.txt", "content": "hi"}), text("wrote hello.txt"), when=WORKER)
    fm.rule(text("Fixed the content in round 2: hello.txt now says hi."),
            when=[COORDINATOR, prompt_contains("还没有达成")])
    fm.rule(text("Added bye.txt as asked."), when=[COORDINATOR, prompt_contains("补充一句")])
    fm.rule(tool_use("Agent", {"subagent_type": "coder", "description": "write hello",
                               "prompt": "Write hello.txt with hi."}),
            text("round 1 done"), when=COORDINATOR, repeat_last=True)


def manifest_total(ws) -> tuple[float, list[dict]]:
    rows = read_manifest(run_dir(ws) / MANIFEST_FILE)
    return sum(r["cost_usd"] for r in rows), rows


async def test_costs_rounds_and_the_final_message_across_a_follow_up(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    bot = await make_bot()
    priced_script(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    ws = workspace(tmp_path, thread)
    await slack.send_event(event)
    q_ts, q_call = await question(slack, thread)
    await slack.click(CHANNEL, q_ts, buttons(q_call)[0]["action_id"], user="U0BOB")
    summary = await posted(slack, thread, "Done: the goal is achieved")

    total, rows = manifest_total(ws)
    judged = [r for r in rows if r["step"].split("#")[0] in JUDGES]
    assert len(judged) == 2 and all(r["cost_usd"] > 0 for r in judged)
    assert cost(total) != cost(total - judged[0]["cost_usd"])  # the costs differ enough to show a missed one
    first_status = await status_ts(bot, thread)
    final = await slack.wait_for("chat.update", lambda c: "Done" in (c.body.get("text") or ""), ts=first_status)
    assert cost(total) in final.body["text"] and cost(total) in summary.body["text"]
    shown = str(summary.arg("blocks"))
    assert "What was done" in shown and "Fixed the content in round 2: hello.txt now says hi." in shown
    # the checks' outcome in one line, linked to the checklist (which shows each check); the
    # judge's reason only where a check failed (here none did)
    plan_ts = (await slack.wait_for("chat.postMessage", lambda c: "hello.txt 存在" in str(c.arg("blocks")),
                                    thread_ts=thread)).response["ts"]
    assert "✅ *2 of 2 checks passed* · <" in shown and f"p{plan_ts.replace('.', '')}" in shown
    assert "都通过了" not in shown and "hello.txt 存在" not in shown
    assert "2 rounds" in summary.body["text"]
    said = "\n".join(texts(slack, thread))
    assert "Round 1:" not in said and "Round 2:" not in said  # the checklist's edits show the rounds

    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "顺便加一个 bye.txt", thread_ts=thread))
    banner = await posted(slack, thread, "Picking up where this left off", after=mark)
    assert "follow-up #1" in banner.body["text"] and "the goal is set again" in banner.body["text"]
    assert "goal with" not in banner.body["text"]
    again = await posted(slack, thread, "Done: the goal is achieved", after=mark)
    later = [c.body.get("text") or "" for c in slack.calls("chat.postMessage", thread_ts=thread) if c.index >= mark]
    assert not any("Round" in t for t in later)
    # the follow-up's posts: its banner (which becomes its status line) and its answer; its goal's
    # checklist is the thread's, edited in place
    assert len(later) <= 2, [t[:40] for t in later]

    total2, rows2 = manifest_total(ws)
    assert total2 > total and len(rows2) > len(rows)
    second_status = await status_ts(bot, thread)
    final2 = await slack.wait_for("chat.update", lambda c: "Done" in (c.body.get("text") or ""),
                                  ts=second_status, after=mark)
    # a follow-up is a request of its own: its cost and rounds count from 0; the answer adds the
    # thread's total once
    assert cost(total2 - total) in final2.body["text"] and cost(total2) not in final2.body["text"]
    assert f"this request {cost(total2 - total)} · thread {cost(total2)}" in str(again.arg("blocks"))
    assert "Added bye.txt as asked." in str(again.arg("blocks")) and "1 round " in again.body["text"] + " "


async def test_cost_and_elapsed_survive_a_restart_and_the_notice_names_the_open_question(
        make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    first = await make_bot()
    fake_model.rule(text(BRIEF, usage={"output_tokens": 3_000}), when=CLARIFIER)
    fake_model.rule(text(GOAL, usage={"output_tokens": 7_000}), when=[JUDGE, prompt_contains("设定目标")],
                    sequence="call", repeat_last=True)
    fake_model.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], sequence="call", repeat_last=True)
    fake_model.rule(tool_use("mcp__human__ask", {"question": "覆盖已有的 hello.txt 吗?"}), text("overwrote it"),
                    when=COORDINATOR)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    ws = workspace(tmp_path, thread)
    await slack.send_event(event)
    await posted(slack, thread, "Question: 覆盖")
    await first.close()  # the coordinator waits on its question: clarifier and goal setter are paid for
    before, _ = manifest_total(ws)
    assert before > 0

    mark = slack.mark()
    second = await make_bot()
    notice = await posted(slack, thread, "bot restarted", after=mark)
    assert "still open" in notice.body["text"] and "覆盖已有的 hello.txt 吗?" in notice.body["text"]
    ts = await status_ts(second, thread)
    resumed = await slack.wait_for("chat.update", ts=ts, after=mark)
    assert cost(before) in resumed.body["text"] and "$0.00" not in resumed.body["text"]
    assert " · 0s" not in resumed.body["text"]  # the time since the thread's first request, not since the restart
    await slack.send_event(slack.user_message(CHANNEL, "覆盖吧", thread_ts=thread))
    summary = await posted(slack, thread, "Done: the goal is achieved", after=mark)
    total, _ = manifest_total(ws)
    final = await slack.wait_for("chat.update", lambda c: "Done" in (c.body.get("text") or ""), ts=ts, after=mark)
    assert cost(total) in final.body["text"] and cost(total) in summary.body["text"]


async def test_new_with_a_request_first_says_the_last_run_was_archived(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    await posted(slack, thread, "Done")
    mark = slack.mark()
    said = slack.user_message(CHANNEL, "/new write goodbye.py", thread_ts=thread)
    await slack.send_event(said)
    notice = await posted(slack, thread, "Archived the last run", after=mark)
    [archived] = list(starter_paths(workspace(tmp_path, thread)).archive.iterdir())
    assert (archived / "需求.md").exists() and str(archived) not in notice.body["text"]
    first = [c for c in slack.calls("chat.postMessage", thread_ts=thread) if c.index >= mark][0]
    assert first is notice and "Started" in notice.body["text"]  # one first reply: archived, then started
    running = await slack.wait_for("chat.update", lambda c: "Running" in (c.body.get("text") or ""), after=mark)
    assert "$0.00" in running.body["text"]  # a new request counts from nothing, not the thread's total
    await posted(slack, thread, "Done", after=mark)
    assert len(slack.calls("reactions.add", timestamp=said["ts"])) == 1  # one reaction on the /new

"""A person's words while the judge runs are for the coordinator, never for the judge.

Real bot, real CLI: the first verdict is held, a reply lands in the thread meanwhile; the judge
is not interrupted with it, and the coordinator's next round finds it in its inbox."""

from __future__ import annotations

from engine.testing import prompt_contains, text, tool_use
from engine.testing.faults import hold
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE
from tests.bot.helpers.app import ACHIEVED, CHANNEL, NOT_YET, posted
from tests.bot.helpers.faults import BRIEF, FAST_BOT, GOAL, start_thread

WORDS = "also write bye.txt please"


async def test_words_said_while_the_judge_runs_reach_the_coordinators_next_round(make_bot, slack_env, fake_model):
    slack, held = slack_env, hold()
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], sequence="call", repeat_last=True)
    fake_model.rule(text(NOT_YET, fault=held), text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")],
                    sequence="call")
    fake_model.rule(tool_use("mcp__human__inbox", {}), text("round 2 done"),
                    when=[COORDINATOR, prompt_contains("还没有达成")])
    fake_model.rule(text("round 1 done"), when=COORDINATOR)
    await make_bot(FAST_BOT)
    thread = await start_thread(slack)
    await held.arrived()  # the judge is at work on round 1
    await slack.send_event(slack.user_message(CHANNEL, WORDS, thread_ts=thread))
    await slack.wait_for("reactions.add", lambda c: c.body.get("timestamp") != thread)  # the reply was taken
    held.release()
    await posted(slack, thread, "Done: the goal is achieved")
    judged = [r for r in fake_model.message_requests if JUDGE(r.body)]
    assert judged and not [r for r in judged if WORDS in r.prompt or any(WORDS in t for _, t in r.tool_results)]
    inbox = [t for r in fake_model.message_requests if COORDINATOR(r.body) for name, t in r.tool_results
             if name == "mcp__human__inbox"]
    assert inbox and WORDS in inbox[0]

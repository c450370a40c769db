"""An English team's whole conversation (FLOWER_LANGUAGE=en, the bot's default): real slack-bolt
against the fake Slack, the real CLI against the offline model. Nothing flower writes (Slack
messages, workspace file names and headings, the models' system prompts) holds a Chinese character,
and the English brief and goal parse."""

from __future__ import annotations

import json
import re

from engine import Brief, Goal, speaking, starter_paths
from engine.testing import prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE, WORKER

from tests.bot.helpers.app import CHANNEL, posted, question, workspace

CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
BRIEF = ("## Goal\nA hello.txt file\n## Acceptance criteria\nhello.txt says hi\n## Bounds\nOnly hello.txt\n"
         "## Unknowns and assumptions\nPython")
GOAL = "## Goal\nThe workspace has hello.txt\n## Checks\n- hello.txt exists\n- it says hi"
NOT_YET = "## Verdict\nnot achieved\n## Reason\nwrong content\n## Failed\n- 2. it says hi"
ACHIEVED = "## Verdict\nachieved\n## Reason\nall checks pass\n## Failed\nnone"


def script(fm) -> None:
    fm.rule(tool_use("mcp__human__ask", {"question": "Which language?", "options": ["Python", "Go"]}),
            text(BRIEF), when=CLARIFIER)
    fm.rule(text(GOAL), when=[JUDGE, prompt_contains("set the goal")], repeat_last=True)
    fm.rule(text(NOT_YET), text(ACHIEVED), when=[JUDGE, prompt_contains("Judge whether")], sequence="call",
            repeat_last=True)
    fm.rule(tool_use("Write", {"file_path": "hello.txt", "content": "hi"}), text("wrote hello.txt"), when=WORKER)
    fm.rule(text("fixed in round 2"), when=[COORDINATOR, prompt_contains("not achieved yet")])
    fm.rule(tool_use("Agent", {"subagent_type": "coder", "description": "write hello",
                               "prompt": "Write hello.txt with hi."}),
            text("round 1 done"), when=COORDINATOR, repeat_last=True)


async def test_an_english_conversation_has_no_chinese_anywhere_flower_writes(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    await make_bot(FLOWER_LANGUAGE="en")
    script(fake_model)
    event = slack.mention(CHANNEL, "make a hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    q_ts, q_call = await question(slack, thread)
    button = next(e for b in q_call.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button")
    await slack.click(CHANNEL, q_ts, button["action_id"], user="U0BOB")
    await posted(slack, thread, "Done: the goal is achieved")
    # the thread's budget: the acknowledgement (edited into the live status), the question, the
    # checklist (each verdict an edit) and the answer; two rounds post nothing of their own
    posts = [c.body.get("text", "")[:40] for c in slack.calls("chat.postMessage", thread_ts=thread)]
    assert len(posts) <= 4, posts

    said = [json.dumps({"text": c.body.get("text"), "blocks": c.body.get("blocks")}, ensure_ascii=False)
            for c in slack.calls() if c.method in ("chat.postMessage", "chat.update", "chat.postEphemeral")]
    assert said and [s for s in said if CJK.search(s)] == []
    # a person's words: no host path, no token count, no engine step name ("clarify", "set the goal")
    assert [s[:120] for s in said if str(tmp_path) in s] == []
    assert [s[:120] for s in said if re.search(r"\b\d+(\.\d)?K\b", s)] == []
    assert [s[:120] for s in said if re.search(r"\bclarify\b|set the goal|step \*?work", s)] == []
    systems = {r.system for r in fake_model.message_requests}
    assert systems and [s[:200] for s in systems if CJK.search(s)] == []
    prompts = [r.prompt for r in fake_model.message_requests if r.turn == 0]
    assert [p[:200] for p in prompts if CJK.search(p)] == []

    ws = workspace(tmp_path, thread)
    with speaking("en"):
        paths = starter_paths(ws)
    assert (paths.brief.name, paths.goal.name, paths.log.name) == ("brief.md", "goal.md", "qa-log.md")
    written = [p for p in paths.workbench.root.rglob("*") if p.is_file()]
    assert [str(p) for p in written if CJK.search(str(p.relative_to(ws.parent)))] == []
    assert "## Acceptance criteria" in paths.brief.read_text() and Brief.load(paths.brief).complete()
    assert "## Checks" in paths.goal.read_text() and Goal.load(paths.goal).checks == ["hello.txt exists", "it says hi"]
    assert "Python" in paths.log.read_text() and not CJK.search(paths.log.read_text())

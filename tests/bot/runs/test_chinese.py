"""A Chinese team's whole conversation (FLOWER_LANGUAGE=zh, FLOWER_SLACK_LANGUAGE unset): real
slack-bolt against the fake Slack, the real CLI against the offline model. Nothing the bot says in
Slack holds one of its own English sentences; and a team that sets FLOWER_SLACK_LANGUAGE=en reads
English in Slack while the models keep Chinese."""

from __future__ import annotations

import re
import string
from typing import Any

from bot.render.texts import chinese as zh
from bot.render.texts import english as en
from engine.authoring import starter_paths
from engine.lang import speaking
from engine.testing import prompt_contains, text
from engine.testing.roles import COORDINATOR
from tests.bot.helpers.app import CHANNEL, CLARIFY_ONLY, brief_only, posted, script, workspace

CJK = re.compile(r"[\u3400-\u9fff]")
SAID = ("chat.postMessage", "chat.update", "chat.postEphemeral", "assistant.threads.setStatus",
        "agents.sessions.setStatus")  # every call that carries the bot's words to people


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)


def _english_fragments() -> set[str]:
    """The literal parts (between fields) of every English sentence, of at least two English words."""
    found = set()
    for name in (n for n in vars(en) if n.isupper()):
        for sentence in _strings(getattr(en, name)):
            for literal, *_ in string.Formatter().parse(sentence):
                piece = literal.strip(" *_`.:;,()—\n")
                if len(re.findall(r"[A-Za-z]{2,}", piece)) >= 2:
                    found.add(piece)
    return found


ENGLISH = _english_fragments()


def _said(slack) -> list[str]:
    """Every string the bot sent to people: each text, and each text inside its blocks."""
    return [s for c in slack.calls() if c.method in SAID for s in _strings(c.body)]


async def _question(slack, thread: str, after: int):
    return await slack.wait_for("chat.postMessage", lambda c: (c.body.get("text") or "").startswith("问题："),
                                after=after, thread_ts=thread)


async def _click_first_option(slack, call) -> None:
    button = next(e for b in call.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button")
    await slack.click(CHANNEL, call.response["ts"], button["action_id"], user="U0BOB")


async def _done(slack, thread: str, after: int):
    """The thread's final answer after ``after``, answering any question asked on the way."""
    answered: set[int] = set()
    while True:
        call = await slack.wait_for(
            "chat.postMessage", lambda c: c.index not in answered and (
                (c.body.get("text") or "").startswith("问题：") or "完成：目标已达成" in (c.body.get("text") or "")),
            after=after, thread_ts=thread)
        if not (call.body.get("text") or "").startswith("问题："):
            return call
        answered.add(call.index)
        await _click_first_option(slack, call)


async def test_a_chinese_conversation_hears_no_english_sentence_of_the_bot(make_bot, slack_env, fake_model, tmp_path,
                                                                          monkeypatch):
    slack = slack_env
    monkeypatch.delenv("FLOWER_SLACK_LANGUAGE")  # unset: the bot's sentences follow FLOWER_LANGUAGE=zh
    await make_bot()
    # the models answer in Chinese too, so an English fragment can only be the bot's own
    fake_model.rule(text("第二轮修好了"), when=[COORDINATOR, prompt_contains("还没有达成")])
    script(fake_model)  # a question, then two rounds: the first judged not yet
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    await _click_first_option(slack, await _question(slack, thread, after=0))
    first = await posted(slack, thread, "完成：目标已达成")
    assert zh.ROUNDS[1].format(n=2) in first.body["text"]

    mark = slack.mark()  # a follow-up reply wakes the finished run
    await slack.send_event(slack.user_message(CHANNEL, "顺便加一个 bye.txt", thread_ts=thread))
    await posted(slack, thread, "从上次停下的地方继续", after=mark)
    await _done(slack, thread, after=mark)

    mark = slack.mark()  # /new archives it and starts again
    await slack.send_event(slack.user_message(CHANNEL, "/new 再写一个 bye.txt", thread_ts=thread))
    await posted(slack, thread, zh.ARCHIVED_NEW.removeprefix(":recycle: "), after=mark)
    await _done(slack, thread, after=mark)

    said = _said(slack)
    heard = sorted({f"{fragment!r} in {s[:160]!r}" for s in said for fragment in ENGLISH if fragment in s})
    assert heard == []
    everything = "\n".join(said)
    for sentence in (zh.STARTED, zh.QUESTION_HEAD, zh.REPLY_HINT, zh.STOP_BUTTON, zh.TERMINAL_BUTTON,
                     zh.PLAN_TITLE_JUDGED.format(passed=1, n=2), zh.PLAN_STATE["failing"],
                     zh.PLAN_TITLE_JUDGED.format(passed=2, n=2), zh.WAKE_HEAD.split("{")[0],
                     zh.SUMMARY_DONE_HEAD, zh.FEEDBACK_SAY["positive"], zh.STATUS_STATE["done"]):
        assert sentence in everything, sentence
    assert len(list(starter_paths(workspace(tmp_path, thread)).archive.iterdir())) == 1


async def test_slack_in_english_while_the_models_speak_chinese(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    await make_bot(CLARIFY_ONLY, FLOWER_LANGUAGE="zh", FLOWER_SLACK_LANGUAGE="en")
    brief_only(fake_model, ask_first=True)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    question = await slack.wait_for("chat.postMessage", lambda c: (c.body.get("text") or "").startswith("Question: "),
                                    thread_ts=thread)
    await _click_first_option(slack, question)
    await posted(slack, thread, "Done")

    everything = "\n".join(_said(slack))
    for sentence in (en.STARTED, en.QUESTION_HEAD, en.REPLY_HINT, en.TERMINAL_BUTTON):
        assert sentence in everything, sentence
    assert len({f for f in ENGLISH if f in everything}) >= 10  # the Chinese test's check finds English ones
    chinese = sorted(s for name in vars(zh) if name.isupper() for s in _strings(getattr(zh, name))
                     if len(s) > 4 and s in everything)
    assert chinese == []
    with speaking("zh"):  # the models were told Chinese: the workspace's files have their Chinese names
        assert starter_paths(workspace(tmp_path, thread)).brief.name == "需求.md"
    systems = {r.system for r in fake_model.message_requests}
    assert systems and all(CJK.search(s) for s in systems)

"""The agent surfaces' parts against the fake Slack over HTTP (the real slack_sdk client): the
checklist message found again after a restart, a status line refused for one thread only, the
fake refusing the block shapes Slack refuses, and the manifest's scope for setStatus."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey
from bot.outbound.agent_surfaces import AssistantStatus
from bot.outbound.outbox import Outbox
from bot.render.controls import feedback_block
from bot.render.plan import plan_message
from bot.runs.plan_feed import PlanFeed
from bot.store.bot_store import BotStore
from engine.authoring import CheckState
from engine.events import StepStarted, VerdictGiven

CHANNEL = "C0GENERAL"
GOAL = "## Goal\nhello.txt says hi\n## Checks\n- hello.txt exists\n- it says hi\n"
NEW_GOAL = "## Goal\nhello.txt says hi\n## Checks\n- hello.txt exists\n- it says hi\n- README.md exists\n"


def _client(slack) -> AsyncWebClient:
    return AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)


def _plans(slack, thread):
    return [c for c in slack.calls("chat.postMessage", thread_ts=thread)
            if any(b.get("type") == "plan" for b in c.arg("blocks") or [])]


async def _feed(slack, tmp_path: Path, key: ThreadKey, goal: Path) -> tuple[PlanFeed, Outbox, BotStore]:
    store = BotStore(tmp_path / "bot.db")
    client = _client(slack)
    outbox = Outbox(store, client, retry_after_s=0.05)
    outbox.start()
    return PlanFeed(key, store=store, client=client, outbox=outbox, goal_path=goal), outbox, store


async def test_a_restart_edits_the_checklist_it_posted_and_a_new_goal_edits_it_too_until_new(fake_slack, tmp_path):
    slack = fake_slack
    thread = slack.mention(CHANNEL, "write hello.txt")["ts"]
    key = ThreadKey("T0001", CHANNEL, thread)
    goal = tmp_path / "goal.md"
    goal.write_text(GOAL, encoding="utf-8")
    feed, outbox, store = await _feed(slack, tmp_path, key, goal)
    await feed.apply(StepStarted("work", index=2, total=3))
    await feed.apply(StepStarted("work", index=2, total=3))  # the same goal again: no second message
    assert len(_plans(slack, thread)) == 1
    ts = _plans(slack, thread)[0].response["ts"]
    await outbox.close()
    store.close()

    feed, outbox, store = await _feed(slack, tmp_path, key, goal)  # the bot restarted
    await feed.apply(StepStarted("work", index=2, total=3, resumed=True))
    await feed.apply(VerdictGiven("work", round=1, state="not_yet", reason="no", failed=("2",)))
    assert len(_plans(slack, thread)) == 1
    shown = slack.message(CHANNEL, ts)["blocks"][0]
    assert [t["status"] for t in shown["tasks"]] == ["complete", "error"]

    goal.write_text(NEW_GOAL, encoding="utf-8")  # a follow-up re-derived the goal: the same message shows it
    await feed.apply(StepStarted("work", index=2, total=3, woke=2))
    await feed.apply(VerdictGiven("work", round=1, state="not_yet", reason="no", failed=("3",)))
    assert len(_plans(slack, thread)) == 1
    shown = slack.message(CHANNEL, ts)["blocks"][0]["tasks"]
    assert [t["title"] for t in shown] == ["hello.txt exists", "it says hi", "README.md exists"]
    assert [t["status"] for t in shown] == ["complete", "complete", "error"]

    await store.forget_plans(key)  # /new: its request's goal gets a checklist of its own
    await feed.apply(StepStarted("work", index=2, total=3))
    assert len(_plans(slack, thread)) == 2
    assert [t["status"] for t in slack.message(CHANNEL, ts)["blocks"][0]["tasks"]] == ["complete", "complete", "error"]
    await outbox.close()
    store.close()


async def test_a_thread_that_refuses_a_status_line_is_not_asked_again_others_are(fake_slack):
    slack = fake_slack
    status = AssistantStatus(_client(slack))
    good = ThreadKey("T0001", CHANNEL, slack.mention(CHANNEL, "one")["ts"])
    gone = ThreadKey("T0001", CHANNEL, "1700000000.000001")  # no such thread: Slack says invalid_thread_ts
    assert not await status.show(gone, "is working on: work…")
    assert not await status.show(gone, "is working on: work…")
    assert len(slack.calls("assistant.threads.setStatus", thread_ts=gone.thread_ts)) == 1
    assert await status.show(good, "is working on: work…")
    assert slack.status_of(CHANNEL, good.thread_ts) == "is working on: work…"
    assert await status.clear(good) and slack.status_of(CHANNEL, good.thread_ts) == ""
    assert status.off is None


@pytest.mark.parametrize("block, where", [
    ({"type": "plan", "title": "", "tasks": []}, "/blocks/0/title"),
    ({"type": "plan", "title": "t", "tasks": [{"task_id": "a", "title": "x", "status": "done"}]},
     "/blocks/0/tasks/0/status"),
    ({"type": "plan", "title": "t", "tasks": [{"title": "x"}]}, "/blocks/0/tasks/0/task_id"),
    ({"type": "task_card", "task_id": "a", "title": "x", "output": {"type": "section"}}, "/blocks/0/output"),
    ({"type": "context_actions", "elements": []}, "/blocks/0/elements"),
    ({"type": "context_actions", "elements": [{"type": "button", "text": {"type": "plain_text", "text": "x"}}]},
     "/blocks/0/elements/0/type"),
    ({"type": "context_actions", "elements": [{"type": "feedback_buttons", "action_id": "f",
                                               "positive_button": {"text": {"type": "plain_text", "text": "+"}},
                                               "negative_button": {"text": {"type": "plain_text", "text": "-"},
                                                                   "value": "n"}}]},
     "/blocks/0/elements/0/positive_button/value"),
    ({"type": "context_actions", "elements": [feedback_block(ThreadKey("T", "C", "1.2"))["elements"][0]] * 6},
     "/blocks/0/elements"),
])
async def test_the_fake_refuses_agent_blocks_slack_refuses(fake_slack, block, where):
    with pytest.raises(SlackApiError) as refused:
        await _client(fake_slack).chat_postMessage(channel=CHANNEL, text="x", blocks=[block])
    assert refused.value.response["error"] == "invalid_blocks"
    assert any(where in e for e in refused.value.response["errors"]), refused.value.response["errors"]


async def test_the_fake_takes_the_bots_own_agent_blocks(fake_slack):
    checks = [CheckState(1, "a" * 400, "passed"), CheckState(2, "b", "failing"), CheckState(3, "c", "unverifiable")]
    blocks = plan_message(checks)["blocks"] + [feedback_block(ThreadKey("T0001", CHANNEL, "1.2"))]
    sent = await _client(fake_slack).chat_postMessage(channel=CHANNEL, text="x", blocks=blocks)
    assert sent["ok"]


def test_the_manifest_scope_covers_set_status():
    manifest = yaml.safe_load((Path(__file__).resolve().parents[3] / "manifest.yml").read_text(encoding="utf-8"))
    assert "chat:write" in manifest["oauth_config"]["scopes"]["bot"]  # Slack takes chat:write for setStatus
    source = (Path(__file__).resolve().parents[3] / "bot" / "outbound" / "agent_surfaces.py").read_text(encoding="utf-8")
    assert ".assistant_threads_setStatus(" in source

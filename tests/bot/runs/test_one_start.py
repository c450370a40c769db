"""Each start is decided once: one ``Start`` value, the workspace made once, the thread's row read
once by ``Jobs.start`` and handed to the run (besides the intake's one look: a new thread or not).
A message read once into what it is: tests/bot/inbound/test_commands.py."""

from __future__ import annotations

import collections
import sys

import pytest

from bot.core import thread as core_thread
from bot.runs.start import Start
from bot.store.threads import ThreadsMixin
from tests.bot.helpers.app import CHANNEL, CLARIFY_ONLY, brief_only, posted


def _caller() -> str:
    """The bot's module that called the counted function (a test's own calls are not counted)."""
    frame = sys._getframe(2)
    return frame.f_globals.get("__name__", "")


async def test_a_mention_makes_its_workspace_once_and_reads_its_row_once_per_start(make_bot, slack_env, fake_model,
                                                                                     monkeypatch):
    calls: collections.Counter[tuple[str, str]] = collections.Counter()
    made, read_row = core_thread.ensure_workspace, ThreadsMixin.get_thread

    def ensure_workspace(*args, **kwargs):
        calls["workspace", _caller()] += 1
        return made(*args, **kwargs)

    async def get_thread(self, *args, **kwargs):
        calls["row", _caller()] += 1
        return await read_row(self, *args, **kwargs)

    for module in list(sys.modules.values()):  # wherever the bot's code holds it, not only where it is called today
        if getattr(module, "__name__", "").startswith("bot.") and getattr(module, "ensure_workspace", None) is made:
            monkeypatch.setattr(module, "ensure_workspace", ensure_workspace)
    monkeypatch.setattr(ThreadsMixin, "get_thread", get_thread)
    await make_bot(CLARIFY_ONLY)
    brief_only(fake_model)
    event = slack_env.mention(CHANNEL, "写个 hello.txt")
    await slack_env.send_event(event)
    await posted(slack_env, event["ts"], "Done")
    ours = {what: n for what, n in calls.items() if what[1].startswith("bot.")}
    assert ours == {("workspace", "bot.runs.jobs"): 1,  # Jobs.workspace, once, for the intake and the run
                    ("row", "bot.inbound.intake"): 1,  # a new thread, or a reply in a known one
                    ("row", "bot.runs.jobs"): 1}  # Jobs.start: then handed to the run


def test_a_start_says_its_kind_once():
    assert Start.request("x", by="U1", ack_key="accepted:t").kind == "request"
    assert Start.request("x", new=True).new and not Start.request("x").new
    assert Start.reply("x", by="U1").kind == "reply"
    resumed = Start.resume(status_ts="1.2", banner_key="restart:3", restart_notice=3.0)
    assert resumed.resumed and resumed.words == "" and resumed.status_ts == "1.2"
    with pytest.raises(AttributeError):
        resumed.words = "no"  # frozen: decided once

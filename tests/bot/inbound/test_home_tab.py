"""The app's Home tab end to end (real slack-bolt against the fake Slack, the real CLI): a person sees
their runs with state, thread link and cost, and Stop on a live one stops it; an admin also sees
the month's spend by channel and by person."""

from __future__ import annotations

from bot.render.home_view import HOME_STOP_ACTION
from engine.testing import hold, text
from engine.testing.roles import CLARIFIER
from tests.bot.helpers.app import BRIEF, CHANNEL, CLARIFY_ONLY, posted


def _home(slack, user: str) -> str:
    return str((slack.home_of(user) or {}).get("blocks"))


async def test_a_person_s_runs_and_an_admin_s_month_on_the_home_tab(make_bot, slack_env, fake_model):
    slack = slack_env
    await make_bot(CLARIFY_ONLY, FLOWER_ADMINS="U0CAROL")
    held = hold()
    fake_model.rule(text(BRIEF, fault=held), when=[CLARIFIER, "bye.txt"])
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    done = slack.mention(CHANNEL, "写个 hello.txt", user="U0ALICE")
    await slack.send_event(done)
    await posted(slack, done["ts"], "Done")
    live = slack.mention(CHANNEL, "写个 bye.txt", user="U0ALICE")
    await slack.send_event(live)
    await held.arrived()

    mark = slack.mark()
    await slack.send_event(slack.home_opened("U0ALICE"))
    await slack.wait_for("views.publish", lambda c: c.body.get("user_id") == "U0ALICE", after=mark)
    shown = _home(slack, "U0ALICE")
    assert "Your runs" in shown and "写个 hello.txt" in shown and "写个 bye.txt" in shown
    assert "✅ Done" in shown and "⏳ Running" in shown and "|写个 hello.txt>" in shown  # linked to its thread
    assert shown.count(HOME_STOP_ACTION) == 1  # Stop on the live one only
    assert "This month's spend" not in shown  # Alice is no admin

    mark = slack.mark()
    await slack.click_home("U0ALICE", HOME_STOP_ACTION)
    await posted(slack, live["ts"], "Stopped", after=mark)
    await slack.wait_until(lambda: HOME_STOP_ACTION not in _home(slack, "U0ALICE"), what="the tab drawn again")
    assert "⏹️ Stopped" in _home(slack, "U0ALICE")
    held.release()

    await slack.send_event(slack.home_opened("U0CAROL"))
    await slack.wait_until(lambda: "This month's spend" in _home(slack, "U0CAROL"), what="the admin's month")
    shown = _home(slack, "U0CAROL")
    assert f"<#{CHANNEL}>" in shown and "<@U0ALICE>" in shown and "$" in shown
    assert "You have not started a run yet" in shown  # Carol's own runs: none

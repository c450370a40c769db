"""The status line, the final message and the notices of issue 14, as pure functions of events."""

from __future__ import annotations

from bot.render import messages as render
from bot.runs import tally
from bot.runs.events_view import RunStatus
from engine.authoring import CheckState
from engine.events import (
    AskEvent,
    Label,
    ResultReported,
    SessionStarted,
    StepStarted,
    TurnEnded,
    VerdictGiven,
)
from tests.bot.helpers.render import assert_slack_ok

THREAD = "T1|C1|1.0"


def line(st: RunStatus, now: float = 200.0) -> str:
    return st.payload(THREAD, now=now)["text"]


JUDGE_1, WORK_2 = Label("work · judge", role="judge", round=1), Label("work", round=2)  # as the engine runs them


def test_the_round_shows_only_during_work_and_counts_on_from_earlier_runs():
    st = RunStatus(started=100.0, rounds_before=3, cost_before=1.0)
    st.apply(StepStarted("clarify", index=0, total=3))
    assert "round" not in line(st) and "$1.00" in line(st) and "1m 40s" in line(st)
    st.apply(StepStarted("work", index=2, total=3))
    assert "*Working* · round 4" in st.payload(THREAD, now=200.0)["blocks"][0]["text"]["text"]
    st.apply(SessionStarted("work · judge#1", session_id="s").labelled(JUDGE_1))  # the judge of this run's round 1
    assert "Checking the work · round 4" in line(st)
    assert st.apply(VerdictGiven("work", round=1, state="not_yet", reason="r", failed=("c",))) is None
    note = RunStatus(rounds_before=3).apply(VerdictGiven("work", round=1, state="unreachable", reason="r"))
    assert "Round 4:" in note["text"]  # the one verdict posted, numbered as the status line numbers it
    st.apply(TurnEnded("work#round2", context=1000).labelled(WORK_2))
    assert "Working · round 5" in line(st)
    st.apply(ResultReported("work", cost_usd=0.25))
    st.apply(ResultReported("work · judge#1", cost_usd=0.5).labelled(JUDGE_1))  # the judge's sessions are paid for too
    st.apply(ResultReported("work#round2", cost_usd=0.25).labelled(WORK_2))
    assert "$2.00" in line(st)


def test_waiting_links_the_question_then_runs_again_and_a_failure_says_why():
    st = RunStatus(started=0.0)
    st.apply(StepStarted("确认需求", index=0, total=3))
    st.apply(AskEvent("确认需求", phase="asked", question="q", key="k1"))
    assert line(st).startswith("💬 Waiting for an answer")
    st.question_link("k1", "https://x.slack.com/archives/C1/p1")
    shown = st.payload(THREAD, now=1.0)
    assert "(<https://x.slack.com/archives/C1/p1|the question>)" in shown["blocks"][0]["text"]["text"]
    st.apply(AskEvent("确认需求", phase="answered", question="q", key="k1"))
    assert line(st).startswith("⏳ Running")
    st.finish("failed", cost=0.5, at=30.0, reason="step 干活 failed: the key was refused")
    failed = st.payload(THREAD, now=999.0)
    assert failed["text"].startswith("❌ Failed") and "Why: step 干活 failed: the key was refused" in failed["text"]
    assert "$0.50" in failed["text"] and "30s" in failed["text"]  # frozen at the end, not counting on


def test_the_final_message_says_what_was_done_how_it_was_checked_and_what_is_left():
    checks = [CheckState(1, "hello.txt exists", "passed"), CheckState(2, "it says <hi>", "failing"),
              CheckState(3, "runs on macOS", "unverifiable")]
    link = "https://example.slack.com/archives/C1/p1700000001000000"
    payload = render.summary_message(False, 1.234, 4, "the judge's rounds ran out", elapsed_s=3723,
                                     report="Wrote hello.txt.\n```\nhi\n```", judged="Content is wrong",
                                     checks=checks, branch="flower/hello-1", checklist_link=link,
                                     heard=[("use <tabs>", 3), ("in Go", None)])
    assert_slack_ok(payload)
    shown = str(payload["blocks"])
    for word in ["Ended without achieving the goal", "the judge's rounds ran out", "What was done", "Wrote hello.txt.",
                 f"❌ *1 of 3 checks passed* · <{link}|the checklist>", "❌ 2. it says &lt;hi&gt;",
                 "The judge:_ Content is wrong", "What is left",
                 "You said “use &lt;tabs&gt;” in round 3: the work went on with it for 2 rounds.",
                 "You said “in Go”: the goal was set with it.",
                 "4 rounds · 1h 02m · $1.23", "Branch `flower/hello-1`"]:
        assert word in shown, word
    assert "hello.txt exists" not in shown  # each check is the checklist's: the answer says the outcome once
    left = next(b for b in payload["blocks"] if "What is left" in str(b))
    assert "it says" in str(left)
    passed = str(render.summary_message(True, 1, 1, checks=[CheckState(1, "x", "passed")])["blocks"])
    assert "✅ *1 of 1 check passed*" in passed and "the checklist" not in passed and "The judge" not in passed
    huge = render.summary_message(True, 1, 1, report="x" * 100_000, judged="y" * 20_000,
                                  checks=[CheckState(n, "c" * 500, "passed") for n in range(1, 200)])
    assert_slack_ok(huge)
    assert len(huge["blocks"]) <= 20  # room for blocks appended below (feedback, plan)


def test_notices_archive_and_restart():
    after_new = render.started_message(archived=True)["text"]
    assert after_new.startswith(":recycle: Archived the last run.") and "Started." in after_new
    said = render.restarted_notice(True, "Which <language>?\nPython or Go")["text"]
    assert "confirming the requirement again" in said and "_Which &lt;language&gt;? Python or Go_" in said
    assert "still open" not in render.restarted_notice(True)["text"]


def test_follow_ups_count_from_1_after_new(tmp_path):
    assert [tally.count_follow_up(tmp_path), tally.count_follow_up(tmp_path)] == [1, 2]
    tally.reset(tmp_path)  # /new: follow-ups count from 1 again
    assert tally.follow_ups(tmp_path) == 0 and tally.count_follow_up(tmp_path) == 1
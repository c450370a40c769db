"""Engine events -> status message and thread notices (pure)."""

from __future__ import annotations

import pytest

from bot.runs.events_view import RunStatus
from engine.events import (
    AskEvent,
    HandoffEvent,
    ResultReported,
    RetryScheduled,
    StepStarted,
    TaskWarning,
    TurnEnded,
    VerdictGiven,
    WaitingOnline,
    WorkflowDone,
)

THREAD = "T1|C1|1.0"


def test_status_folds_step_round_cost():
    st = RunStatus(started=100.0)
    assert st.apply(StepStarted("干活", index=2, total=3)) is None
    st.apply(TurnEnded("干活", context=12300))
    st.apply(ResultReported("干活", cost_usd=0.5))
    st.apply(ResultReported("干活", cost_usd=0.75))  # cumulative per step: not added twice
    st.apply(ResultReported("确认需求", cost_usd=0.25))
    assert st.apply(VerdictGiven("干活", round=1, state="not_yet", reason="x", failed=("a",))) is None
    st.apply(StepStarted("干活", index=2, total=3))  # the same step again keeps the round
    line = st.payload(THREAD, now=165.0)["text"]
    assert "Working" in line and "round 2" in line and "$1.00" in line and "1m 05s" in line
    assert "12.3K" not in line and "干活" not in line  # no token count, no engine step name
    st.apply(VerdictGiven("干活", round=2, state="unclear"))  # counted as not yet
    assert "round 3" in st.payload(THREAD, now=165.0)["text"]
    st.apply(VerdictGiven("干活", round=3, state="achieved"))
    assert "round 3" in st.payload(THREAD, now=165.0)["text"]
    st.apply(StepStarted("收尾", index=3, total=4))  # rounds are the work step's: none shown for another step
    assert "round" not in st.payload(THREAD, now=165.0)["text"]


@pytest.mark.parametrize(("state", "ids"), [("running", ["flower_stop", "flower_new", "flower_terminal"]),
                                           ("done", ["flower_terminal"]), ("stopped", ["flower_terminal"]),
                                           ("failed", ["flower_terminal"])])
def test_status_buttons_carry_the_thread(state, ids):
    st = RunStatus(started=0.0, state=state)
    buttons = [e for b in st.payload(THREAD, now=1.0)["blocks"] for e in b.get("elements", [])
               if e.get("type") == "button"]
    assert [b["action_id"] for b in buttons] == ids
    assert all(b["value"] == THREAD for b in buttons)


@pytest.mark.parametrize(
    ("event", "needle"),
    [
        (VerdictGiven("w", round=1, state="unreachable", failed=("x",)), "• x"),
        (RetryScheduled("w", attempt=1, max_attempts=5, delay_s=2.0), "try 1/5"),
        (WaitingOnline("w", host="h", port=1, waited_s=30), "Can't reach h:1"),
        (HandoffEvent("w", phase="writing", used=150000), "memory is full"),
        (HandoffEvent("w", phase="done", degraded=True), "from what is on disk"),
        (TaskWarning("w", unverifiable=("a",), total=3, path="p"), "1/3"),
    ],
)
def test_notices(event, needle):
    assert needle in RunStatus().apply(event)["text"]


@pytest.mark.parametrize("event", [AskEvent("w", phase="asked", question="q"), WorkflowDone("w", ok=True),
                                   TaskWarning("w", total=3)])
def test_no_notice(event):
    assert RunStatus().apply(event) is None


@pytest.mark.parametrize("state", ["achieved", "not_yet", "unclear"])
def test_a_verdict_a_person_need_not_act_on_is_no_post(state):
    # the checklist is edited instead: three failed rounds are not three "not yet" posts
    assert RunStatus().apply(VerdictGiven("w", round=2, state=state, reason="r")) is None

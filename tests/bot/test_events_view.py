"""Engine events -> status message and thread notices (pure)."""

from __future__ import annotations

import pytest

from bot.runs.events_view import RunStatus
from engine._events import Event

THREAD = "T1|C1|1.0"


def test_status_folds_step_round_context_cost():
    st = RunStatus(started=100.0)
    assert st.apply(Event("step", "干活")) is None
    st.apply(Event("turn", "干活", {"context": 12300}))
    st.apply(Event("result", "干活", {"cost_usd": 0.5}))
    st.apply(Event("result", "干活", {"cost_usd": 0.75}))  # cumulative per step: not added twice
    st.apply(Event("result", "确认需求", {"cost_usd": 0.25}))
    assert st.apply(Event("verdict", "干活", {"state": "not_yet", "round": 1, "reason": "x", "failed": ["a"]}))
    st.apply(Event("step", "干活"))
    line = st.payload(THREAD, now=165.0)["text"]
    assert "干活" in line and "round 2" in line and "12.3K" in line and "$1.00" in line and "1m 05s" in line
    st.apply(Event("step", "干活#round3"))
    assert "round 3" in st.payload(THREAD, now=165.0)["text"]


@pytest.mark.parametrize(("state", "ids"), [("running", ["flower_stop", "flower_new"]), ("done", []),
                                           ("stopped", []), ("failed", [])])
def test_status_buttons_carry_the_thread(state, ids):
    st = RunStatus(started=0.0, state=state)
    buttons = [e for b in st.payload(THREAD, now=1.0)["blocks"] for e in b.get("elements", [])
               if e.get("type") == "button"]
    assert [b["action_id"] for b in buttons] == ids
    assert all(b["value"] == THREAD for b in buttons)


@pytest.mark.parametrize(
    ("event", "needle"),
    [
        (Event("verdict", "w", {"state": "achieved", "round": 2, "reason": "ok"}), "Round 2: goal achieved"),
        (Event("verdict", "w", {"state": "unreachable", "round": 1, "failed": ["x"]}), "• x"),
        (Event("retry", "w", {"attempt": 1, "max_attempts": 5, "delay_s": 2.0}), "try 1/5"),
        (Event("offline", "w", {"host": "h", "port": 1, "waited_s": 30}), "Can't reach h:1"),
        (Event("handoff", "w", {"phase": "writing", "used": 150000}), "150.0K"),
        (Event("handoff", "w", {"phase": "done", "degraded": True}), "from what is on disk"),
        (Event("task", "w", {"unverifiable": ["a"], "total": 3, "path": "p"}), "1/3"),
    ],
)
def test_notices(event, needle):
    assert needle in RunStatus().apply(event)["text"]


@pytest.mark.parametrize("event", [Event("ask", "w"), Event("done", "w"), Event("task", "w", {"total": 3})])
def test_no_notice(event):
    assert RunStatus().apply(event) is None

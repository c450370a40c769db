"""Engine events -> status line and thread notices (pure)."""

from __future__ import annotations

import pytest

from bot.events_view import RunStatus, elapsed, notice
from engine.core.events import Event


@pytest.mark.parametrize(("s", "out"), [(0, "0s"), (42.9, "42s"), (75, "1m15s"), (3700, "1h01m"), (-3, "0s")])
def test_elapsed(s, out):
    assert elapsed(s) == out


def test_status_folds_step_round_context_cost():
    st = RunStatus(started=100.0)
    assert st.apply(Event("step", "干活")) is None
    st.apply(Event("turn", "干活", {"context": 12300}))
    st.apply(Event("result", "干活", {"cost_usd": 0.5}))
    st.apply(Event("result", "干活", {"cost_usd": 0.75}))  # cumulative per step: not added twice
    st.apply(Event("result", "确认需求", {"cost_usd": 0.25}))
    assert st.apply(Event("verdict", "干活", {"state": "not_yet", "round": 1, "reason": "x", "failed": ["a"]}))
    st.apply(Event("step", "干活"))
    line = st.text(now=165.0)
    assert "干活" in line and "round 2" in line and "12.3K" in line and "$1.00" in line and "1m05s" in line
    st.apply(Event("step", "干活#round3"))
    assert "round 3" in st.text(now=165.0)


@pytest.mark.parametrize(
    ("event", "needle"),
    [
        (Event("verdict", "w", {"state": "achieved", "round": 2, "reason": "ok"}), "Verdict #2: *achieved*"),
        (Event("verdict", "w", {"state": "unreachable", "round": 1, "failed": ["x"]}), "• x"),
        (Event("retry", "w", {"attempt": 1, "max_attempts": 5, "delay_s": 2.0}), "attempt 1/5"),
        (Event("offline", "w", {"host": "h", "port": 1, "waited_s": 30}), "Cannot reach h:1"),
        (Event("handoff", "w", {"phase": "writing", "used": 150000}), "150.0K"),
        (Event("handoff", "w", {"phase": "done", "degraded": True}), "degraded"),
        (Event("task", "w", {"unverifiable": ["a"], "total": 3, "path": "p"}), "1/3"),
    ],
)
def test_notices(event, needle):
    assert needle in notice(event)


@pytest.mark.parametrize("event", [Event("handoff", "w", {"phase": "near"}), Event("ask", "w"), Event("done", "w")])
def test_no_notice(event):
    assert notice(event) is None

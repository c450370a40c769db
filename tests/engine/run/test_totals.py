"""A run_dir's totals: every session's cost for the thread, judged rounds per request since /new."""

from __future__ import annotations

import json
import time

from engine._run.totals import Spend, begin_request, totals


def _rows(tmp_path, rows):
    (tmp_path / "manifest.json").write_text(json.dumps(rows), encoding="utf-8")


def test_judge_sessions_are_told_by_their_role_and_old_rows_by_their_label(tmp_path):
    _rows(tmp_path, [
        {"step": "确认需求", "ok": True, "cost_usd": 0.5},
        {"step": "干活·判定#1", "ok": True, "cost_usd": 1},  # written before rows had a role
        {"step": "work · judge#2", "ok": True, "cost_usd": 0.25, "role": "judge", "round": 2},
        {"step": "干活#round2", "ok": True, "role": "step", "round": 2},
        {"step": "干活·判定#3", "ok": False, "cost_usd": 0.0, "role": "judge", "round": 3},  # killed: no verdict
        {"step": "确认需求#retry1", "ok": True}])
    assert totals(tmp_path).thread == Spend(1.75, 2) == totals(tmp_path).request


def test_a_new_request_counts_from_zero_and_the_thread_goes_on(tmp_path):
    _rows(tmp_path, [{"step": "j", "ok": True, "cost_usd": 1.0, "role": "judge", "round": 1}])
    begin_request(tmp_path)
    assert totals(tmp_path).request == Spend(0.0, 0)
    _rows(tmp_path, [{"step": "j", "ok": True, "cost_usd": 1.0, "role": "judge", "round": 1},
                     {"step": "j", "ok": True, "cost_usd": 0.5, "role": "judge", "round": 1}])
    got = totals(tmp_path)
    assert (got.thread, got.request) == (Spend(1.5, 2), Spend(0.5, 1))
    assert got.request_began is not None and abs(got.request_began - time.time()) < 3600  # when it began
    assert totals(tmp_path / "fresh").request_began is None  # the thread's first request


def test_no_manifest_is_nothing_spent_and_an_unreadable_mark_counts_from_the_start(tmp_path):
    assert totals(tmp_path).thread == Spend()
    _rows(tmp_path, [{"step": "s", "ok": True, "cost_usd": 2.0}])
    (tmp_path / "totals.json").write_text("{not json", encoding="utf-8")
    assert totals(tmp_path).request == Spend(2.0, 0)

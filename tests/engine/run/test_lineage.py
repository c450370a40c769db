"""Lineage on disk: written at once, atomic, guarded, archived with its brief and goal."""

import json
import os

import pytest

from engine.authoring import Lineage


def test_remember_writes_at_once_and_wake_counts(tmp_path):
    path = tmp_path / "runs" / "lineage.json"
    lin = Lineage(path, tmp_path)
    lin.remember("干活", "sid-1")
    assert json.loads(path.read_text()) == {"workspace": str(tmp_path.resolve()), "woke": 0,
                                            "steps": {"干活": "sid-1"}}
    assert lin.wake() == 1
    again = Lineage(path, tmp_path)
    assert again.woke == 1 and again.steps == {"干活": "sid-1"}
    assert [p.name for p in path.parent.iterdir()] == ["lineage.json"]  # no temp file left


def test_sessions_gone_from_the_store_are_dropped(tmp_path):
    path = tmp_path / "lineage.json"
    Lineage(path, tmp_path).remember("a", "alive")
    lin = Lineage(path, tmp_path)
    lin.remember("b", "dead")
    kept = Lineage(path, tmp_path, has_session=lambda sid: sid == "alive")
    assert kept.steps == {"a": "alive"}


@pytest.mark.parametrize("content", ["{broken", "[]", '{"workspace": 3}', '{"steps": "x"}'])
def test_unreadable_lineage_is_no_lineage(tmp_path, content):
    path = tmp_path / "lineage.json"
    path.write_text(content)
    lin = Lineage(path, tmp_path)
    assert lin.steps == {} and lin.woke == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through read-only folders")
def test_write_failure_is_swallowed(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    Lineage(folder / "lineage.json", tmp_path).remember("a", "sid")  # no exception


def test_write_failure_is_swallowed_when_the_path_is_a_folder(tmp_path):
    path = tmp_path / "lineage.json"
    path.mkdir()
    lin = Lineage(path, tmp_path)
    lin.remember("a", "sid")  # OSError while replacing a folder: logged, not raised
    assert lin.steps == {"a": "sid"}


def test_archive_moves_all_three_and_resets(tmp_path):
    path = tmp_path / "runs" / "lineage.json"
    brief, goal = tmp_path / "需求.md", tmp_path / "目标.md"
    brief.write_text("b")
    goal.write_text("g")
    lin = Lineage(path, tmp_path)
    lin.remember("干活", "sid")
    lin.wake()
    into = lin.archive(tmp_path / "archive" / "t1", extra=[brief, goal, tmp_path / "missing.md"], anchor=tmp_path)
    assert sorted(p.name for p in into.iterdir()) == ["lineage.json", "目标.md", "需求.md"]
    assert lin.steps == {} and lin.woke == 0 and not path.exists()

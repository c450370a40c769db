"""Thread -> workspace folder: safe names only, never outside FLOWER_HOME."""

from __future__ import annotations

import pytest

from bot.core.thread import ThreadKey, ensure_workspace, folder_name, run_dir, workspace_dir
from bot.errors import ThreadError


@pytest.mark.parametrize(
    ("team", "channel", "ts", "key"),
    [
        ("T0001", "C0GENERAL", "1700000000.000100", "T0001-C0GENERAL-1700000000_000100"),
        ("T1", "G0SECRET", "1.2", "T1-G0SECRET-1_2"),
        ("E_1", "D-9", "17", "E_1-D-9-17"),
    ],
)
def test_key_is_a_safe_folder_name(team, channel, ts, key):
    assert folder_name(ThreadKey(team, channel, ts)) == key


@pytest.mark.parametrize(
    ("team", "channel", "ts"),
    [
        ("T1", "../etc", "1.2"),
        ("T1", "C1", "1.2/.."),
        ("", "C1", "1.2"),
        ("T1", "C 1", "1.2"),
        ("T1", "C1", ""),
        ("T1", "C1", "1..2/x"),
        ("T1", "C1\x00", "1.2"),
        ("T1", "C1", "1.2\n"),
        ("T1", "Cé", "1.2"),
    ],
)
def test_unsafe_ids_are_refused(tmp_path, team, channel, ts):
    with pytest.raises(ThreadError, match="cannot name a workspace folder"):
        workspace_dir(tmp_path, ThreadKey(team, channel, ts))


def test_workspace_is_under_home_with_runs(tmp_path):
    ref = ThreadKey("T1", "C1", "1.2")
    ws = ensure_workspace(tmp_path, ref)
    assert ws == (tmp_path / "workspaces" / "T1-C1-1_2").resolve()
    assert run_dir(ws).is_dir()
    assert ensure_workspace(tmp_path, ref) == ws  # idempotent


def test_symlink_leading_outside_is_refused(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (tmp_path / "home" / "workspaces").mkdir(parents=True)
    (tmp_path / "home" / "workspaces" / "T1-C1-1_2").symlink_to(outside)
    with pytest.raises(ThreadError, match="outside"):
        workspace_dir(tmp_path / "home", ThreadKey("T1", "C1", "1.2"))

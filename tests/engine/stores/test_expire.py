"""Expiry never makes the context bigger, never repeats the command, never drops a value.

Hand-made transcripts shaped like the CLI's (``shapes.Transcript``).
"""

from __future__ import annotations

import pytest

from engine._resume.ephemeral import yields_value
from engine._resume.expire import expire_ephemeral
from engine._resume.policies import EphemeralPolicy
from tests.engine.stores.shapes import Transcript, bash, results_of

LISTING = "README.md\nsrc\ntests\npyproject.toml\nruns\n" * 3  # longer than the note


def _session(*calls, newest: int = 6) -> list[dict]:
    t = Transcript()
    for call in calls:
        t.turn(call)
    for _ in range(newest):
        t.turn(bash("git status", LISTING))
    t.say("done")
    return t.entries


def test_the_note_does_not_repeat_the_command():
    entries = _session(bash("git log --oneline -20 -- src/some/long/path.py", LISTING))
    expire_ephemeral(entries, EphemeralPolicy())
    note = results_of(entries)[0]["content"]
    assert "已过期" in note and "git log" not in note and "path.py" not in note


def test_a_result_shorter_than_the_note_stays():
    entries = _session(bash("ls", "a.txt"), bash("ls src", LISTING))
    report = expire_ephemeral(entries, EphemeralPolicy())
    short, long = results_of(entries)[:2]
    assert short["content"] == "a.txt" and "已过期" in long["content"]
    assert report["expired"] == 1
    assert report["expired_chars"] == len(LISTING) - len(long["content"])


@pytest.mark.parametrize("cmd", [
    "date +%Y%m%d-%H%M%S", "pwd", "hostname", "whoami", "git rev-parse HEAD",
    "git rev-parse --show-toplevel", "git branch --show-current", "ls runs && date", "echo $HOME",
    "git config --get user.email", "realpath out",
])
def test_a_glance_that_printed_a_value_is_never_expired(cmd):
    value = "2026-11-30-090000 /workspace/runs/2026-11-30-090000 output folder " * 2
    entries = _session(bash(cmd, value))
    expire_ephemeral(entries, EphemeralPolicy())
    assert results_of(entries)[0]["content"] == value


@pytest.mark.parametrize("cmd, value", [
    ("date", True), ("mktemp -d", True), ("pwd", True), ("git rev-parse HEAD", True),
    ("git -C sub rev-parse HEAD", True), ("ls -t runs | head -1", False), ("git status", False),
    ("git branch -a", False), ("grep -rn TODO src", False), ("cat notes.txt", False), ("", False),
])
def test_yields_value(cmd, value):
    assert yields_value(cmd) is value

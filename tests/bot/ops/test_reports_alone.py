"""``flower-bot usage`` and ``flower-bot audit`` stand alone (issue 37, finding 9): an operator reads the
ledger and the audit trail when the bot itself cannot start, with no Slack token and a policy file
the bot would refuse; they need only FLOWER_HOME or FLOWER_DATABASE_URL. The real command, in a
process of its own, on SQLite and on PostgreSQL."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

from bot.core.thread import ThreadKey
from bot.store.ledger_rows import UsageRow

KEY = ThreadKey("T0001", "C0GENERAL", "1700000000.000100")
BAD_POLICY = "[defaults]\ncolour = 'red'\n"


def flower_bot(tmp_path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``flower-bot ARGS`` with nothing of the bot's settings but ``env``: no SLACK_* at all, and no
    ``.env`` in its folder."""
    bare = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "FLOWER_HOME": str(tmp_path / "home"), **env}
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True, timeout=120,
                          env=bare, cwd=tmp_path)


async def test_usage_and_audit_need_only_the_store_and_warn_of_a_bad_policy(backend, tmp_path):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "policy.toml").write_text(BAD_POLICY, encoding="utf-8")  # the bot would not start with it
    store = backend.store()
    try:
        await store.record_usage(UsageRow(KEY, "U0ALICE", "claude-test", 1.0, "work", 0.25, 1200, 1_700_000_000.0))
        await store.audit("U0ALICE", "start", KEY, "写个 hello.txt")
    finally:
        await store.aclose()
    env = {"FLOWER_DATABASE_URL": backend.target} if backend.kind == "postgres" else {}

    done = flower_bot(tmp_path, "usage", "--by", "user", "--format", "csv", **env)
    assert done.returncode == 0, done.stderr
    assert list(csv.DictReader(io.StringIO(done.stdout))) == [
        {"user": "U0ALICE", "cost_usd": "0.25", "tokens": "1200", "sessions": "1"}]
    warned = done.stderr.strip()
    assert warned.count("\n") == 0 and warned.startswith("flower-bot: warning: "), warned
    assert str(home / "policy.toml") in warned and "unknown key 'colour'" in warned, warned

    done = flower_bot(tmp_path, "audit", "--format", "json", **env)
    assert done.returncode == 0, done.stderr
    assert '"action": "start"' in done.stdout and "写个 hello.txt" in done.stdout
    assert "unknown key 'colour'" in done.stderr


def test_a_store_they_cannot_name_is_still_one_line_and_exit_2(tmp_path):
    (tmp_path / "home").write_text("not a folder")
    done = flower_bot(tmp_path, "usage")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("flower-bot: FLOWER_HOME must be a folder") and done.stderr.count("\n") == 1
    done = flower_bot(tmp_path, "audit", FLOWER_HOME=str(tmp_path), FLOWER_DATABASE_URL="mysql://u:SECRETpw@h/db")
    assert done.returncode == 2 and "FLOWER_DATABASE_URL must be a postgresql:// URL" in done.stderr
    assert "SECRETpw" not in done.stderr


def test_a_database_they_cannot_reach_is_one_line_that_hides_the_password(tmp_path):
    """The report's whole use is when things are broken: an unreachable PostgreSQL is said in one line (not a
    traceback), its password masked, and a password whose '/', '?' or '#' was not percent-encoded (which
    makes the URL's host part end inside it, and the driver quote pieces of it) is refused before any use."""
    closed = "postgresql://flower:SECRETpw@127.0.0.1:1/flower"  # nothing listens on port 1
    done = flower_bot(tmp_path, "usage", FLOWER_DATABASE_URL=closed)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.startswith("flower-bot: cannot reach PostgreSQL") and done.stderr.count("\n") == 1, done.stderr
    assert "SECRETpw" not in done.stderr and "***" in done.stderr
    for raw in ("postgresql://flower:SEC#RETpw@127.0.0.1:1/flower", "postgresql://flower:SEC?RETpw@127.0.0.1:1/flower",
                "postgresql://flower:SEC/RETpw@127.0.0.1:1/flower"):
        done = flower_bot(tmp_path, "audit", FLOWER_DATABASE_URL=raw)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "percent-encode" in done.stderr and "SEC" not in done.stderr and "RETpw" not in done.stderr, done.stderr

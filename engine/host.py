"""For hosts: the plumbing a program that runs the engine reuses to keep its own state beside it.

A host (the Slack bot, a service of your own) keeps files and tables of its own next to the
runs: the bot's ``bot.db`` or its PostgreSQL tables, its bindings file, the costs it reads from a
run's manifest, the context sizes it shows. It keeps them the way the engine keeps its own, with
these helpers, so the same guarantees hold (a write takes the SQLite file's lock first, each
migration runs once however many processes start, no file is left half written, no symlink is
followed into a workspace). They live here, not
in ``engine``, because they say nothing about how a job runs: ``engine`` stays what a front end
needs to start and show one. The contracts are in each name's docstring.
"""

from engine import _beneath as beneath
from engine._file_work import file_work
from engine._files import write_json_atomic, write_text_atomic
from engine._run.launcher import check_cli
from engine._run.manifest import MANIFEST_FILE, read_manifest
from engine._run.signals import install as install_signal_rescue
from engine._run.spend import SpendGuard, estimate_usd
from engine._run.totals import Spend, Totals
from engine._stores.pg_pool import PgDatabase, redact
from engine._stores.pg_schema import Migration
from engine._stores.sqlite import SESSIONS_FILE
from engine._stores.sqlite_db import immediate, open_sqlite
from engine._stores.sqlite_file import SqliteFile
from engine._tokens import human_tokens
from engine._tree import remove_tree

__all__ = [
    # SQLite: one file behind one connection used from worker threads; a write takes the lock first
    "SqliteFile",
    "open_sqlite",
    "immediate",
    # PostgreSQL (the postgres extra): one pool per URL per process, migrations once per component
    "PgDatabase",
    "Migration",
    "redact",  # a database URL without its password, for logs and errors
    # Files: written whole or not at all; a workspace's files opened beneath it
    "write_text_atomic",
    "write_json_atomic",
    "beneath",  # the one door to a workspace's files for host code: no symlink followed
    "file_work",  # work on a run's files, in a small pool of its own with a timeout (never the loop's)
    "remove_tree",  # a folder a run wrote, deleted in a loop (no recursion, no link followed)
    # A run's record: what every session of a run_dir spent, as the runtime wrote it, and the
    # SQLite file in a run_dir that holds its transcripts (read it read-only)
    "MANIFEST_FILE",
    "SESSIONS_FILE",
    "read_manifest",
    "Totals",  # a run_dir's spend, the thread's and its request's (StarterRun.totals() returns it)
    "Spend",  # money spent and rounds judged
    # The host's process: Claude Code is there, and a killed step is recorded as killed
    "check_cli",
    "install_signal_rescue",
    # Words: a token count as a person reads it (80.2K)
    "human_tokens",
    # Spend: a limit the runtime asks at every message (Runtime(spend=...)), and a call's list price
    "SpendGuard",
    "estimate_usd",
]

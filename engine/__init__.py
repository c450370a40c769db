"""flower's agent engine: long coding-agent jobs on Claude Code that survive anything.

The public API, declared once and grouped as the specification groups it. Everything here is
importable as ``from engine import X``; the error tree is drawn in ``engine._errors``.
"""

from engine._agents.spec import AgentSpec, CompactPolicy, HandoffPolicy, build_options, default_window
from engine._human.channel import Answer, HumanChannel, Question
from engine._human.transports import ScriptedTransport, TerminalTransport, Transport
# Progress events
from engine._events import (
    AskEvent,
    AskPhase,
    Event,
    HandoffEvent,
    HandoffPhase,
    Interrupted,
    ResultReported,
    RetryScheduled,
    SessionStarted,
    StepStarted,
    TaskWarning,
    TurnEnded,
    VerdictGiven,
    WaitingForApi,
    WaitingOnline,
    WorkflowDone,
)
from engine._agents.guard import (
    delegate_guard,
    index_guard,
    isolate_guard,
    isolated,
    merge_hooks,
    spill_guard,
    wants_isolation,
    whitelist_guard,
    workbench_hooks,
)
from engine._run.lineage import Lineage
from engine._run.manifest import MANIFEST_FILE, StepResult, read_manifest
from engine._run.resilience import FatalCause, Resilience, fatal_cause
from engine._agents.roles import clarify, coordinator, judge, oracle, worker
from engine._agents.rules import (
    CLARIFY_RULES,
    COORDINATOR_RULES,
    JUDGE_RULES,
    ORACLE_RULES,
    WORKER_RULES,
)
from engine._run.runtime import Runtime
from engine._run.sandbox import Sandbox
from engine._agents.workbench import Workbench
from engine._docs.brief import Brief
from engine._docs.goal import Goal
from engine._docs.handoff_doc import Handoff
from engine._docs.verdict import Verdict
from engine._docs.checks import CheckState, check_states
from engine._errors import FlowerError
from engine._human.channel import ChannelError
from engine._human.transports import TransportError
from engine._run.credentials import CredentialsError
from engine._run.run_lock import WorkspaceBusyError
from engine._files import write_json_atomic, write_text_atomic
from engine import _beneath as beneath
from engine._beneath import UnsafePath
from engine._resume.ephemeral import is_ephemeral
from engine._stores.pg_pool import PgDatabase, redact
from engine._stores.pg_schema import Migration
from engine._stores.postgres import PostgresSessionStore
from engine._resume.stores import PruningPostgresSessionStore, TrimmingPostgresSessionStore
from engine._resume.stores import PruningSessionStore
from engine._resume.policies import PrunePolicy
from engine._stores.sqlite import SqliteSessionStore
from engine._stores.sqlite_db import StoreError, immediate, open_sqlite
from engine._stores.sqlite_file import SqliteFile
from engine._resume.stores import TrimmingSessionStore
from engine._resume.policies import EphemeralPolicy, TrimPolicy
from engine._flow.base import Step, StepAbort, Workflow
from engine._stores.sqlite_read import last_context_tokens
from engine._flow.oracle import consult
from engine._flow.failure import FlowFailure, flow_failure
from engine._flow.starter_run import StarterRun
from engine._run.launcher import check_cli
from engine._run.signals import install as install_signal_rescue
from engine._flow.starter import (
    WORK_STEP,
    StarterPaths,
    archive_run,
    starter_flow,
    starter_paths,
    wake_state,
)
from engine._tokens import human_tokens
from engine._lang import ENV as LANGUAGE_ENV, LANGUAGES, check as check_language, from_locale as locale_language, speaking, step_names
from engine._flow.steps import (
    BRIEF_KEY,
    CLARIFY_RESUME,
    GOAL_KEY,
    MISSING_KEY,
    ROUND_KEY,
    VERDICT_KEY,
    VERIFY_PROMPT,
    clarify_step,
    goal_step,
    with_goal,
)

__version__ = "0.1.0"

__all__ = [
    # Runtime: runs one step with retries, interruptions and handoff
    "Runtime",
    "Sandbox",
    "StepResult",
    "MANIFEST_FILE",
    "read_manifest",
    "Resilience",
    "FatalCause",
    "fatal_cause",
    "Lineage",
    # Progress events: what a front end is told, one class per kind (``Event.kind``)
    "Event",
    "StepStarted",
    "SessionStarted",
    "TurnEnded",
    "ResultReported",
    "RetryScheduled",
    "WaitingOnline",
    "WaitingForApi",
    "HandoffEvent",
    "Interrupted",
    "TaskWarning",
    "VerdictGiven",
    "AskEvent",
    "WorkflowDone",
    "HandoffPhase",
    "AskPhase",
    # Workflow: steps in order, state in ctx, continuity across processes
    "Workflow",
    "Step",
    "clarify_step",
    "goal_step",
    "with_goal",
    "starter_flow",
    "StarterRun",
    "install_signal_rescue",
    "check_cli",
    "wake_state",
    "starter_paths",
    "StarterPaths",
    "archive_run",
    "WORK_STEP",
    "FlowFailure",
    "flow_failure",
    "consult",
    "BRIEF_KEY",
    "GOAL_KEY",
    "VERDICT_KEY",
    "ROUND_KEY",
    "MISSING_KEY",
    "CLARIFY_RESUME",
    "VERIFY_PROMPT",
    # Language: what the models are told and what is written (en, zh), chosen once per run
    "LANGUAGES",
    "LANGUAGE_ENV",
    "check_language",
    "locale_language",
    "speaking",
    "step_names",
    # Roles and their rules
    "coordinator",
    "worker",
    "clarify",
    "judge",
    "oracle",
    "COORDINATOR_RULES",
    "WORKER_RULES",
    "CLARIFY_RULES",
    "JUDGE_RULES",
    "ORACLE_RULES",
    # Agent definition
    "AgentSpec",
    "build_options",
    "CompactPolicy",
    "HandoffPolicy",
    "default_window",
    # Documents
    "Brief",
    "Goal",
    "Verdict",
    "Handoff",
    "CheckState",
    "check_states",
    # The human channel
    "HumanChannel",
    "Question",
    "Answer",
    "Transport",
    "TerminalTransport",
    "ScriptedTransport",
    # Hooks
    "whitelist_guard",
    "delegate_guard",
    "spill_guard",
    "index_guard",
    "isolate_guard",
    "isolated",
    "wants_isolation",
    "workbench_hooks",
    "merge_hooks",
    # Workbench
    "Workbench",
    # Session stores: SQLite (one machine, the default) and PostgreSQL (several; the postgres extra)
    "SqliteSessionStore",
    "TrimmingSessionStore",
    "PruningSessionStore",
    "PostgresSessionStore",
    "TrimmingPostgresSessionStore",
    "PruningPostgresSessionStore",
    "TrimPolicy",
    "EphemeralPolicy",
    "PrunePolicy",
    "is_ephemeral",
    "last_context_tokens",
    # For hosts: the plumbing a front end keeps its own state and words with, as the engine
    # does (the bot's bot.db or its PostgreSQL tables, its bindings file, its context sizes);
    # contracts in the docstrings
    "SqliteFile",
    "open_sqlite",
    "immediate",
    "PgDatabase",
    "Migration",
    "redact",
    "write_text_atomic",
    "write_json_atomic",
    "beneath",  # the one door to a workspace's files for host code: no symlink followed
    "human_tokens",
    # Errors: every one the engine raises on purpose, drawn as a tree in engine/_errors.py
    "FlowerError",
    "StepAbort",
    "StoreError",
    "CredentialsError",
    "WorkspaceBusyError",
    "ChannelError",
    "TransportError",
    "UnsafePath",
]

"""For workflow authors: what a workflow of your own is composed of, beyond the spec's API.

The spec's names are ``engine``'s (roles and their rules, the ready-made steps, the guards and
hooks, the workbench, the session stores and their policies) and are declared there; they stay
importable from here too, for code written when this module held them. What is declared here
goes past the spec: the transports a human channel asks through (the protocol, the question it
is given and the answer it returns, the terminal's and a script's), the starter flow's folder and
failures, the goal's checks as states, why a failure is fatal, the oracle's one question, and the
PostgreSQL session stores (several replicas; the postgres extra).
"""

from engine import (  # the spec's names, declared in engine; still importable from here
    BRIEF_KEY,
    CLARIFY_RESUME,
    CLARIFY_RULES,
    COORDINATOR_RULES,
    GOAL_KEY,
    JUDGE_RULES,
    MISSING_KEY,
    ORACLE_RULES,
    ROUND_KEY,
    VERDICT_KEY,
    WORKER_RULES,
    CompactPolicy,
    EphemeralPolicy,
    Handoff,
    HandoffPolicy,
    HumanChannel,
    Lineage,
    PrunePolicy,
    PruningSessionStore,
    SqliteSessionStore,
    StepResult,
    TrimmingSessionStore,
    TrimPolicy,
    Workbench,
    build_options,
    clarify,
    clarify_step,
    coordinator,
    default_window,
    delegate_guard,
    goal_step,
    index_guard,
    is_ephemeral,
    isolate_guard,
    isolated,
    judge,
    merge_hooks,
    oracle,
    spill_guard,
    starter_flow,
    wants_isolation,
    whitelist_guard,
    with_goal,
    workbench_hooks,
    worker,
)
from engine._agents.roles import WORKER_TOOLS
from engine._agents.rules import shared_files_rules
from engine._docs.checks import CheckState, check_states
from engine._flow.failure import FlowFailure, flow_failure
from engine._flow.oracle import consult
from engine._flow.starter import WORK_STEP, StarterPaths, archive_run, starter_paths
from engine._flow.steps import VERIFY_PROMPT
from engine._human.transports import Answer, Question, ScriptedTransport, TerminalTransport, Transport
from engine._resume.stores import PruningPostgresSessionStore, TrimmingPostgresSessionStore
from engine._run.resilience import FatalCause, fatal_cause
from engine._stores.postgres import PostgresSessionStore
from engine._stores.sqlite_read import last_context_tokens

__all__ = [
    # Roles: the rules a worker is told about the files a person shared, and the tools a worker
    # is given unless told otherwise (the spec's internal constant: read it, do not change it)
    "shared_files_rules",
    "WORKER_TOOLS",
    # Steps: the judge's prompt, the starter flow's folder (its paths, its work step's name, the
    # archive /new makes), how a flow failed, read from its ctx, and the oracle's one question
    "VERIFY_PROMPT",
    "starter_paths",
    "StarterPaths",
    "WORK_STEP",
    "archive_run",
    "FlowFailure",
    "flow_failure",
    "consult",
    # Runtime internals a step sees: why a failure is fatal
    "FatalCause",
    "fatal_cause",
    # Documents: the goal's checks, each pending, passed, failing or unverifiable after a verdict
    "CheckState",
    "check_states",
    # The human channel's transports: the protocol, what it is asked and answers, two of them
    "Transport",
    "Question",
    "Answer",
    "TerminalTransport",
    "ScriptedTransport",
    # Session stores on PostgreSQL (the postgres extra), and the context a session last used
    "PostgresSessionStore",
    "TrimmingPostgresSessionStore",
    "PruningPostgresSessionStore",
    "last_context_tokens",
]

"""For workflow authors: the parts a workflow of your own is composed of, beyond ``engine``'s face.

``engine`` holds what a front end needs to start a job and show it (``Runtime``, ``Workflow``,
``Step``, ``AgentSpec``, ``StarterRun``, the events, the documents, the errors). Writing a
workflow of your own takes more: the roles and their rules, the policies of an agent, the
ready-made steps and their ``ctx`` keys, the guards and hooks that keep a coordinator from doing
the work itself, the workbench, the session stores and how they trim and prune a resumed
transcript. They are public here, grouped as the specification groups them, so neither a front
end's import list nor an author's needs a private module.
"""

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
from engine._agents.roles import clarify, coordinator, judge, oracle, worker
from engine._agents.rules import (
    CLARIFY_RULES,
    COORDINATOR_RULES,
    JUDGE_RULES,
    ORACLE_RULES,
    WORKER_RULES,
    shared_files_rules,
)
from engine._agents.spec import CompactPolicy, HandoffPolicy, build_options, default_window
from engine._agents.workbench import Workbench
from engine._docs.handoff_doc import Handoff
from engine._flow.oracle import consult
from engine._flow.starter import StarterPaths, archive_run, starter_flow
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
from engine._human.channel import HumanChannel
from engine._human.transports import ScriptedTransport, TerminalTransport
from engine._run.lineage import Lineage
from engine._run.manifest import StepResult
from engine._run.resilience import FatalCause, fatal_cause
from engine._resume.ephemeral import is_ephemeral
from engine._stores.postgres import PostgresSessionStore
from engine._resume.stores import PruningPostgresSessionStore, TrimmingPostgresSessionStore
from engine._resume.stores import PruningSessionStore
from engine._resume.policies import PrunePolicy
from engine._stores.sqlite import SqliteSessionStore
from engine._stores.sqlite_read import last_context_tokens
from engine._resume.stores import TrimmingSessionStore
from engine._resume.policies import EphemeralPolicy, TrimPolicy

__all__ = [
    # Roles and their rules: who the coordinator, its workers, the clarifier, the judge and the
    # oracle are (an ``AgentSpec`` each), and the rules each is told
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
    "shared_files_rules",
    # Agent definition: an ``AgentSpec`` as the SDK's options, and the policies a spec carries
    "build_options",
    "CompactPolicy",
    "HandoffPolicy",
    "default_window",
    # Steps: the ready-made ones, the starter flow they make, and the ``ctx`` keys they share
    "clarify_step",
    "goal_step",
    "with_goal",
    "starter_flow",
    "StarterPaths",
    "archive_run",
    "consult",
    "BRIEF_KEY",
    "GOAL_KEY",
    "VERDICT_KEY",
    "ROUND_KEY",
    "MISSING_KEY",
    "CLARIFY_RESUME",
    "VERIFY_PROMPT",
    # Runtime internals a step sees: one step's result, the lineage, why a failure is fatal
    "StepResult",
    "Lineage",
    "FatalCause",
    "fatal_cause",
    # Documents a handoff writes
    "Handoff",
    # The human channel a workflow asks through, and the transports of a terminal and a script
    "HumanChannel",
    "TerminalTransport",
    "ScriptedTransport",
    # Guards and hooks
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
    # Session stores: SQLite (one machine, the default) and PostgreSQL (several; the postgres
    # extra), with the layers that trim and prune a transcript when it is resumed
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
]

"""flower's agent engine: long coding-agent jobs on Claude Code that survive anything.

The public API, declared once and grouped as the specification groups it. Everything here is
importable as ``from engine import X``.
"""

from engine._agents.spec import AgentSpec, CompactPolicy, HandoffPolicy, build_options, default_window
from engine._human.channel import Answer, HumanChannel, Question
from engine._human.transports import ScriptedTransport, TerminalTransport, Transport
# Progress events
from engine._events import (
    AskEvent,
    Event,
    HandoffEvent,
    Interrupted,
    ResultReported,
    RetryScheduled,
    SessionStarted,
    StepStarted,
    TaskWarning,
    TurnEnded,
    VerdictGiven,
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
from engine._run.manifest import StepResult
from engine._run.resilience import Resilience
from engine._agents.roles import clarify, coordinator, judge, oracle, worker
from engine._agents.rules import (
    CLARIFY_RULES,
    COORDINATOR_RULES,
    JUDGE_RULES,
    ORACLE_RULES,
    WORKER_RULES,
)
from engine._run.runtime import Runtime
from engine._agents.workbench import Workbench
from engine._docs.brief import Brief
from engine._docs.goal import Goal
from engine._docs.handoff import Handoff
from engine._docs.verdict import Verdict
from engine._errors import FlowerError
from engine._stores.ephemeral import is_ephemeral
from engine._stores.prune import PrunePolicy, PruningSessionStore
from engine._stores.sqlite import SqliteSessionStore
from engine._stores.trim import EphemeralPolicy, TrimmingSessionStore, TrimPolicy
from engine._flow.base import Step, StepAbort, Workflow
from engine._stores.sqlite_read import last_context_tokens
from engine._flow.oracle import consult
from engine._flow.starter import (
    WORK_STEP,
    StarterPaths,
    archive_run,
    starter_flow,
    starter_paths,
    wake_state,
)
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
    "StepResult",
    "Resilience",
    "Lineage",
    # Progress events: what a front end is told, one class per kind (``Event.kind``)
    "Event",
    "StepStarted",
    "SessionStarted",
    "TurnEnded",
    "ResultReported",
    "RetryScheduled",
    "WaitingOnline",
    "HandoffEvent",
    "Interrupted",
    "TaskWarning",
    "VerdictGiven",
    "AskEvent",
    "WorkflowDone",
    # Workflow: steps in order, state in ctx, continuity across processes
    "Workflow",
    "Step",
    "StepAbort",
    "clarify_step",
    "goal_step",
    "with_goal",
    "starter_flow",
    "wake_state",
    "starter_paths",
    "StarterPaths",
    "archive_run",
    "WORK_STEP",
    "consult",
    "BRIEF_KEY",
    "GOAL_KEY",
    "VERDICT_KEY",
    "ROUND_KEY",
    "MISSING_KEY",
    "CLARIFY_RESUME",
    "VERIFY_PROMPT",
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
    # Session stores
    "SqliteSessionStore",
    "TrimmingSessionStore",
    "PruningSessionStore",
    "TrimPolicy",
    "EphemeralPolicy",
    "PrunePolicy",
    "is_ephemeral",
    "last_context_tokens",
    # Errors
    "FlowerError",
]

"""flower's agent engine: long coding-agent jobs on Claude Code that survive anything.

The public API, declared once and grouped as the specification groups it. Everything here is
importable as ``from engine import X``.
"""

from engine.core.agent import AgentSpec, CompactPolicy, HandoffPolicy, build_options, default_window
from engine.core.channel import Answer, HumanChannel, Question
from engine.core.transports import ScriptedTransport, TerminalTransport, Transport
from engine.core.events import Event
from engine.core.guard import (
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
from engine.core.lineage import Lineage
from engine.core.manifest import StepResult
from engine.core.resilience import Resilience
from engine.core.roles import clarify, coordinator, judge, oracle, worker
from engine.core.rules import (
    CLARIFY_RULES,
    COORDINATOR_RULES,
    JUDGE_RULES,
    ORACLE_RULES,
    WORKER_RULES,
)
from engine.core.runtime import Runtime
from engine.core.workbench import Workbench
from engine.docs.brief import Brief
from engine.docs.goal import Goal
from engine.docs.handoff import Handoff
from engine.docs.verdict import Verdict
from engine.errors import FlowerError
from engine.stores.ephemeral import is_ephemeral
from engine.stores.prune import PrunePolicy, PruningSessionStore
from engine.stores.sqlite import SqliteSessionStore
from engine.stores.trim import EphemeralPolicy, TrimmingSessionStore, TrimPolicy
from engine.workflow.base import Step, StepAbort, Workflow
from engine.stores.sqlite_read import last_context_tokens
from engine.workflow.oracle import consult
from engine.workflow.starter import (
    WORK_STEP,
    StarterPaths,
    archive_run,
    starter_flow,
    starter_paths,
    wake_state,
)
from engine.workflow.steps import (
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
    "Event",
    "Lineage",
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

"""flower's agent engine: long coding-agent jobs on Claude Code that survive anything.

The top level is the spec's API, as the spec writes it (``from engine import Runtime, Workflow,
Step, coordinator, worker``): every name of its "API Python" page, grouped as the page groups
them, and the names its continuity pages describe (the store that prunes, resilience and its
probes, the human channel, the events, the lineage). Beyond them it holds at most 15 names, only
what a front end (the Slack bot, the ``flower`` command, a script of your own) needs to start a
run, give it what a person shares and catch what it raises. ``tests/engine/test_public_api.py``
reads the list off the spec and holds both. Four named submodules hold the rest, public all the
same, each name in one place:

- ``engine.events``: the typed progress events (one class per ``Event.kind``) a front end shows;
- ``engine.lang``: the language the models are told and the texts are written in (en, zh);
- ``engine.authoring``: what a workflow author composes beyond the spec (transports and their
  questions, the starter flow's paths and failures, the goal's checks, the PostgreSQL stores);
- ``engine.host``: what a host reuses to keep its own state (SQLite and PostgreSQL helpers,
  atomic writes, the workspace door ``beneath``, a run's manifest and spend, its process setup).

Every error the engine raises on purpose is here; the tree is drawn in ``engine._errors``.
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
from engine._agents.rules import CLARIFY_RULES, COORDINATOR_RULES, JUDGE_RULES, ORACLE_RULES, WORKER_RULES
from engine._agents.spec import AgentSpec, CompactPolicy, HandoffPolicy, build_options, default_window
from engine._agents.workbench import Workbench
from engine._beneath import UnsafePath
from engine._docs.brief import Brief
from engine._docs.goal import Goal
from engine._docs.handoff_doc import Handoff
from engine._docs.verdict import Verdict
from engine._errors import FlowerError
from engine._events import Event
from engine._file_work import FileWorkOverran
from engine._flow.base import Step, StepAbort, Workflow
from engine._flow.run_result import RunResult, WakeState
from engine._flow.starter import starter_flow, wake_state
from engine._flow.starter_run import StarterRun
from engine._flow.steps import (
    BRIEF_KEY,
    CLARIFY_RESUME,
    GOAL_KEY,
    MISSING_KEY,
    ROUND_KEY,
    VERDICT_KEY,
    clarify_step,
    goal_step,
    with_goal,
)
from engine._human.channel import ChannelError, HumanChannel
from engine._human.transports import TransportError
from engine._media.fitting import load_image
from engine._media.image import Image, ImageRefused
from engine._resume.ephemeral import is_ephemeral
from engine._resume.policies import EphemeralPolicy, PrunePolicy, TrimPolicy
from engine._resume.shaped import trim_report
from engine._resume.stores import PruningSessionStore, TrimmingSessionStore
from engine._run.credentials import CredentialsError
from engine._run.lineage import Lineage
from engine._run.manifest import StepResult
from engine._run.resilience import Resilience, classify, endpoint, reachable
from engine._run.run_lock import WorkspaceBusyError
from engine._run.runtime import Runtime
from engine._run.sandbox import Sandbox
from engine._stores.sqlite import SqliteSessionStore
from engine._stores.sqlite_db import StoreError

__version__ = "0.1.0"

__all__ = [
    # --- The spec's names, grouped as its API page groups them ---
    # Run an agent: one verb, run a step (retries, interruptions and handoff inside), and its books
    "Runtime",
    "StepResult",
    # Chain steps: the workflow, the ready-made steps and the starter flow, the keys they share
    "Step",
    "Workflow",
    "StepAbort",
    "clarify_step",
    "goal_step",
    "with_goal",
    "starter_flow",
    "wake_state",
    "BRIEF_KEY",
    "MISSING_KEY",
    "CLARIFY_RESUME",
    "GOAL_KEY",
    "VERDICT_KEY",
    "ROUND_KEY",
    # Build a role: the five factories and the rules each is told (read, join, change them)
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
    # Hand-write an agent definition, and the policies it carries
    "AgentSpec",
    "build_options",
    "CompactPolicy",
    "HandoffPolicy",
    "default_window",
    # Structured documents: the brief, the handoff, the goal, the judge's verdict
    "Brief",
    "Handoff",
    "Goal",
    "Verdict",
    # Intercept tools, trim results, isolate: five guards, a builder, a combiner, two markers
    "whitelist_guard",
    "delegate_guard",
    "spill_guard",
    "index_guard",
    "isolate_guard",
    "isolated",
    "wants_isolation",
    "workbench_hooks",
    "merge_hooks",
    # The workbench: scripts, artifacts, notes and their index
    "Workbench",
    # Session stores: SQLite, and the layers that trim and prune what a resume shows the model
    "SqliteSessionStore",
    "TrimmingSessionStore",
    "PruningSessionStore",
    "TrimPolicy",
    "EphemeralPolicy",
    "PrunePolicy",
    "is_ephemeral",
    "trim_report",
    # Resilience: wait out a dropped network (DNS + TCP probes), stop on what waiting cannot fix
    "Resilience",
    "classify",
    "endpoint",
    "reachable",
    # Events and the human: what a run reports (its kinds in engine.events), who it asks
    "Event",
    "HumanChannel",
    # Pick up last time across processes
    "Lineage",
    # --- Beyond the spec: what the front ends need (at most 15, a test holds it) ---
    # The starter flow as both front ends run it: the state it wakes in, how it ended
    "StarterRun",
    "RunResult",
    "WakeState",
    # What a run is given: its sandbox, the images a person shares
    "Sandbox",
    "Image",
    "load_image",
    # Errors: every one the engine raises on purpose (StepAbort above), drawn in engine/_errors.py
    "FlowerError",
    "StoreError",
    "CredentialsError",
    "WorkspaceBusyError",
    "ChannelError",
    "TransportError",
    "UnsafePath",
    "ImageRefused",
    "FileWorkOverran",
]

"""flower's agent engine: long coding-agent jobs on Claude Code that survive anything.

The face a front end uses (the Slack bot, the ``flower`` command, a script of your own): run a
step or a workflow, run the starter flow in a folder and wake it, pass on the images a person
shares, read the events it reports and the documents it writes, choose the language, catch the
errors. Declared once, grouped, and kept small (at most 60 names, a test checks) so a front end's
imports say what it depends on. Two named submodules hold the rest, public all the same:

- ``engine.authoring``: what a workflow author composes (roles and their rules, policies, the
  ready-made steps, guards and hooks, the workbench, the session stores);
- ``engine.host``: what a host reuses to keep its own state (SQLite and PostgreSQL helpers,
  atomic writes, the workspace door ``beneath``, the run's manifest, its process setup).

Every error the engine raises on purpose is here; the tree is drawn in ``engine._errors``.
"""

from engine._agents.spec import AgentSpec
from engine._beneath import UnsafePath
from engine._docs.brief import Brief
from engine._docs.checks import CheckState, check_states
from engine._docs.goal import Goal
from engine._docs.verdict import Verdict
from engine._errors import FlowerError
from engine._file_work import FileWorkOverran
# Progress events
from engine._events import (
    AskEvent,
    Label,
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
from engine._flow.base import Step, StepAbort, Workflow
from engine._flow.failure import FlowFailure, flow_failure
from engine._flow.starter import WORK_STEP, starter_paths, wake_state
from engine._flow.starter_run import StarterRun
from engine._flow.run_result import RunResult, WakeState
from engine._run.totals import Spend, Totals
from engine._human.channel import Answer, ChannelError, Question
from engine._human.transports import Transport, TransportError
from engine._media.fitting import load_image
from engine._media.image import Image, ImageRefused
from engine._lang import ENV as LANGUAGE_ENV, LANGUAGES, check as check_language, from_locale as locale_language, speaking, starter_step, step_names
from engine._run.credentials import CredentialsError
from engine._run.resilience import Resilience
from engine._run.run_lock import WorkspaceBusyError
from engine._run.runtime import Runtime
from engine._run.sandbox import Sandbox
from engine._stores.sqlite_db import StoreError

__version__ = "0.1.0"

__all__ = [
    # Runtime: runs one step with retries, interruptions and handoff, in the sandbox it is given
    "Runtime",
    "Sandbox",
    "Resilience",
    "AgentSpec",
    # Images people share, shown to the model with a prompt or an interruption
    "Image",
    "load_image",
    # Workflow: steps in order, state in ctx, continuity across processes; the starter flow as
    # both front ends run it and the folder it wakes in (its ctx keys are engine.authoring's)
    "Workflow",
    "Step",
    "StarterRun",
    "RunResult",
    "WakeState",
    "Totals",
    "Spend",
    "wake_state",
    "starter_paths",
    "WORK_STEP",
    "FlowFailure",
    "flow_failure",
    # Progress events: what a front end is told, one class per kind (``Event.kind``)
    "Event",
    "Label",
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
    # Language: what the models are told and what is written (en, zh), chosen once per run
    "LANGUAGES",
    "LANGUAGE_ENV",
    "check_language",
    "locale_language",
    "speaking",
    "step_names",
    "starter_step",
    # Documents: the brief, the goal and its checks, the judge's verdict
    "Brief",
    "Goal",
    "Verdict",
    "CheckState",
    "check_states",
    # The human channel, as a front end answers it: a question, its answer, the transport
    "Question",
    "Answer",
    "Transport",
    # Errors: every one the engine raises on purpose, drawn as a tree in engine/_errors.py
    "FlowerError",
    "StepAbort",
    "StoreError",
    "CredentialsError",
    "WorkspaceBusyError",
    "ChannelError",
    "TransportError",
    "UnsafePath",
    "FileWorkOverran",
    "ImageRefused",
]

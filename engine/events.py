"""What a run reports, one class per kind: the typed progress events a front end shows.

Every event is an ``engine.Event`` (the spec's name, at the top level); ``Event.kind`` names its
kind for code that switches on it, and each class below carries that kind's fields. ``Label``
says whose session an event is about (a step or the judge of one, its round); the phases are the
values of ``HandoffEvent.phase`` and ``AskEvent.phase``. The contracts are in ``engine._events``.
"""

from engine._events import (
    AskEvent,
    AskPhase,
    HandoffEvent,
    HandoffPhase,
    Interrupted,
    Label,
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

__all__ = [
    # Whose session: a step's or its judge's, its round and retry
    "Label",
    # One class per kind, in the order a run reports them
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
    # The phases of a handoff and of a question
    "HandoffPhase",
    "AskPhase",
]

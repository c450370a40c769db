"""Progress events: how the engine tells a front end (terminal, Slack) what is happening.

One frozen dataclass per kind; the fields of each class are everything that kind carries.
``Event.kind`` names the kind ("step", "session", ...) for code that switches on it, and
``Event.payload`` gives the kind's own fields as a dict (for a log line or a JSON dump; a front
end reads the attributes). Every event has ``step`` (whose event it is: a step's name, a
manifest label such as ``干活#round2`` or ``干活·判定#1``, the workflow's name for
``WorkflowDone``, the asker for ``AskEvent``) and ``at`` (when, ``time.time()``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Literal

# Defined here, the lowest module, and re-used above: what a question's answer came to, and what
# kind of failure ended an attempt.
AnswerState = Literal["answered", "timeout", "nobody"]
FailureKind = Literal["transient", "fatal", "unknown"]

log = logging.getLogger(__name__)

EventKind = Literal[
    "step",  # StepStarted
    "session",  # SessionStarted
    "turn",  # TurnEnded
    "result",  # ResultReported
    "retry",  # RetryScheduled
    "offline",  # WaitingOnline
    "storm",  # WaitingForApi (phase waiting / back)
    "handoff",  # HandoffEvent (phase near / writing / done)
    "interrupt",  # Interrupted
    "task",  # TaskWarning
    "verdict",  # VerdictGiven
    "ask",  # AskEvent (phase asked / answered / cancelled)
    "done",  # WorkflowDone
]
HandoffPhase = Literal["near", "writing", "done"]
AskPhase = Literal["asked", "answered", "cancelled"]
StormPhase = Literal["waiting", "back"]
VerdictEventState = Literal["achieved", "not_yet", "unreachable", "unclear"]

Role = Literal["step", "judge"]

_COMMON = ("step", "at", "name", "role")  # ``round`` is in a payload when it is known


@dataclass(frozen=True)
class Label:
    """Whose session a step's run is: made where the flow runs it, read as fields by front ends.

    ``name`` is the step's name (a judge's: its own, "work · judge"), ``role`` whether it is the
    step itself or the judge of one, ``round`` the step's round (its judge's: the round judged;
    None for a step without rounds) and ``retry`` a step's retry. ``str()`` is the manifest label
    the spec names (``干活``, ``干活#round2``, ``干活#retry1``, ``干活·判定#1``): nobody parses it.
    """

    name: str
    role: Role = "step"
    round: int | None = None
    retry: int = 0

    def __str__(self) -> str:
        if self.role == "judge":
            return f"{self.name}#{self.round}"
        if self.round and self.round > 1:
            return f"{self.name}#round{self.round}"
        return f"{self.name}#retry{self.retry}" if self.retry else self.name


@dataclass(frozen=True)
class Event:
    """One progress event; a subclass per kind (``kind`` says which) carries the kind's fields.

    ``name``, ``role`` and ``round`` say whose session it is (``Label``), so a front end never
    parses ``step``: ``name`` is "" where the event is not a session's (the workflow's end).
    """

    kind: ClassVar[EventKind]
    step: str
    at: float = field(default_factory=time.time, kw_only=True)
    name: str = field(default="", kw_only=True)
    role: Role = field(default="step", kw_only=True)
    round: int | None = field(default=None, kw_only=True)

    def labelled(self, label: Label) -> "Event":
        """This event as ``label``'s session says it (the runtime stamps every event of a step)."""
        return replace(self, name=label.name, role=label.role, round=label.round)

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "kind" not in cls.__dict__:
            raise TypeError(f"{cls.__name__} must set kind")

    def __post_init__(self) -> None:
        if type(self) is Event:
            raise TypeError("Event is the base class; build one of its kinds (StepStarted, ...)")

    @property
    def payload(self) -> dict[str, Any]:
        """This kind's own fields (all but ``step`` and ``at``) as a dict; read-only."""
        own = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _COMMON}
        return {k: v for k, v in own.items() if k != "round" or v is not None}


@dataclass(frozen=True)
class StepStarted(Event):
    """A workflow step starts (``index`` 0-based of ``total``); ``resumed`` when it continues a
    session, ``woke`` which wake of the run directory this is (1 on the first run)."""

    kind: ClassVar[EventKind] = "step"
    index: int
    total: int
    resumed: bool = False
    woke: int = 1


@dataclass(frozen=True)
class SessionStarted(Event):
    """The CLI of a step's attempt is up and named its session."""

    kind: ClassVar[EventKind] = "session"
    session_id: str


@dataclass(frozen=True)
class TurnEnded(Event):
    """The main thread finished an assistant message; ``context`` is the context size in tokens."""

    kind: ClassVar[EventKind] = "turn"
    context: int


@dataclass(frozen=True)
class ResultReported(Event):
    """The CLI reported a result; ``cost_usd`` is cumulative for the step (label), ``tokens`` this
    result's own (input, output, cache), ``model`` the model the session's last message came from."""

    kind: ClassVar[EventKind] = "result"
    cost_usd: float
    num_turns: int = 0
    tokens: int = 0
    model: str = ""


@dataclass(frozen=True)
class RetryScheduled(Event):
    """Attempt ``attempt`` of ``max_attempts`` failed retryably; the next one in ``delay_s``.
    ``failure`` is how the error was classified, ``error`` its text (clipped)."""

    kind: ClassVar[EventKind] = "retry"
    attempt: int
    max_attempts: int
    delay_s: float
    failure: FailureKind = "unknown"
    error: str = ""


@dataclass(frozen=True)
class WaitingOnline(Event):
    """Waiting for the model endpoint ``host:port`` to come back, ``waited_s`` so far."""

    kind: ClassVar[EventKind] = "offline"
    host: str
    port: int
    waited_s: float


@dataclass(frozen=True)
class WaitingForApi(Event):
    """The model's API failed transiently past the retry budget (``failures`` in a row, the last
    ``error``): ``waiting`` for it, trying every ``every_s`` seconds; ``back`` once it answers."""

    kind: ClassVar[EventKind] = "storm"
    phase: StormPhase
    failures: int = 0
    every_s: float = 0.0
    error: str = ""


@dataclass(frozen=True)
class HandoffEvent(Event):
    """The context window fills up: ``near`` (``used`` of ``window``, the handoff comes at
    ``due_at`` tokens), ``writing`` the handoff (``used``, ``window``), ``done`` (``degraded``
    when written from disk, not by the session; ``path`` of the document or None; ``sections``
    it filled; ``retired`` the session it replaces)."""

    kind: ClassVar[EventKind] = "handoff"
    phase: HandoffPhase
    used: int | None = None
    window: int | None = None
    due_at: int | None = None
    degraded: bool = False
    path: str | None = None
    sections: tuple[str, ...] = ()
    retired: str | None = None


@dataclass(frozen=True)
class Interrupted(Event):
    """A person's words interrupted the running step; it goes on with ``said`` and the images
    they shared with them (``images``: their names, the files' paths in the workspace)."""

    kind: ClassVar[EventKind] = "interrupt"
    said: str
    images: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskWarning(Event):
    """A warning about the task itself: ``unverifiable`` checks of the goal's ``total``
    (listed in ``path``) cannot be verified in this environment."""

    kind: ClassVar[EventKind] = "task"
    unverifiable: tuple[str, ...] = ()
    total: int = 0
    path: str = ""


@dataclass(frozen=True)
class VerdictGiven(Event):
    """The judge's verdict for ``round`` (1-based): ``state`` with its ``reason`` and the
    ``failed`` checks; ``unclear`` when no verdict could be read (``error`` says why, if the
    judge's run failed)."""

    kind: ClassVar[EventKind] = "verdict"
    state: VerdictEventState
    reason: str = ""
    failed: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class AskEvent(Event):
    """A question to a person: ``asked``, then ``answered`` (or ``cancelled`` when the wait was
    cancelled). ``n`` is the question's number in the log, ``key`` its ``question_key``; ``state``,
    ``answer`` and ``by`` are empty until answered."""

    kind: ClassVar[EventKind] = "ask"
    phase: AskPhase
    question: str
    options: tuple[str, ...] = ()
    state: AnswerState | Literal[""] = ""
    answer: str = ""
    by: str = ""
    key: str = ""
    n: int = 0


@dataclass(frozen=True)
class WorkflowDone(Event):
    """The workflow ended (``step`` is its name): ``ok``; else the step that ``failed`` and, when a
    gate stopped it, why it was ``aborted``."""

    kind: ClassVar[EventKind] = "done"
    ok: bool
    failed: str | None = None
    aborted: str | None = None


OnEvent = Callable[[Event], None]


def emit(on_event: OnEvent | None, event: Event) -> None:
    """Deliver ``event``; a failing front end is logged and never stops the run."""
    if on_event is None:
        return
    try:
        on_event(event)
    except Exception:  # a broken status line must not kill an hours-long step
        log.exception("on_event callback failed for %s event", event.kind)


def stamped(on_event: OnEvent | None, label: Label) -> OnEvent | None:
    """``on_event``, given each event as ``label``'s session says it (name, role, round)."""
    if on_event is None:
        return None

    def relay(event: Event) -> None:
        on_event(event.labelled(label))
    return relay

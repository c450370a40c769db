"""How a thread's run ended: one typed outcome per end, and the thread state each one leaves.

Every run ends in exactly one of these; ``bot.runs.conclusion`` is the one place that records
the state in ``bot.db`` and tells the thread. A shutdown is the one end that
records nothing: the thread stays active and the next start resumes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.thread import ThreadState
from bot.runs.spend import Reached
from engine import RunResult
from engine.authoring import Question


@dataclass(frozen=True)
class Finished:
    """The flow returned: how it ended (``result.ok``: the goal achieved)."""

    result: RunResult

    @property
    def ok(self) -> bool:
        return self.result.ok


@dataclass(frozen=True)
class Failed:
    """The run broke before or while the flow ran; ``reason`` is said in the thread."""

    reason: str
    repo: bool = False  # the thread's repository could not be prepared (nothing ran)


@dataclass(frozen=True)
class Stopped:
    """Stop was pressed: the task was cancelled for good (a later word continues the session)."""


@dataclass(frozen=True)
class Parked:
    """A question with no default went unanswered past its deadline; an answer resumes the run."""

    question: Question


@dataclass(frozen=True)
class Limited:
    """A spend limit stopped the run (``reached``: which, and the spend): paused holding no
    process; once it is raised, a reply continues the same request."""

    reached: Reached


@dataclass(frozen=True)
class Nothing:
    """A resumed thread had nothing to resume (no confirmed requirement, no saved request)."""


@dataclass(frozen=True)
class ShutDown:
    """The bot is closing or was killed: the thread stays active for the next start."""


Outcome = Finished | Failed | Stopped | Parked | Limited | Nothing | ShutDown


def state_after(outcome: Outcome) -> ThreadState | None:
    """The thread's state once ``outcome`` is recorded; None: leave it as it is (a shutdown)."""
    if isinstance(outcome, Finished):
        return "done" if outcome.ok else "failed"
    if isinstance(outcome, (Failed, Nothing)):
        return "failed"
    if isinstance(outcome, Stopped):
        return "stopped"
    if isinstance(outcome, Parked):
        return "parked"
    if isinstance(outcome, Limited):
        return "limited"
    return None

"""Engine events -> what a thread shows: notices posted once, and one status line edited in place.

Pure: ``RunStatus.apply`` folds an ``Event`` into the status and returns the notice to post (or
None); ``RunStatus.payload`` is the status message. Texts and blocks come from ``bot.render.messages``.
Steps are known by the engine's names for them in any language (a workspace made in one still
reads in the other) and shown in a person's words (``doing_words``: "Planning", "Working").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from bot.render.messages import Payload, StatusState, doing_words, event_notice, status_message, verdict_message
from bot.runs.shared_files import own_words
from bot.runs.spend_book import Reached
from engine import Event
from engine.authoring import WORK_STEP
from engine.events import (
    AskEvent,
    Interrupted,
    ResultReported,
    SessionStarted,
    StepStarted,
    TurnEnded,
    VerdictGiven,
    WaitingForApi,
)
from engine.lang import step_names

WORK_STEPS = frozenset(step_names(WORK_STEP))  # the work step in every language


@dataclass
class RunStatus:
    """What the status message says about a thread's run: state, what it does, round, cost, elapsed.

    ``started`` is when the request began (its mention, follow-up or ``/new``) and
    ``cost_before`` / ``rounds_before`` what earlier runs of the request spent and judged
    (``StarterRun.totals``), so the line goes on counting across restarts and a parked run taken
    up again, and starts at $0.00 and round 1 for a new request.
    """

    started: float = field(default_factory=time.time)
    step: str = ""  # the step at work, as the engine names it
    judging: bool = False  # the judge is at the work's round
    round: int | None = None  # the engine's round of the work step in this run; None outside work
    rounds_before: int = 0
    cost_before: float = 0.0
    state: StatusState = "running"
    unfenced: bool = False  # the sandbox is off on this bot: the line says so for as long as it shows
    heard: str = ""  # the last words a person said that reached the running session
    heard_in: list[tuple[str, int | None]] = field(default_factory=list)  # each with the round it reached
    near: Reached | None = None  # a spend limit 80 % spent: shown under the line
    storm: bool = False  # waiting out a storm of API errors (shown instead of "running")
    reason: str = ""  # why the run failed, once it has
    final_cost: float | None = None  # the manifest's total once the run is over (``finish``)
    ended: float | None = None
    _work: str = ""  # the work step's name, once it started
    _asked: dict[str, str] = field(default_factory=dict)  # open questions' keys -> link ("" until known)
    _label_cost: dict[str, float] = field(default_factory=dict)

    @property
    def cost(self) -> float:
        """Earlier runs' cost plus every session of this one (cumulative per manifest label)."""
        if self.final_cost is not None:
            return self.final_cost
        return self.cost_before + sum(self._label_cost.values())

    @property
    def shown_round(self) -> int | None:
        """The round the thread is in, counted across follow-ups; None outside the work step."""
        return self.rounds_before + self.round if self.round else None

    def apply(self, event: Event) -> Payload | None:
        """Fold ``event`` in; return a notice to post in the thread, or None.

        The round comes from the sessions' ``round`` (the work's round, or the round a judge
        judges), and from the verdicts: "not yet" (or unclear) in round N means round
        N + 1 is under way. A verdict is shown by the checklist's edit (``bot.runs.plan_feed``);
        only "unreachable", where a person must choose what comes next, is posted, its round
        numbered across the thread's runs.
        """
        match event:
            case StepStarted():
                again = event.step == self._work and self.round
                self.step, self.judging = event.step, False
                if event.step in WORK_STEPS:
                    self._work, self.round = event.step, self.round if again else 1
                else:
                    self.round = None
                return None
            case SessionStarted() | TurnEnded():
                self._at(event)
                return None
            case ResultReported():
                self._at(event)
                self._label_cost[event.step] = event.cost_usd  # cumulative per label
                return None
            case VerdictGiven():
                self.round = event.round + 1 if event.state in ("not_yet", "unclear") else event.round
                self.step, self.judging = self._work or self.step, False
                if event.state != "unreachable":  # the checklist is edited instead: a round is no post
                    return None
                return verdict_message(event.state, event.reason, event.failed, self.rounds_before + event.round)
            case AskEvent():
                if event.phase == "asked":
                    self._asked[event.key] = self._asked.get(event.key, "")
                else:
                    self._asked.pop(event.key, None)
                return None
            case Interrupted():
                said = own_words(event.said)  # the person's words, not the file list the bot added
                self.heard = said  # said on the status line: the words reached the agent
                self.heard_in.append((said, self.shown_round))  # and in the final answer, with what followed
                return None
            case WaitingForApi():
                self.storm = event.phase == "waiting"
        return event_notice(event)

    def _at(self, event: Event) -> None:
        """Whose session the event is says which part of the work is at it: a round, or the judge of one."""
        if not self._work:
            return
        if event.role == "judge":  # the starter flow judges its work step only
            self.judging, self.round = True, event.round
        elif event.name == self._work:
            self.step, self.judging = event.name, False
            if event.round and event.round > 1:
                self.round = event.round

    def question_link(self, key: str, link: str) -> None:
        """The permalink of open question ``key`` (the status line points at it while it waits)."""
        if key in self._asked and link:
            self._asked[key] = link

    def finish(self, state: StatusState, *, cost: float, at: float, reason: str = "") -> None:
        """The run is over: its final state, the thread's total cost, when it ended, why it failed."""
        self.state, self.final_cost, self.ended, self.reason = state, cost, at, reason
        self._asked.clear()
        self.storm = False

    @property
    def shown_state(self) -> StatusState:
        """The state in words: a running run waits for an answer or for the API when it does."""
        if self.state != "running":
            return self.state
        if self.storm:
            return "waiting_api"
        return "waiting" if self._asked else "running"

    def payload(self, thread: str, now: float | None = None) -> Payload:
        """The status message; ``thread`` is the value its Stop / Start over buttons carry."""
        links = [link for link in self._asked.values() if link]
        end = self.ended or now or time.time()
        doing = doing_words(self.step, judging=self.judging, asking=bool(self._asked))
        return status_message(doing=doing, round=self.shown_round, cost_usd=self.cost, elapsed_s=end - self.started, state=self.shown_state,
                              thread=thread, question_link=links[-1] if links else "", reason=self.reason,
                              unfenced=self.unfenced, heard=self.heard if self.state == "running" else "",
                              near=(self.near.scope, self.near.limit, self.near.spent)
                              if self.near is not None and self.state == "running" else None)

"""The live progress line of the ``flower`` command while a step runs.

A step can run for many minutes in silence; the line says it is alive: who is at work (the
manifest label of the latest event: the step, its round, its judge), the step's elapsed time,
the main thread's context size and what the run has spent so far. On a terminal it is redrawn
in place about once a second (``engine._cli.screen``); on a log (stderr not a terminal) it is a
plain line when who is at work changes, else once every ``every_plain`` seconds, so a log is
never flooded. It is never drawn while a line is being read (a question or the Ctrl-C prompt is
open and the person may be typing) nor while a question waits for its answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from engine import Event
from engine._cli.cli_texts import say
from engine._cli.screen import Screen
from engine.events import (
    AskEvent,
    ResultReported,
    RetryScheduled,
    StepStarted,
    TurnEnded,
    WaitingForApi,
    WaitingOnline,
    WorkflowDone,
)
from engine.host import human_tokens

TICK_S = 1.0  # how often the line may change on a terminal: enough to see it move, no flicker
EVERY_PLAIN_S = 30.0  # on a log, the longest silence between two lines of an unchanged step


def clock_text(seconds: float) -> str:
    """``0:07``, ``12:03``, ``1:02:03``: the same in every language."""
    s = int(max(seconds, 0))
    h, m, s = s // 3600, s // 60 % 60, s % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """An ``on_event`` callback that keeps the progress state, and ``run()`` that draws it.

    ``reading`` says whether a line is being read from the person right now; ``clock`` is
    monotonic seconds (a test may pass its own).
    """

    def __init__(self, screen: Screen, reading: Callable[[], bool], *, tick_s: float = TICK_S,
                 every_plain: float = EVERY_PLAIN_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.screen, self.reading, self.clock = screen, reading, clock
        self.tick_s, self.every_plain = tick_s, every_plain
        self.step: str | None = None  # the step running, None between runs
        self.started = 0.0
        self.who = ""
        self.context = 0
        self.asking = False  # a question waits for its answer
        self.api_down = False  # the model's API is failing; the runtime waits for it
        self._costs: dict[str, float] = {}  # label -> cumulative cost in this run
        self._spent_before = 0.0  # earlier runs of this process (a wake with held words)
        self._plain_who: str | None = None
        self._plain_at = 0.0

    @property
    def cost(self) -> float:
        """What every session of this process's runs has spent so far, in USD."""
        return self._spent_before + sum(self._costs.values())

    def __call__(self, event: Event) -> None:
        match event:
            case StepStarted():
                self.step, self.who, self.started = event.step, event.step, self.clock()
                self.context, self.asking, self.api_down = 0, False, False
                self._plain_who, self._plain_at = event.step, self.clock()  # the banner said it
                return
            case WorkflowDone():
                self._spent_before, self._costs = self.cost, {}
                self.step = None
                self.screen.clear()
                return
            case AskEvent():
                self.asking = event.phase == "asked"
                if self.asking:
                    self.screen.clear()
                return
            case RetryScheduled() | WaitingOnline():
                self.api_down = True
            case WaitingForApi():
                self.api_down = event.phase == "waiting"
            case ResultReported():
                self._costs[event.step] = event.cost_usd
        if event.kind in ("session", "turn", "result"):
            if event.step != self.who:  # another session at work: its own context, unknown yet
                self.who, self.context = event.step, 0
            if isinstance(event, TurnEnded):
                self.context, self.api_down = event.context, False  # a turn ended: the API answers

    def line(self) -> str:
        """The progress line as it reads now."""
        parts = [say("progress", who=self.who, elapsed=clock_text(self.clock() - self.started))]
        if self.api_down:
            parts.append(say("progress_api"))
        if self.context:
            parts.append(say("progress_context", size=human_tokens(self.context)))
        parts.append(say("progress_cost", cost=f"{self.cost:.2f}"))
        return " · ".join(parts)

    def tick(self) -> None:
        """Draw the line now if it may be drawn (see the module docstring)."""
        if self.step is None or self.asking or self.reading():
            self.screen.clear()
            return
        if self.screen.tty:
            self.screen.status(self.line())
            return
        now = self.clock()
        if self.who != self._plain_who or now - self._plain_at >= self.every_plain:
            self._plain_who, self._plain_at = self.who, now
            print(self.line(), file=self.screen, flush=True)

    async def run(self) -> None:
        """Tick until cancelled; the line is cleared when it stops."""
        try:
            while True:
                await asyncio.sleep(self.tick_s)
                self.tick()
        finally:
            self.screen.clear()

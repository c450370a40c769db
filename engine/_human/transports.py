"""How a question reaches a person: the Question/Answer values, the Transport seam, two transports.

``TerminalTransport`` asks on the terminal (the ``flower`` command); ``ScriptedTransport``
answers from a script for tests and programs. The Slack thread is the bot's transport. A
transport only carries and waits: ``HumanChannel`` enforces timeouts, limits and the log.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import sys
import unicodedata
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TextIO

from engine._errors import FlowerError
from engine._events import AnswerState
from engine._human.lines import Lines, lines_of

KEY_LENGTH = 16  # hex digits of sha256: plenty to tell the questions of one thread apart


def normalize_text(text: str) -> str:
    """``text`` with Unicode compatibility forms folded (NFKC) and whitespace runs collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def question_key(text: str, options: Sequence[str] = ()) -> str:
    """The stable id of a question: sha256 of its normalized text and options, truncated.

    Nothing time-based goes in, so a restarted process asking the same question gets the same
    key (the Slack bot uses it to give back an answer already given instead of asking twice).
    Whitespace runs and Unicode compatibility forms do not change the key; case does.
    """
    payload = json.dumps([normalize_text(text), [normalize_text(o) for o in options]], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:KEY_LENGTH]


@dataclass(frozen=True)
class Question:
    """A question for a person; ``key`` is filled from ``question_key`` when left empty.

    ``timeout_s`` is what the channel will wait (None: forever), for a transport that wants to
    show it; ``asked_by`` is the role or step name when known.
    """

    text: str
    options: tuple[str, ...] = ()
    default: str | None = None
    timeout_s: float | None = None
    key: str = ""
    asked_by: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(self.options))
        if not self.key:
            object.__setattr__(self, "key", question_key(self.text, self.options))


@dataclass(frozen=True)
class Answer:
    """What came back: ``answered`` (``text`` from ``by``), ``timeout`` or ``nobody``.

    On ``timeout`` of a question with a default, ``text`` is that default.
    """

    state: AnswerState
    text: str = ""
    by: str = ""

    @property
    def answered(self) -> bool:
        """True when a person gave this answer."""
        return self.state == "answered"


class Transport(Protocol):
    """Carries a question to a person and waits for the answer (the channel enforces timeouts).

    ``ask`` may be cancelled at any await (a timeout, an interrupted step); it must tidy up.
    """

    async def ask(self, q: Question) -> Answer: ...


class TransportError(FlowerError):
    """A transport was used wrongly (e.g. a test waited for a question that never came)."""


def pick(line: str, q: Question) -> str | None:
    """The answer a typed ``line`` gives to ``q``: an option by number, free text, or the default.

    A number in range picks that option (counting from 1); any other text is a free answer; an
    empty line gives the default, or None (ask again) when there is none.
    """
    s = line.strip()
    if not s:
        return q.default
    if s.isdecimal() and 1 <= int(s) <= len(q.options):
        return q.options[int(s) - 1]
    return s


class TerminalTransport:
    """Asks on the terminal: prints the question to ``output`` and reads a line from ``input``.

    Defaults: ``sys.stderr`` and ``sys.stdin``. Lines come from the stream's one shared reader
    (``engine._human.lines``): the ``flower`` command's Ctrl-C prompt reads through the same one,
    so what the person types goes to one place. A read left pending by a timed-out question is
    reused by the next one. Nothing typed before a question is shown answers it: a line that
    reader got while no question was open (a late answer), and on a terminal whatever waits in
    its input queue, are dropped, and the question says so. A number picks an option, other text
    is a free answer, an empty line gives the default (or asks again). End of input answers
    ``nobody``, for good.
    """

    def __init__(
        self, *, input: TextIO | None = None, output: TextIO | None = None, by: str = "terminal"
    ) -> None:
        self.input = input
        self.output = output
        self.by = by
        self._open: Question | None = None

    @property
    def lines(self) -> Lines:
        """The shared reader of this transport's input."""
        return lines_of(self.input or sys.stdin)

    @property
    def _pending(self) -> asyncio.Future[str] | None:
        return self.lines.read  # the read in flight (or the last one), for tests to wait on

    def _write(self, text: str) -> None:
        out = self.output or sys.stderr
        out.write(text)
        out.flush()

    def _show(self, q: Question, *, again: bool = False) -> None:
        head = f"[{q.asked_by}] " if q.asked_by else ""
        lines = ["", f"? {head}{q.text.strip()}" + ("  (still waiting for your answer)" if again else "")]
        lines += [f"  {i}. {o}" for i, o in enumerate(q.options, 1)]
        hints = []
        if q.options:
            hints.append("type a number or your own answer")
        if q.default is not None:
            hints.append(f"Enter = {q.default}")
        if hints:
            lines.append(f"  ({'; '.join(hints)})")
        self._write("\n".join(lines) + "\n> ")

    def reshow(self) -> bool:
        """Show the open question again (after another prompt took a line); False when none is open."""
        if self._open is None:
            return False
        self._show(self._open, again=True)
        return True

    async def ask(self, q: Question) -> Answer:
        """Show ``q`` and wait for a line; see the class docstring for how lines are read."""
        dropped = [d for d in self.lines.typed_ahead() if d.strip()]
        if dropped:
            shown = " / ".join(repr(d) for d in dropped)
            self._write(f"\n  (typed before this question, not taken as its answer: {shown})")
        self._show(q)
        self._open = q
        try:
            while True:
                line = await self.lines.line()
                if line == "":  # end of input: every later ask sees it too
                    self._write("\n")
                    return Answer("nobody")
                chosen = pick(line, q)
                if chosen is not None:
                    return Answer("answered", chosen, by=self.by)
                self._write("> ")
        finally:
            self._open = None


ScriptReply = str | Answer | None
Script = Sequence[str] | Callable[[Question], ScriptReply | Awaitable[ScriptReply]]


class ScriptedTransport:
    """Answers from a script, for tests and programs; records every question in ``asked``.

    ``answers`` is a list (used in order) or a callback given the Question (returning a string,
    an Answer, None, or an awaitable of one of these). When the list runs out or the callback
    returns None, the question waits until ``answer()`` is called from another task.
    """

    def __init__(self, answers: Script | None = None, *, by: str = "script") -> None:
        self.by = by
        self.asked: list[Question] = []
        if isinstance(answers, str):
            raise TransportError(
                f"ScriptedTransport answers must be a list of strings or a callback; got the string "
                f"{answers!r}. Wrap it in a list: [{answers!r}]."
            )
        self._script: deque[str] | None = deque(answers) if isinstance(answers, Sequence) else None
        self._callback = answers if callable(answers) else None
        self._waiting: list[tuple[Question, asyncio.Future[Answer]]] = []
        self._early: dict[str, Answer] = {}
        self._seen = 0
        self._arrivals: list[asyncio.Future[None]] = []

    async def ask(self, q: Question) -> Answer:
        """Record ``q`` and answer it from the script, or wait for ``answer()``."""
        self.asked.append(q)
        for fut in self._arrivals:
            if not fut.done():
                fut.set_result(None)
        self._arrivals = []
        got = await self._scripted(q)
        if got is not None:
            return got
        for k in (q.key, q.text, normalize_text(q.text)):
            if k in self._early:
                return self._early.pop(k)
        fut: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        entry = (q, fut)
        self._waiting.append(entry)
        try:
            return await fut
        finally:
            if entry in self._waiting:
                self._waiting.remove(entry)  # cancelled (a timeout): no longer waiting

    async def _scripted(self, q: Question) -> Answer | None:
        if self._script:
            return Answer("answered", self._script.popleft(), by=self.by)
        if self._callback is None:
            return None
        got = self._callback(q)
        if inspect.isawaitable(got):
            got = await got
        if got is None or isinstance(got, Answer):
            return got
        return Answer("answered", str(got), by=self.by)

    @property
    def waiting(self) -> list[Question]:
        """The questions waiting for ``answer()``, oldest first."""
        return [q for q, _ in self._waiting]

    def answer(self, key_or_text: str, text: str, *, by: str | None = None) -> bool:
        """Answer the waiting question whose key or text is ``key_or_text``.

        Returns True when a waiting question got it. Otherwise the answer is kept for the first
        later question with that key or text, and False is returned.
        """
        a = Answer("answered", text, by=self.by if by is None else by)
        for q, fut in self._waiting:
            if key_or_text in (q.key, q.text, normalize_text(q.text)) and not fut.done():
                fut.set_result(a)
                return True
        self._early[key_or_text] = a
        return False

    async def next_question(self, *, timeout: float | None = 60) -> Question:
        """The next question received that this method has not returned yet; waits for one.

        Raises ``TransportError`` after ``timeout`` seconds (a failure message, not pacing).
        """
        while self._seen >= len(self.asked):
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._arrivals.append(fut)
            try:
                async with asyncio.timeout(timeout):  # wait_for can swallow a cancel on 3.11
                    await fut
            except TimeoutError:
                raise TransportError(
                    f"no question arrived within {timeout}s ({len(self.asked)} asked so far, "
                    f"{self._seen} already returned). Check that the model calls the ask tool."
                ) from None
        self._seen += 1
        return self.asked[self._seen - 1]

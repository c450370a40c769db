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
import logging
import sys
import threading
import unicodedata
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TextIO

from engine._errors import FlowerError

log = logging.getLogger(__name__)

AnswerState = Literal["answered", "timeout", "nobody"]
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

    Defaults: ``sys.stderr`` and ``sys.stdin``. The line is read in a daemon thread so the event
    loop keeps running (and a process exit never waits for it). A read left pending by a timed-out
    question is reused by the next one: one reader at a time, so no line goes to a stale thread.
    A line that reader got while no question was open (a late answer) is dropped, not taken as
    the answer to the next question. A number picks an option, other text is a free answer, an
    empty line gives the default (or asks again). End of input answers ``nobody``, for good.
    """

    def __init__(
        self, *, input: TextIO | None = None, output: TextIO | None = None, by: str = "terminal"
    ) -> None:
        self.input = input
        self.output = output
        self.by = by
        self._pending: asyncio.Future[str] | None = None

    def _write(self, text: str) -> None:
        out = self.output or sys.stderr
        out.write(text)
        out.flush()

    def _show(self, q: Question) -> None:
        head = f"[{q.asked_by}] " if q.asked_by else ""
        lines = ["", f"? {head}{q.text.strip()}"]
        lines += [f"  {i}. {o}" for i, o in enumerate(q.options, 1)]
        hints = []
        if q.options:
            hints.append("type a number or your own answer")
        if q.default is not None:
            hints.append(f"Enter = {q.default}")
        if hints:
            lines.append(f"  ({'; '.join(hints)})")
        self._write("\n".join(lines) + "\n> ")

    def _read_line(self) -> asyncio.Future[str]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[str] = loop.create_future()
        stream = self.input or sys.stdin

        def deliver(line: str) -> None:
            if not fut.done():
                fut.set_result(line)

        def run() -> None:
            try:
                line = stream.readline()
            except (OSError, ValueError) as exc:  # a closed stdin: nobody is there to answer
                log.warning("cannot read an answer from %r: %s", stream, exc)
                line = ""
            try:
                loop.call_soon_threadsafe(deliver, line)
            except RuntimeError:  # the loop is closed: nobody waits for this line any more
                log.debug("answer line read after the event loop closed: %r", line)

        threading.Thread(target=run, name="flower-terminal-answer", daemon=True).start()
        return fut

    async def ask(self, q: Question) -> Answer:
        """Show ``q`` and wait for a line; see the class docstring for how lines are read."""
        if self._pending is not None and self._pending.done() and self._pending.result() != "":
            self._pending = None  # typed while no question was open: not an answer to this one
        self._show(q)
        while True:
            if self._pending is None:
                self._pending = self._read_line()
            line = await asyncio.shield(self._pending)  # a timeout must not orphan the reader
            if line == "":  # end of input; keep the finished read so later asks see it too
                self._write("\n")
                return Answer("nobody")
            self._pending = None
            chosen = pick(line, q)
            if chosen is not None:
                return Answer("answered", chosen, by=self.by)
            self._write("> ")


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

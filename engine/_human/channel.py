"""HumanChannel: how the engine asks a person, and what it does when nobody answers.

The channel owns the ask tool (an in-process SDK MCP server with ``ask`` and ``inbox``), the Q&A
log, ``max_asks``, ``timeout_s`` and brief amendments. How a question reaches a person is a
pluggable ``Transport`` (``engine._human.transports``: the terminal, a scripted one for tests; the
bot brings the Slack thread).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from claude_agent_sdk import create_sdk_mcp_server, tool

from engine._human.amend import amend_text
from engine._lang import words
from engine._beneath import UnsafePath, append_text, read_text, write_text
from engine._human.texts import (  # noqa: F401  (re-exported: tests and front ends read them)
    ASK_DESCRIPTION,
    ASK_DESCRIPTION_PARKED,
    INBOX_DESCRIPTION,
    ASK_SCHEMA,
    span,
)
from engine._events import AskEvent, AskPhase, OnEvent, emit
from engine._human.qa_log import answer_entry, numbered, parked_entry, question_entry
from engine._human.transports import Answer, AnswerState, Question, Transport, question_key
from engine._errors import FlowerError

__all__ = [  # the values and the seam live in transports.py; re-exported here for one import
    "Answer",
    "AnswerState",
    "ChannelError",
    "HumanChannel",
    "Question",
    "Transport",
    "amend_text",
    "question_key",
]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 1800.0

# Called when a question with no default goes unanswered past its deadline (see HumanChannel).
Park = Callable[[Question], None]

class ChannelError(FlowerError, ValueError):
    """A HumanChannel was used in a way it cannot serve (e.g. amend() without amend_path)."""


class HumanChannel:
    """The engine's way to ask a person: ask tool, Q&A log, limits, inbox and brief amendments.

    No ``transport``: nobody can be asked, every ask returns ``Answer("nobody")`` at once.
    ``timeout_s=0`` never waits (unattended runs); ``None`` waits forever (through the ask tool
    the CLI's own limit still applies: ``MCP_TOOL_TIMEOUT``, 1e8 ms unless set). ``max_asks``
    caps the questions asked through this channel; past it ``ask`` returns ``nobody`` without
    asking. ``on_event`` may be set later (a workflow hands the channel its front end's callback).

    ``park``: what to do when a question with no default goes unanswered past its deadline.
    Without it the model hears that nobody answered and goes on with its best judgement (the
    spec's behaviour). With it the channel calls ``park(question)`` and keeps waiting, telling the
    model nothing: the front end is expected to end the run (cancel it) and resume it once
    somebody answers; an answer that lands before the cancel is still taken.
    """

    def __init__(
        self,
        *,
        transport: Transport | None = None,
        log_path: str | Path | None = None,
        amend_path: str | Path | None = None,
        max_asks: int | None = None,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        server_name: str = "human",
        on_event: OnEvent | None = None,
        park: Park | None = None,
        anchor: str | Path | None = None,
    ) -> None:
        if timeout_s is not None and timeout_s < 0:
            raise ChannelError(
                f"timeout_s must be >= 0 or None; got {timeout_s!r}. Use 0 to never wait, None to wait forever."
            )
        if max_asks is not None and max_asks < 0:
            raise ChannelError(f"max_asks must be >= 0 or None; got {max_asks!r}. Use None for no limit.")
        self.transport, self.log_path, self.amend_path = transport, log_path, amend_path
        self.max_asks, self.timeout_s, self.server_name, self.on_event = max_asks, timeout_s, server_name, on_event
        self.park = park
        self.anchor = anchor  # the host-made folder holding both files: no link below it is followed
        self.asks = 0  # questions asked so far (refused ones past max_asks do not count)
        self._inbox: list[tuple[str, str]] = []

    # -- asking ---------------------------------------------------------------------------

    @property
    def exhausted(self) -> bool:
        """True when ``max_asks`` questions have been asked: the next ask is refused."""
        return self.max_asks is not None and self.asks >= self.max_asks

    async def ask(
        self,
        text: str,
        *,
        options: Sequence[str] = (),
        default: str | None = None,
        timeout_s: float | None = None,
        asked_by: str = "",
    ) -> Answer:
        """Ask a person ``text`` and wait for the answer, logging both and emitting ``ask`` events.

        ``timeout_s`` None uses the channel's. On timeout the answer is ``timeout`` with
        ``default`` as its text (empty without one). A failing transport is logged and counts as
        ``nobody``. Past ``max_asks``: ``nobody`` with the reason as text, nothing asked.
        Events: ``AskEvent`` (step ``asked_by``) with ``phase`` "asked", then "answered" (or
        "cancelled" when the wait is cancelled), ``question``, ``options``, ``state``,
        ``answer``, ``by``, ``key`` and ``n`` (the question's number in the log).
        A blank ``text`` raises ``ChannelError`` (the ask tool reports it to the model).
        """
        if not text.strip():
            raise ChannelError("ask() needs a question; got an empty text. Write the question in full.")
        if self.exhausted:
            return Answer("nobody", f"max_asks={self.max_asks} reached: no more questions may be asked in this run.")
        self.asks += 1
        wait = self.timeout_s if timeout_s is None else timeout_s
        q = Question(text, tuple(options), default, wait, asked_by=asked_by)
        n, logged = numbered(self._read_log(), q)
        if not logged:
            self._append_log(question_entry(n, q))
        self._emit(n, q, None, "asked")
        try:
            answer, note = await self._wait(q, wait)
        except asyncio.CancelledError:  # the step was interrupted: close the question everywhere
            self._append_log(answer_entry(Answer("nobody"), "cancelled"))
            self._emit(n, q, Answer("nobody"), "cancelled")
            raise
        self._append_log(answer_entry(answer, note))
        self._emit(n, q, answer, "answered")
        return answer

    async def _wait(self, q: Question, wait: float | None) -> tuple[Answer, str]:
        if self.transport is None:
            return Answer("nobody"), "nobody to ask"
        if wait == 0:  # unattended run: never block on a person
            return Answer("nobody"), "timeout_s=0: not waiting"
        try:
            if self.park is not None and q.default is None:
                return await self._wait_or_park(q, wait)
            # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancel (Stop, shutdown)
            async with asyncio.timeout(wait):
                return await self.transport.ask(q), ""
        except TimeoutError:
            note = f"timeout after {wait:g} s" + ("; default used" if q.default is not None else "")
            return Answer("timeout", q.default or ""), note
        except Exception as exc:  # a broken front end must not end the run: nobody could be asked
            log.exception("transport %r failed to ask %r", self.transport, q.text)
            return Answer("nobody"), f"transport failed: {exc!r}"

    async def _wait_or_park(self, q: Question, wait: float | None) -> tuple[Answer, str]:
        """Wait for the answer; past ``wait`` call ``park`` once and go on waiting (never time out)."""
        assert self.transport is not None and self.park is not None
        pending = asyncio.ensure_future(self.transport.ask(q))
        try:
            done, _ = await asyncio.wait({pending}, timeout=wait)
            if not done:
                self._append_log(parked_entry(wait or 0))
                self.park(q)
            return await pending, "" if done else "answered after the run was parked"
        finally:
            if not pending.done():  # the run was cancelled (parked, stopped): let the transport tidy up
                pending.cancel()
                await asyncio.gather(pending, return_exceptions=True)

    def _emit(self, n: int, q: Question, a: Answer | None, phase: AskPhase) -> None:
        emit(self.on_event, AskEvent(
            q.asked_by, phase=phase, question=q.text, options=tuple(q.options),
            state=a.state if a else "", answer=a.text if a else "", by=a.by if a else "",
            key=q.key, n=n))

    # -- the Q&A log ----------------------------------------------------------------------

    def _anchor_of(self, path: str | Path, *, create: bool = False) -> Path:
        if self.anchor is not None:
            return Path(self.anchor)
        if create:
            Path(path).parent.mkdir(parents=True, exist_ok=True)  # no anchor: the caller trusts the folder
        return Path(path).parent

    def _read_log(self) -> str:
        if self.log_path is None:
            return ""
        try:
            return read_text(self._anchor_of(self.log_path), self.log_path)
        except (FileNotFoundError, UnsafePath):
            return ""

    def _append_log(self, text: str) -> None:
        # the log lies in the agent's workbench: a link there would make the bot append elsewhere
        if self.log_path is None:
            return
        try:
            append_text(self._anchor_of(self.log_path, create=True), self.log_path, text)
        except UnsafePath as exc:  # the question still reaches a person; only its record is skipped
            log.warning("the Q&A log was not written: %s", exc)

    # -- the MCP tools --------------------------------------------------------------------

    @property
    def tool_name(self) -> str:
        """The ask tool's full name as the CLI knows it (for ``allowed_tools``)."""
        return f"mcp__{self.server_name}__ask"

    @property
    def inbox_tool_name(self) -> str:
        """The inbox tool's full name as the CLI knows it."""
        return f"mcp__{self.server_name}__inbox"

    def deadline(self, minutes: Any) -> float | None:
        """The wait for a question that asks for ``minutes``: never past the channel's own limit
        (an unattended channel, ``timeout_s=0``, stays 0); unusable values mean the channel's."""
        try:
            asked = float(minutes) * 60 if minutes is not None else None
        except (TypeError, ValueError):
            asked = None
        if asked is None or asked <= 0:
            return self.timeout_s
        return asked if self.timeout_s is None else min(asked, self.timeout_s)

    def tool_text(self, a: Answer, wait: float | None) -> str:
        """What the model reads back for answer ``a`` to a question that waited ``wait`` s."""
        if a.answered:
            w = words()
            return (a.text or w.EMPTY_ANSWER) + (f"\n{w.ANSWERED_BY.format(by=a.by)}" if a.by else "")
        if a.state == "timeout" and wait:
            if a.text:
                return words().TIMEOUT_DEFAULT_TEXT.format(span=span(wait), default=a.text)
            return words().TIMEOUT_TEXT.format(span=span(wait))
        return words().NOBODY_TEXT

    def mcp_servers(self, *, asked_by: str = "") -> dict[str, Any]:
        """``{server_name: <in-process MCP server>}`` for ``ClaudeAgentOptions.mcp_servers``.

        Two tools: ``ask`` (question, optional options) and ``inbox`` (no input). ``asked_by``
        names the role in the Q&A log and events. Each call builds a fresh server.
        """

        @tool("ask", ASK_DESCRIPTION if self.park is None else ASK_DESCRIPTION_PARKED, ASK_SCHEMA)
        async def ask_tool(args: dict[str, Any]) -> dict[str, Any]:
            if self.exhausted:  # checked here too so the model hears the limit, not "nobody"
                return _tool_reply(words().LIMIT_TEXT.format(limit=self.max_asks))
            options = tuple(args.get("options") or ())
            default = str(args["default"]) if args.get("default") else None
            wait = self.deadline(args.get("deadline_minutes"))
            a = await self.ask(str(args["question"]), options=options, default=default,
                               timeout_s=wait, asked_by=asked_by)
            return _tool_reply(self.tool_text(a, wait))

        @tool("inbox", INBOX_DESCRIPTION, {"type": "object", "properties": {}})
        async def inbox_tool(args: dict[str, Any]) -> dict[str, Any]:
            notes = self.drain()
            if not notes:
                return _tool_reply(words().INBOX_EMPTY)
            lines = [f"- {by}: {text}" if by else f"- {text}" for text, by in notes]
            return _tool_reply("\n".join([words().INBOX_HEAD, *lines]))

        server = create_sdk_mcp_server(self.server_name, tools=[ask_tool, inbox_tool])
        # The CLI (2.1.332) otherwise defers MCP tools behind ToolSearch: the model would see only
        # the name, and have to load the schema (a turn) before it could ask anything.
        server["alwaysLoad"] = True  # type: ignore[typeddict-unknown-key]  # the SDK passes it on
        return {self.server_name: server}

    # -- inbox ----------------------------------------------------------------------------

    def post(self, text: str, *, by: str = "") -> None:
        """Leave a note for the run; the coordinator picks it up with the inbox tool."""
        self._inbox.append((text, by))

    def drain(self) -> list[tuple[str, str]]:
        """Return the notes left so far as ``(text, by)``, oldest first, and forget them."""
        notes, self._inbox = self._inbox, []
        return notes

    # -- amendments -----------------------------------------------------------------------

    def amend(self, said: str, *, label: str | None = None) -> bool:
        """Add ``said`` as a bullet under ``## {label}`` in the brief at ``amend_path``.

        Reuses an existing ``## {label}`` section; writes nothing and returns False when the
        sentence is already in the file (whitespace-insensitive) or is blank; True when written.
        A missing brief file is created. No ``amend_path`` raises ``ChannelError`` (a ValueError).
        """
        if self.amend_path is None:
            raise ChannelError(
                f"HumanChannel.amend({said!r}) needs amend_path, the brief file to append to; "
                "construct the channel with amend_path=<brief path> (starter_flow passes the brief's path)."
            )
        anchor = self._anchor_of(self.amend_path, create=True)
        try:
            old = read_text(anchor, self.amend_path)
        except (FileNotFoundError, UnsafePath):
            old = ""  # a link there is the agent's: replaced by the amended brief, never read
        new = amend_text(old, said, label=label)
        if new is None:
            return False
        write_text(anchor, self.amend_path, new)
        return True


def _tool_reply(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


"""One attempt: one Claude Code process running one prompt to the end of its run.

A step is over only when the CLI has no agent left running: subagents started with the Agent
tool run in the background, so the coordinator's turn can end with a result while workers still
run, and a task notification later starts another turn with another result. We therefore read
every message until the CLI exits (the SDK keeps stdin open until the session is idle), sum cost
and turns over every result, and take the text of the last one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ClaudeSDKError,
    ResultMessage,
    SystemMessage,
    TextBlock,
)

from engine._media.image import Image, prompt_content

log = logging.getLogger(__name__)

# Result subtypes that mean "the step used up its allowance": retrying cannot help.
LIMIT_SUBTYPES = ("error_max_turns", "error_max_budget_usd", "error_max_structured_output_retries")


def context_tokens(usage: dict[str, Any] | None) -> int:
    """The context size one API call used: input plus cache reads and writes."""
    if not usage:
        return 0
    return sum(
        int(usage.get(k) or 0)
        for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )


@dataclass
class AttemptOutcome:
    """What one attempt produced. ``error`` is None on success."""

    session_id: str | None = None
    text: str = ""
    error: str | None = None
    error_kind: str | None = None  # structured: the API's error code, the result's subtype, or the SDK error
    cost_usd: float = 0.0
    num_turns: int = 0
    context: int = 0
    stopped: str | None = None  # why we interrupted it ourselves (a person, a full context)
    model: str = ""  # the model the main thread's last message came from
    tokens: int = 0  # the last result's tokens (input, output, cache reads and writes)
    limit: bool = False  # ended by max_turns / max_budget: never retried


@dataclass
class AttemptHooks:
    """Callbacks the runtime gives an attempt; all run on the event loop, none may block."""

    on_session: Callable[[str], None] = lambda sid: None
    on_context: Callable[[int], str | None] = lambda tokens: None  # returns a stop reason
    on_message: Callable[[AssistantMessage], str | None] = lambda msg: None  # workers' too; a stop reason
    on_result: Callable[[AttemptOutcome], None] = lambda outcome: None
    stop_requests: asyncio.Queue[str] = field(default_factory=asyncio.Queue)


def _user_message(prompt: str, images: Sequence[Image] = ()) -> dict[str, Any]:
    """The prompt as the SDK streams it to the CLI: a content list when images come with it (the
    CLI takes Anthropic content blocks in ``message.content`` as they are)."""
    return {
        "type": "user",
        "message": {"role": "user", "content": prompt_content(prompt, images)},
        "parent_tool_use_id": None,
        "session_id": "",
    }


async def run_attempt(
    options: ClaudeAgentOptions, prompt: str, hooks: AttemptHooks, *, images: Sequence[Image] = ()
) -> AttemptOutcome:
    """Run ``prompt`` (and ``images`` after it) in one CLI process until the run ends; never
    raises for model errors.

    A stop request (a reason string put on ``hooks.stop_requests``, or returned by
    ``on_context``) interrupts the session at a message boundary; the outcome's ``stopped``
    then carries the reason and ``error`` is set to it.
    """
    out = AttemptOutcome()
    last_text: list[str] = []
    client = ClaudeSDKClient(options)

    async def one_prompt():
        yield _user_message(prompt, images)

    async def stop(reason: str) -> None:
        if out.stopped is None:
            out.stopped = reason
            try:
                await client.interrupt()
            except ClaudeSDKError as exc:  # the process may already be gone; the reason stays
                log.debug("interrupt failed: %s", exc)

    async def watch_stops() -> None:
        await stop(await hooks.stop_requests.get())

    def see_session(sid: str | None) -> None:
        if sid and sid != out.session_id:
            out.session_id = sid
            hooks.on_session(sid)

    watcher = asyncio.create_task(watch_stops())
    try:
        await client.connect(one_prompt())
        async for msg in client.receive_messages():
            if isinstance(msg, SystemMessage) and msg.subtype == "init":
                see_session(msg.data.get("session_id"))
            elif isinstance(msg, AssistantMessage):
                see_session(msg.session_id)
                reason = hooks.on_message(msg)
                if reason:
                    await stop(reason)
                if msg.parent_tool_use_id is not None:
                    continue  # a subagent's message: not the main thread's context
                out.model = msg.model or out.model
                if msg.error:
                    texts = [b.text for b in msg.content if isinstance(b, TextBlock)]
                    out.error = " ".join(texts) or f"API error: {msg.error}"
                    out.error_kind = str(msg.error)  # e.g. authentication_failed, server_error
                    continue
                texts = [b.text for b in msg.content if isinstance(b, TextBlock)]
                if texts:
                    last_text = texts
                tokens = context_tokens(msg.usage)
                if tokens:
                    out.context = tokens
                    reason = hooks.on_context(tokens)
                    if reason:
                        await stop(reason)
            elif isinstance(msg, ResultMessage):
                see_session(msg.session_id)
                out.cost_usd += msg.total_cost_usd or 0.0
                out.tokens = sum(int(v or 0) for k, v in (msg.usage or {}).items() if k.endswith("_tokens"))
                out.num_turns += msg.num_turns or 0
                if msg.is_error:
                    out.limit = msg.subtype in LIMIT_SUBTYPES
                    detail = msg.result or "; ".join(msg.errors or []) or msg.subtype
                    out.error = out.error or detail
                    out.error_kind = out.error_kind or msg.subtype
                else:
                    out.error, out.error_kind = None, None
                    out.text = msg.result or "\n".join(last_text)
                hooks.on_result(out)
    except ClaudeSDKError as exc:
        # After an is_error result the CLI exits non-zero on purpose and the SDK raises; the
        # result already told us what happened, so only a new error text is kept.
        if out.error is None:
            out.error = f"{type(exc).__name__}: {exc}"
            out.error_kind = getattr(exc, "subtype", None) or type(exc).__name__  # ResultError says why
    finally:
        watcher.cancel()
        try:
            await client.disconnect()
        except ClaudeSDKError as exc:
            log.debug("disconnect failed: %s", exc)
    if out.stopped is not None:
        out.error = out.stopped
    elif out.error is None and not out.text:
        out.text = "\n".join(last_text)
    return out

"""What the fake model recorded of one request, and how it answered."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.testing import conversation as conv


@dataclass
class RecordedRequest:
    """One HTTP request the fake model received, in arrival order (``index`` from 0).

    ``body`` is the full parsed JSON (None when the body was empty or not JSON). ``rule`` and
    ``reply_index`` say which rule and which of its replies answered a ``/v1/messages`` request
    (None when none did); ``outcome`` is ``"reply"``, a fault name (``"http 529"``,
    ``"cut_stream"``, ``"stream_error"``), ``"unmatched"``, ``"dropped"`` (the client went
    away) or ``""`` for other endpoints; ``response`` is the message that was (to be) sent.
    """

    index: int
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str] = field(repr=False)
    body: Any = field(repr=False)
    rule: str | None = None
    reply_index: int | None = None
    outcome: str = ""
    response: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def is_message(self) -> bool:
        """True for a ``POST /v1/messages`` call (a model turn)."""
        return self.method == "POST" and self.path == "/v1/messages"

    @property
    def shown(self) -> str:
        """Everything the model was shown (see ``conversation.shown``)."""
        return conv.shown(self.body) if isinstance(self.body, dict) else ""

    @property
    def system(self) -> str:
        """The system prompt text."""
        return conv.system_text(self.body) if isinstance(self.body, dict) else ""

    @property
    def prompt(self) -> str:
        """The latest prompt message's text."""
        return conv.prompt_text(self.body) if isinstance(self.body, dict) else ""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The request's ``messages`` list."""
        return list(self.body.get("messages") or []) if isinstance(self.body, dict) else []

    @property
    def tools(self) -> list[str]:
        """Names of the tools offered."""
        return conv.offered_tools(self.body) if isinstance(self.body, dict) else []

    @property
    def tool_results(self) -> list[tuple[str, str]]:
        """``(tool name, text)`` of every tool result in the conversation."""
        return conv.tool_results(self.body) if isinstance(self.body, dict) else []

    @property
    def turn(self) -> int:
        """Assistant messages since the latest prompt (0 for a turn's first request)."""
        return conv.assistant_turns(self.body) if isinstance(self.body, dict) else 0

    @property
    def usage(self) -> dict[str, int]:
        """The usage reported in the response (empty if no message was sent)."""
        return dict((self.response or {}).get("usage") or {})


def shown(request: RecordedRequest | dict[str, Any]) -> str:
    """Everything the model was shown in one request, as one string.

    The system prompt and every message's text, tool_use inputs (JSON) and tool_result contents,
    each message headed by ``[role]``. Accepts a ``RecordedRequest`` or a raw body dict.
    """
    return conv.shown(request.body if isinstance(request, RecordedRequest) else request)

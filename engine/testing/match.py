"""Matchers: predicates on a request body that decide which rule answers it.

Each matcher is a ``Match``: callable on the request body (a dict), with a readable ``repr`` for
error messages, and combinable with ``&``, ``|`` and ``~``. Any plain ``Callable[[dict], bool]``
works where a matcher is expected.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.testing import conversation as conv

Body = dict[str, Any]
Matcher = Callable[[Body], bool]


@dataclass(frozen=True)
class Match:
    """A named predicate on a request body."""

    fn: Matcher
    description: str

    def __call__(self, body: Body) -> bool:
        return bool(self.fn(body))

    def __and__(self, other: Matcher) -> Match:
        return all_of(self, other)

    def __or__(self, other: Matcher) -> Match:
        return any_of(self, other)

    def __invert__(self) -> Match:
        return Match(lambda body: not self(body), f"not {self!r}")

    def __repr__(self) -> str:
        return self.description


def _describe(m: Matcher) -> str:
    return repr(m) if isinstance(m, Match) else getattr(m, "__name__", repr(m))


def all_of(*matchers: Matcher) -> Match:
    """True when every matcher is (an empty list is always true)."""
    return Match(lambda b: all(m(b) for m in matchers), " and ".join(map(_describe, matchers)) or "always")


def any_of(*matchers: Matcher) -> Match:
    """True when at least one matcher is."""
    return Match(lambda b: any(m(b) for m in matchers), "(" + " or ".join(map(_describe, matchers)) + ")")


def where(predicate: Matcher, description: str | None = None) -> Match:
    """Wrap an arbitrary ``Callable[[dict], bool]`` on the request body."""
    return Match(predicate, description or _describe(predicate))


def system_contains(text: str) -> Match:
    """The system prompt contains ``text``."""
    return Match(lambda b: text in conv.system_text(b), f"system_contains({text!r})")


def prompt_contains(text: str) -> Match:
    """The latest prompt (the user message that started this turn) contains ``text``."""
    return Match(lambda b: text in conv.prompt_text(b), f"prompt_contains({text!r})")


def last_user_contains(text: str) -> Match:
    """The last user message (a prompt or tool results) contains ``text``."""
    return Match(lambda b: text in conv.last_user_text(b), f"last_user_contains({text!r})")


def mentions(text: str) -> Match:
    """``text`` appears anywhere the model is shown: system prompt or any message."""
    return Match(lambda b: text in conv.shown(b), f"mentions({text!r})")


def offers_tool(name: str) -> Match:
    """A tool named ``name`` is offered in ``tools``."""
    return Match(lambda b: name in conv.offered_tools(b), f"offers_tool({name!r})")


def _results(tool: str | None, contains: str | None, last_only: bool) -> Matcher:
    def check(b: Body) -> bool:
        return any(
            (tool is None or name == tool) and (contains is None or contains in text)
            for name, text in conv.tool_results(b, last_only=last_only)
        )

    return check


def _args(tool: str | None, contains: str | None) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in (("tool", tool), ("contains", contains)) if v is not None)


def has_tool_result(tool: str | None = None, *, contains: str | None = None) -> Match:
    """Some message carries a tool result (of tool ``tool``, containing ``contains``)."""
    return Match(_results(tool, contains, False), f"has_tool_result({_args(tool, contains)})")


def last_is_tool_result(tool: str | None = None, *, contains: str | None = None) -> Match:
    """The last message carries a tool result (of tool ``tool``, containing ``contains``)."""
    return Match(_results(tool, contains, True), f"last_is_tool_result({_args(tool, contains)})")


def turn(n: int) -> Match:
    """Exactly ``n`` assistant messages since the latest prompt (0: the turn's first request)."""
    return Match(lambda b: conv.assistant_turns(b) == n, f"turn({n})")


COMPACTION_MARKER = "create a detailed summary of the conversation so far"


def compaction() -> Match:
    """The CLI's own summarization request (automatic compaction after "prompt is too long", or
    ``/compact``): its prompt asks for an ``<analysis>`` and a ``<summary>`` block, text only."""
    return Match(lambda b: COMPACTION_MARKER in conv.prompt_text(b), "compaction()")

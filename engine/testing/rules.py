"""Rules: which scripted reply answers which request.

A ``Rule`` holds conditions (all must hold) and an ordered list of replies. Rules are tried in
the order they were added, then the fallback rules in theirs; the first rule that matches AND
still has a reply for the request answers it. So several conversations in flight at once (a
coordinator, a subagent started with the Agent tool, a judge) each follow their own script:
give each rule a condition that tells its conversation apart (a system prompt phrase, a marker
in the prompt, an offered tool).

Which reply of a rule is served is decided by ``sequence``:

- ``"turn"`` (default): reply ``n`` answers the request that holds ``n`` assistant messages
  since the latest prompt (the user message that started the turn). Derived from the request
  alone, so a retried or resumed request gets the same reply again, and a session that is
  prompted again (a later step in the same session) starts the script from reply 0.
- ``"conversation"``: ``n`` counts every assistant message in the request, from the start of
  the session.
- ``"call"``: replies go out in call order, one per request this rule answers successfully (a
  request answered by a fault does not use up a reply).

A rule with no reply left for a request does not match it (the next rule is tried), unless
``repeat_last`` is set, which serves the last reply again.

A ``Fault`` may stand in the replies list: that slot is answered with the fault every time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.testing import conversation as conv
from engine.testing.faults import Fault
from engine.testing.match import Match, all_of, mentions, where
from engine.testing.recorded import RecordedRequest
from engine.testing.replies import Reply

Sequencing = Literal["turn", "conversation", "call"]
Condition = Callable[[dict[str, Any]], bool] | str
SEQUENCES = ("turn", "conversation", "call")


def to_match(when: Condition | Sequence[Condition] | None) -> Match:
    """Normalize ``when``: a matcher, a string (``mentions``), or a list of them (all must hold)."""
    if when is None:
        return all_of()
    if isinstance(when, str):
        return mentions(when)
    if isinstance(when, Match):
        return when
    if callable(when):
        return where(when)
    return all_of(*(to_match(w) for w in when))


@dataclass(eq=False)
class Rule:
    """Conditions, an ordered script of replies, and the requests it has answered."""

    replies: list[Reply | Fault]
    when: Match = field(default_factory=all_of)
    name: str = ""
    sequence: Sequencing = "turn"
    repeat_last: bool = False
    faults: tuple[Fault, ...] = ()
    fallback: bool = False
    requests: list[RecordedRequest] = field(default_factory=list)
    calls: int = 0

    def __post_init__(self) -> None:
        if self.sequence not in SEQUENCES:
            raise ValueError(f"sequence must be one of {SEQUENCES}; got {self.sequence!r}")
        if not self.replies:
            raise ValueError(f"rule {self.name!r} has no replies; give at least one text(...) or tool_use(...)")

    def index_for(self, body: dict[str, Any]) -> int | None:
        """The reply index this rule would serve for ``body``, or None if it does not answer it."""
        if not self.when(body):
            return None
        if self.sequence == "turn":
            n = conv.assistant_turns(body, since_prompt=True)
        elif self.sequence == "conversation":
            n = conv.assistant_turns(body, since_prompt=False)
        else:
            n = self.calls
        if n < len(self.replies):
            return n
        return len(self.replies) - 1 if self.repeat_last else None

    @property
    def last_request(self) -> RecordedRequest | None:
        """The latest request this rule answered (or tried to), or None."""
        return self.requests[-1] if self.requests else None

    def __repr__(self) -> str:
        return f"Rule({self.name!r}, when={self.when!r}, {len(self.replies)} replies, {self.sequence})"


def select(rules: Sequence[Rule], body: dict[str, Any]) -> tuple[Rule, int] | None:
    """The first rule (non-fallback rules first, each group in order) that answers ``body``."""
    for group in (False, True):
        for rule in rules:
            if rule.fallback is group:
                i = rule.index_for(body)
                if i is not None:
                    return rule, i
    return None

"""What the fake saw: Web API calls, Socket Mode envelopes and their acks."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    """One request to the fake Web API (or a response_url), in arrival order.

    `body` merges query parameters and the form or JSON body; JSON-valued form fields stay strings,
    as the client sent them (use `arg()` to get them parsed).
    """

    index: int
    method: str
    body: dict[str, Any]
    headers: dict[str, str]
    token: str | None
    status: int
    response: dict[str, Any] | None
    at: float = field(default_factory=time.time)  # when the fake answered (epoch seconds)

    @property
    def ok(self) -> bool:
        """True when the fake answered 200 with ok: true."""
        return self.status == 200 and bool(self.response and self.response.get("ok"))

    def arg(self, name: str, default: Any = None) -> Any:
        """An argument with JSON strings (blocks, attachments, files) decoded."""
        value = self.body.get(name, default)
        if isinstance(value, str) and value[:1] in "[{":
            try:
                return json.loads(value)
            except json.JSONDecodeError:
                return value
        return value

    def matches(self, method: str | None, match: dict[str, Any]) -> bool:
        """True when the method is `method` (any if None) and each `match` key equals the body's."""
        if method is not None and self.method != method:
            return False
        return all(_same(self.body.get(key), want) for key, want in match.items())


def _same(have: Any, want: Any) -> bool:
    if want is None or have is None:
        return have is want
    return have == want or str(have) == str(want)  # form bodies carry every value as a string


@dataclass
class Envelope:
    """A Socket Mode envelope the fake pushed, with its ack once it arrives."""

    envelope_id: str
    type: str
    payload: dict
    connection: int
    sent_at: float
    retry_attempt: int = 0
    ack: Ack | None = None


@dataclass(frozen=True)
class Ack:
    """The client's acknowledgement of one envelope; `latency_s` is measured from the send."""

    envelope_id: str
    payload: dict | None
    latency_s: float
    connection: int


@dataclass
class Connection:
    """One Socket Mode websocket as the fake sees it."""

    index: int
    ticket: str
    answer_pings: bool = True
    closed: bool = False
    pings: int = 0
    frames: list[dict] = field(default_factory=list)  # everything the client sent, in order


@dataclass(frozen=True)
class Download:
    """One request to the fake's file host, in arrival order: `authorization` says whether any
    Authorization header came with it, `authorized` whether it held the bot token."""

    index: int
    path: str
    authorization: bool
    authorized: bool
    status: int
    at: float = field(default_factory=time.time)

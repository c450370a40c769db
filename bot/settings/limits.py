"""A team's spend limits, in US dollars, each optional: the values, and how a setting reads them.

Five scopes: one ``request`` (its mention, follow-up or ``/new`` and every run it takes), one
``thread`` (all its requests), one ``channel`` per calendar month, one ``user`` (the person who
asked) per calendar month, and the whole installation (``month``) per calendar month. Months
are UTC calendar months. Defaults come from ``FLOWER_LIMIT_*_USD``; a channel's own limits (set
from Slack with ``@flower /limit``) override them there.

Who may change what: ``month`` and ``user`` count spend in every channel (``INSTALLATION``), so
only the installation's admins may set them freely; a channel's own admins may only lower one in
their channel (``lowers``), never raise or remove it. What they set is kept apart (``cap``, stored
as ``month:cap``) and applies under whatever the operator has in force, never in its place: set at
exactly today's cap, it must not keep that cap in the channel once the operator lowers it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from datetime import datetime, timezone
from typing import Literal, get_args

__all__ = ["ENV", "INSTALLATION", "SCOPES", "Limits", "Scope", "cap", "lowers", "month_start", "parse_usd"]

Scope = Literal["request", "thread", "channel", "user", "month"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
ENV: dict[Scope, str] = {
    "request": "FLOWER_LIMIT_REQUEST_USD",
    "thread": "FLOWER_LIMIT_THREAD_USD",
    "channel": "FLOWER_LIMIT_CHANNEL_MONTH_USD",
    "user": "FLOWER_LIMIT_USER_MONTH_USD",
    "month": "FLOWER_LIMIT_MONTH_USD",
}
NEAR = 0.8  # the status says once that this share of a limit is spent
INSTALLATION: tuple[Scope, ...] = ("user", "month")  # the operator's caps: they sum spend across channels


@dataclass(frozen=True)
class Limits:
    """The limit of each scope; None: no limit."""

    request: float | None = None
    thread: float | None = None
    channel: float | None = None
    user: float | None = None
    month: float | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Limits:
        """The ``FLOWER_LIMIT_*_USD`` settings; ``ValueError`` names a bad one, its value and the fix."""
        return cls(**{scope: parse_usd(env[name], source=name) for scope, name in ENV.items() if env.get(name)})

    def over(self, overrides: Mapping[str, float]) -> Limits:
        """These limits with a channel's own (``overrides``, by scope) in their place, then each channel
        admin's ``cap`` (by ``cap(scope)``) under what that leaves."""
        limits = replace(self, **{k: v for k, v in overrides.items() if k in SCOPES})
        caps = {scope: overrides[cap(scope)] for scope in INSTALLATION if cap(scope) in overrides}
        return replace(limits, **{scope: min(usd, getattr(limits, scope) or math.inf) for scope, usd in caps.items()})

    def items(self) -> list[tuple[Scope, float]]:
        """The scopes that have a limit, with it."""
        return [(f.name, getattr(self, f.name)) for f in fields(self) if getattr(self, f.name) is not None]  # type: ignore[misc]


def parse_usd(raw: str, *, source: str) -> float:
    """``raw`` as dollars above zero (``0.50``, ``$20``); ``ValueError`` naming ``source`` and the fix."""
    text = (raw or "").strip().lstrip("$").replace(",", "")
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{source} must be an amount in US dollars above 0; got {raw!r}. Write it as, "
                         "for example, 20 or 0.50 (leave it unset for no limit).")
    return value


def cap(scope: str) -> str:
    """The name a channel admin's cap on the installation-wide ``scope`` is kept under."""
    return f"{scope}:cap"


def lowers(usd: float | None, in_force: float | None) -> bool:
    """True when setting a channel's own limit to ``usd`` (None: removing it) cannot raise the
    limit ``in_force`` there now (None: no limit).

    The rule a channel's admins meet for an installation-wide scope: at most what is in force,
    never ``off`` over a limit (removing the channel's own value could bring back a higher one).
    Comparing with what is in force, not with the operator's default, is what keeps a lowering
    made by the operator for this channel from being undone by the channel's admins.
    """
    if in_force is None:
        return True
    return usd is not None and usd <= in_force


def month_start(now: float) -> float:
    """The epoch at which ``now``'s calendar month (UTC) began."""
    at = datetime.fromtimestamp(now, tz=timezone.utc)
    return at.replace(day=1, hour=0, minute=0, second=0, microsecond=0).timestamp()

"""The usage ledger, the spend limits set from Slack and the audit trail: rows a team governs by.

``usage``: one row per session's spend as it was reported (a step's result; a reconciliation row
makes a thread's sum equal its manifest's when a row was lost to a kill), with the thread,
channel, person, model and request, so spend can be summed by any of them for any time.
``limits``: a channel's own limit for one scope (``@flower /limit``), over the environment's.
``audit``: who did what, append-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.core.thread import ThreadKey
from bot.store.core import StoreCore

__all__ = ["AuditRow", "LedgerMixin", "UsageRow"]


@dataclass(frozen=True)
class UsageRow:
    """What one session of thread ``thread`` spent (``cost_usd``, ``tokens``) at ``at``, for
    ``user``'s request (begun at ``request``) on ``model``, in step ``step``."""

    thread: ThreadKey
    user: str
    model: str
    request: float
    step: str
    cost_usd: float
    tokens: int
    at: float


@dataclass(frozen=True)
class AuditRow:
    """``user`` did ``action`` in ``thread`` (its channel, or the whole bot) at ``at``; ``detail``
    says with what (a limit, a repository, a pull request's number)."""

    at: float
    user: str
    action: str
    team: str
    channel: str
    thread_ts: str
    detail: str


_USAGE = "team, channel, thread_ts, user_id, model, request, step, cost_usd, tokens, at"


class LedgerMixin(StoreCore):
    """The ledger half of ``BotStore``."""

    async def record_usage(self, row: UsageRow) -> None:
        await self._changed(f"INSERT INTO usage ({_USAGE}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            *row.thread, row.user, row.model, row.request, row.step, row.cost_usd, row.tokens,
                            row.at)

    async def usage_since(self, since: float) -> list[UsageRow]:
        """Every row from ``since`` (epoch) on, oldest first."""
        rows = await self._rows(f"SELECT {_USAGE} FROM usage WHERE at >= ? ORDER BY at, id", since)
        return [UsageRow(ThreadKey(r[0], r[1], r[2]), *r[3:]) for r in rows]

    async def spent(self, since: float, *, team: str | None = None, channel: str | None = None,
                    user: str | None = None, thread: ThreadKey | None = None) -> float:
        """US dollars spent from ``since`` on, in one channel, by one person, in one thread or in all."""
        where, args = ["at >= ?"], [since]
        if thread is not None:
            where.append("team = ? AND channel = ? AND thread_ts = ?")
            args += list(thread)
        if channel is not None:
            where.append("team = ? AND channel = ?")
            args += [team or "", channel]
        if user is not None:
            where.append("user_id = ?")
            args.append(user)
        rows = await self._rows(f"SELECT COALESCE(SUM(cost_usd), 0) FROM usage WHERE {' AND '.join(where)}", *args)
        return float(rows[0][0] or 0.0)

    async def set_limit(self, team: str, channel: str, scope: str, usd: float | None, by: str) -> None:
        """Channel ``channel``'s own limit for ``scope``; None removes it (the default applies again)."""
        if usd is None:
            await self._changed("DELETE FROM limits WHERE team = ? AND channel = ? AND scope = ?", team, channel, scope)
            return
        await self._changed(
            "INSERT INTO limits (team, channel, scope, usd, set_by, at) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (team, channel, scope) DO UPDATE SET usd = excluded.usd, set_by = excluded.set_by, "
            "at = excluded.at", team, channel, scope, usd, by, self._now())

    async def channel_limits(self, team: str, channel: str) -> dict[str, float]:
        """The limits set for ``channel`` from Slack, by scope."""
        rows = await self._rows("SELECT scope, usd FROM limits WHERE team = ? AND channel = ?", team, channel)
        return {r[0]: float(r[1]) for r in rows}

    async def audit(self, user: str, action: str, where: ThreadKey | tuple[str, str, str] | None = None,
                    detail: Any = "") -> None:
        """Append ``user`` did ``action`` (in ``where``: a thread, or ``(team, channel, "")``)."""
        team, channel, thread_ts = where or ("", "", "")
        await self._changed("INSERT INTO audit (at, user_id, action, team, channel, thread_ts, detail) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)", self._now(), user or "", action, team, channel,
                            thread_ts, str(detail)[:2000])

    async def audit_since(self, since: float) -> list[AuditRow]:
        rows = await self._rows("SELECT at, user_id, action, team, channel, thread_ts, detail FROM audit "
                                "WHERE at >= ? ORDER BY at, id", since)
        return [AuditRow(*r) for r in rows]

"""What the bot's runs spend, recorded and capped: the usage ledger as sessions report it, and each
run's guard on the limits (``bot.settings.limits``).

Every session's result (``ResultReported``: cumulative per step) is written to the ledger as the
difference since its last one, with the thread, channel, person, model and request; at a run's
end the thread's ledger is made equal to its manifest (a row lost to a kill comes back as one
reconciling row). The sums by channel, person and month are kept here as the rows are added, so
the guard a run's runtime asks at every message (``engine.host.SpendGuard``) needs no database:
each run reads them from the ledger when it starts (another replica's spend included) and adds
what this process has spent since. A step stops at the message after the one that crossed a
limit; the run then ends paused (``Limited``) and says which limit, how much, and who may raise it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from bot.core.thread import ThreadKey
from bot.ops.metrics import Metrics
from bot.settings.config import Config
from bot.settings.limits import INSTALLATION, NEAR, Limits, Scope, month_start
from bot.store.bot_store import BotStore, UsageRow
from engine import Event
from engine.events import ResultReported

log = logging.getLogger(__name__)

__all__ = ["Reached", "RunSpend", "SpendBook", "installation_admins", "limit_admins"]

ScopeKey = tuple[str, ...]


def month_keys(key: ThreadKey, user: str) -> dict[Scope, ScopeKey]:
    """Where a thread's spend counts in this month's sums: its channel, its person, the whole bot."""
    return {"channel": ("channel", key.team, key.channel), "user": ("user", user), "month": ("month",)}


@dataclass(frozen=True)
class Reached:
    """Limit ``limit`` of ``scope`` is reached: ``spent`` there so far."""

    scope: Scope
    limit: float
    spent: float


@dataclass
class RunSpend:
    """One run's spend: the guard its runtime asks, and the ledger rows its events make.

    ``before`` is what the run's request and thread spent before it (the engine's totals);
    ``recorded`` what this run has written to the ledger; ``reached`` the limit that stopped it;
    ``near`` the last limit 80 % spent (the status line says so)."""

    book: SpendBook
    key: ThreadKey
    user: str
    request: float  # when the request began: the ledger's request column
    limits: Limits
    before: dict[str, float]
    recorded: float = 0.0
    reached: Reached | None = None
    near: Reached | None = None
    warned: set[str] = field(default_factory=set)
    _last: dict[str, float] = field(default_factory=dict)  # per step label: its cumulative cost seen

    def spent_in(self, scope: Scope, spent: float) -> float:
        """What ``scope`` has spent, with this run's ``spent`` (its runtime's total, estimate included)."""
        if scope in ("request", "thread"):
            return self.before[scope] + spent
        return self.book.sum(month_keys(self.key, self.user)[scope]) + max(0.0, spent - self.recorded)

    def guard(self, spent: float) -> str | None:
        """The runtime's question at every message and before every step: a reason to stop, or None."""
        for scope, limit in self.limits.items():
            now = self.spent_in(scope, spent)
            if now >= limit:
                self.reached = Reached(scope, limit, now)
                return f"spend limit: {scope} ${limit:.2f} reached (${now:.2f} spent)"
            if now >= NEAR * limit and scope not in self.warned:
                self.warned.add(scope)
                self.near = Reached(scope, limit, now)
        return None

    def event(self, event: Event) -> None:
        """A session's result: the ledger gets what it added (recorded off the event loop's path)."""
        if not isinstance(event, ResultReported):
            return
        last = self._last.get(event.step, 0.0)
        delta = event.cost_usd - last if event.cost_usd >= last else event.cost_usd  # a new StepResult
        self._last[event.step] = event.cost_usd
        if delta <= 0 and not event.tokens:
            return
        self.recorded += delta
        self.book.add(UsageRow(self.key, self.user, event.model, self.request, event.step, delta, event.tokens,
                               time.time()))


class SpendBook:
    """The ledger's sums this process keeps by channel, person and the whole installation (this
    month), and the writes of new rows, in order."""

    def __init__(self, store: BotStore, config: Config, metrics: Metrics) -> None:
        self.store, self.config, self.metrics = store, config, metrics
        self._sums: dict[ScopeKey, float] = {}
        self._unsaved: dict[ScopeKey, float] = {}  # added here, not in the ledger yet
        self._month = 0.0
        self._writes: asyncio.Queue[UsageRow] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None  # started with the first row, ended by close()

    async def limits(self, key: ThreadKey) -> Limits:
        """The limits in ``key``'s channel: its policy's (or the settings'), with those set from
        Slack (``@flower /limit``) over them."""
        return self.config.for_channel(key.channel).limits.over(await self.store.channel_limits(key.team, key.channel))

    async def open(self, key: ThreadKey, user: str, *, request: float, request_spent: float,
                   thread_spent: float) -> RunSpend:
        """A run's spend: the month's sums read from the ledger now (other replicas' too)."""
        since = month_start(time.time())
        self._month = since
        where = {"channel": {"team": key.team, "channel": key.channel}, "user": {"user": user}, "month": {}}
        for scope, scope_key in month_keys(key, user).items():
            self._sums[scope_key] = await self.store.spent(since, **where[scope]) + self._unsaved.get(scope_key, 0.0)
        return RunSpend(self, key, user, request, await self.limits(key),
                        {"request": request_spent, "thread": thread_spent})

    def sum(self, scope_key: ScopeKey) -> float:
        return self._sums.get(scope_key, 0.0)

    def add(self, row: UsageRow) -> None:
        """Count ``row`` now, write it soon (in order, off the runtime's call)."""
        for scope_key in self._keys(row):
            self._sums[scope_key] = self._sums.get(scope_key, 0.0) + row.cost_usd
            self._unsaved[scope_key] = self._unsaved.get(scope_key, 0.0) + row.cost_usd
        if row.cost_usd > 0:
            self.metrics.cost.labels(row.thread.channel, row.model or "unknown").inc(row.cost_usd)
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write(), name="flower-ledger")
        self._writes.put_nowait(row)

    async def flush(self) -> None:
        """Every row added so far is in the ledger (or logged as refused)."""
        await self._writes.join()

    async def close(self) -> None:
        """Write what is queued, then stop the writer (the bot is closing)."""
        if self._writer is not None:
            await self.flush()
            self._writer.cancel()
            await asyncio.gather(self._writer, return_exceptions=True)
            self._writer = None

    async def reconcile(self, key: ThreadKey, user: str, request: float, manifest_total: float) -> None:
        """Make ``key``'s ledger sum its manifest's (a row lost to a kill, sessions from before the ledger)."""
        await self.flush()
        missing = manifest_total - await self.store.spent(0.0, thread=key)
        if abs(missing) > 1e-6:
            log.info("ledger of thread %s reconciled with its manifest: %+.6f USD", key.thread_ts, missing)
            self.add(UsageRow(key, user, "", request, "reconciled", missing, 0, time.time()))
            await self.flush()

    async def _write(self) -> None:
        while True:
            row = await self._writes.get()
            try:
                await self.store.record_usage(row)
            except Exception:  # the ledger is an account, not the run: logged, and the manifest keeps it
                log.exception("could not record %.6f USD of thread %s in the ledger", row.cost_usd,
                              row.thread.thread_ts)
            finally:
                for scope_key in self._keys(row):
                    self._unsaved[scope_key] = self._unsaved.get(scope_key, 0.0) - row.cost_usd
                self._writes.task_done()

    def _keys(self, row: UsageRow) -> list[ScopeKey]:
        return [] if row.at < self._month else list(month_keys(row.thread, row.user).values())


def installation_admins(config: Config) -> frozenset[str]:
    """Who governs the whole installation from Slack: ``FLOWER_ADMINS`` and the policy's
    ``[defaults]`` admins, never a channel's own (``[channel.C…] admins``)."""
    return config.admins | (config.policy.defaults().admins if config.policy is not None else frozenset())


def limit_admins(config: Config, channel: str, scope: str) -> frozenset[str]:
    """Who may set ``scope``'s limit in ``channel`` to any value (the pause names them): the
    installation's admins, and for a scope of the channel's own (``request``, ``thread``,
    ``channel``) its admins too."""
    everywhere = installation_admins(config)
    return everywhere if scope in INSTALLATION else everywhere | config.for_channel(channel).admins

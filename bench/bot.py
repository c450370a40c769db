"""The Slack bot under load (issues 5 and 6): ack latency, first reply, event-loop lag, memory.

Everything runs in this process: the fake Slack (``bot.testing.FakeSlack``), the offline model
(``engine.testing.FakeModel``, in its own thread) and the bot itself (``start_bot``, Socket Mode
against the fake), so the fake's websocket shares the bot's event loop, as a real Slack's
socket would not (its share of each latency is small: one frame each way on 127.0.0.1).

Load points (default 0, 20 and 50 runs in progress): each run is a real mention whose clarifier
request the offline model holds (``hold()``), so its CLI stays alive, waiting on the model. At
each point, in one run, side by side:

- ack latency: from the fake sending an envelope to the bot's ack (``Ack.latency_s``), over 50
  mentions in new threads and 150 replies in those threads (3 each), sent one after another;
- first reply: from the fake sending a mention to the first ``chat.postMessage`` in its thread
  (the acceptance reply, posted after the reaction), the same 50 mentions;
- event-loop lag: a task in the bot's loop sleeps 10 ms again and again; the overshoot, while
  the probes run ("busy"), for 2 s with nothing sent ("quiet"), and while the runs start;
- resident memory: RSS of this process plus its direct children (the CLIs), read once the runs
  are all waiting; per waiting run = (RSS at N runs - RSS at 0) / N. The CLIs' PSS too: summed
  RSS counts their shared pages (one executable) once per CLI, PSS does not.

The probe mentions must not start CLIs of their own (50 of them would swamp two cores and blur
what the N waiting runs cost), so the bench keeps every free run slot taken: probe runs queue
("Queued: ..." after the acceptance reply) and are stopped after the point. That pokes the bot's
private slot semaphore (``Jobs._slots``): the one thing here not done through Slack.
Targets (at 20 runs): ack p99 < 100 ms, first reply p99 < 1 s, event-loop lag p99 < 50 ms.

Every point is measured twice, side by side, with a fresh bot each: as ``flower-bot`` runs
(``settle_gc``: what exists once connected is frozen out of the garbage collector's view; at most
``START_AT_ONCE`` CLIs starting at once, ``bot.runs.start_gate``) and as the bot was before those two
(the interpreter's default collector, every run's CLI started at once); the report compares them.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import load_average, print_machine, table
from bench.runtime import _children, _rss

CHANNEL = "C0GENERAL"
CLARIFIER_MARK = "你只负责确认需求"  # the clarifier's system prompt (tests/bot/runs/test_app_e2e.py)
TARGET_ACK_S = 0.100
TARGET_REPLY_S = 1.0
TARGET_LAG_S = 0.050
TICK_S = 0.010
QUIET_S = 2.0
START_TIMEOUT_S = 180.0


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile ``q`` (0-1) of ``values``; with 50 values p99 is the maximum."""
    ranked = sorted(values)
    return ranked[max(0, min(len(ranked) - 1, math.ceil(q * len(ranked)) - 1))]


class LagProbe:
    """A task in the loop that sleeps ``TICK_S`` repeatedly and records how late it wakes."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._tick(), name="bench-lag-probe")

    async def _tick(self) -> None:
        while True:
            t0 = time.perf_counter()
            await asyncio.sleep(TICK_S)
            self.samples.append(time.perf_counter() - t0 - TICK_S)

    def mark(self) -> int:
        # the sleep in flight began before now (maybe during a blocking memory reading): skip it
        return len(self.samples) + 1

    def since(self, mark: int) -> list[float]:
        return self.samples[mark:] or [0.0]

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


class GcPauses:
    """Full (generation 2) garbage collections and how long each stopped the world (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.pauses: list[float] = []
        self._t0 = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.pauses.append(time.perf_counter() - self._t0)

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


@dataclass
class Point:
    """What one load point measured (seconds and bytes)."""

    runs: int
    acks: list[float] = field(default_factory=list)
    replies: list[float] = field(default_factory=list)
    lag_busy: list[float] = field(default_factory=list)
    lag_quiet: list[float] = field(default_factory=list)
    lag_start: list[float] = field(default_factory=list)
    start_s: float = 0.0
    gc_full: list[float] = field(default_factory=list)
    rss_self: int = 0
    rss_children: int = 0
    pss_children: int = 0
    children: int = 0


def _memory() -> tuple[int, int, int, int]:
    """RSS of this process; summed RSS and PSS of its direct children (the CLIs); how many.

    RSS counts the pages the CLIs share (the same executable mapped by each) once per process;
    PSS splits them among the sharers, so its sum is what the CLIs really take (0 without psutil).
    """
    me = os.getpid()
    kids = _children(me)
    return _rss(me), sum(_rss(k) for k in kids), sum(_pss(k) for k in kids), len(kids)


def _pss(pid: int) -> int:
    """Proportional set size of ``pid`` (Linux, psutil); 0 when unavailable or the process ended."""
    try:
        import psutil

        return getattr(psutil.Process(pid).memory_full_info(), "pss", 0)
    except Exception:  # no psutil, not Linux, or the process exited: the PSS column shows 0
        return 0


async def _wait(check: Any, *, timeout: float, what: str) -> None:
    """Poll ``check`` (the held list lives in the model's thread: no event to wait on) until true."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"bench bot: {what} did not happen within {timeout:.0f} s; "
                               "the machine may be too busy, or the bot failed (see the log above)")
        await asyncio.sleep(0.05)


async def _probe(slack: Any, bot: Any, point: Point, lag: LagProbe, *, mentions: int, replies: int) -> None:
    """Send the probe mentions (first reply measured), then replies in their threads; stop their runs."""
    from bot.core.thread import ThreadKey
    mark, threads = lag.mark(), []
    for i in range(mentions):
        event = slack.mention(CHANNEL, f"[bench probe {point.runs}-{i}] write hello.txt")
        eid = await slack.send_event(event)
        sent = slack.socket.envelopes[eid].sent_at
        await slack.wait_for("chat.postMessage", thread_ts=event["ts"], timeout=30)
        point.replies.append(time.perf_counter() - sent)
        point.acks.append((await slack.wait_ack(eid, timeout=30)).latency_s)
        threads.append(event["ts"])
    for i in range(replies):
        ts = threads[i % len(threads)]
        eid = await slack.send_event(slack.user_message(CHANNEL, f"also note {i}", thread_ts=ts))
        point.acks.append((await slack.wait_ack(eid, timeout=30)).latency_s)
    point.lag_busy = lag.since(mark)
    keys = [ThreadKey(slack.workspace.team_id, CHANNEL, ts) for ts in threads]
    await asyncio.gather(*(bot.jobs.stop(k) for k in keys))  # queued runs: cancelled, never started


async def _bench(points: list[int], mentions: int, replies: int, *, shipped: bool) -> list[Point]:
    """Every point with one bot; this process's environment and collector are restored afterwards."""
    saved = dict(os.environ)
    try:
        return await _measure(points, mentions, replies, shipped=shipped)
    finally:
        os.environ.clear()
        os.environ.update(saved)  # the offline settings were for this benchmark only
        gc.unfreeze()


async def _measure(points: list[int], mentions: int, replies: int, *, shipped: bool) -> list[Point]:
    from bot.main import start_bot
    from bot.runs.jobs import BotOptions
    from bot.settings.config import load_config
    from bot.testing import FakeSlack
    from engine.testing import FakeModel, hold, system_contains, text

    max_runs = max(points) + 5
    held = hold()
    got: list[Point] = []
    with tempfile.TemporaryDirectory(prefix="bench-bot-") as tmp, FakeModel() as fm:
        for name in [n for n in os.environ if n.startswith(("ANTHROPIC_", "CLAUDE", "FLOWER_", "SLACK_"))]:
            del os.environ[name]  # nothing from the shell (a real key, a base URL) reaches the CLIs
        os.environ.update(fm.offline_env(Path(tmp) / "claude-config"))  # the Runtime reads it here
        fm.rule(text("## 目标\n写 hello.txt", fault=held), when=system_contains(CLARIFIER_MARK),
                repeat_last=True)
        fm.fallback(text("ok"))  # anything else the CLI asks on the side
        async with FakeSlack() as slack:
            # the offline model's settings (os.environ now) reach the CLIs through the agent environment
            env = {**os.environ, **slack.env(), "FLOWER_HOME": str(Path(tmp) / "home"),
                   "FLOWER_MAX_RUNS": str(max_runs),
                   "FLOWER_LANGUAGE": "zh"}  # CLARIFIER_MARK is the zh clarifier's prompt (the bot speaks en by default)
            options = BotOptions(flow={"clarify_only": True}, **({} if shipped else {"start_at_once": None}))
            bot = await start_bot(load_config(env, dotenv=None), options=options, resume=False,
                                  settle_gc=shipped)
            lag, pauses = LagProbe(), GcPauses()
            try:
                await slack.wait_connected()
                lag.start()
                slots = bot.jobs._slots  # private: see the module docstring
                for _ in range(max_runs):
                    await slots.acquire()
                warm = Point(-1)
                await _probe(slack, bot, warm, lag, mentions=3, replies=3)  # first-call costs, not counted
                running = 0
                for n in sorted(points):
                    point = Point(n)
                    mark, t0, gcs = lag.mark(), time.perf_counter(), len(pauses.pauses)
                    for i in range(running, n):
                        slots.release()
                        await slack.send_event(slack.mention(CHANNEL, f"[bench run {i}] write hello.txt"))
                    await _wait(lambda: len(held.held) >= n, timeout=START_TIMEOUT_S,
                                what=f"{n} clarifier requests held")
                    running = n
                    point.start_s, point.lag_start = time.perf_counter() - t0, lag.since(mark)
                    mark = lag.mark()
                    await asyncio.sleep(QUIET_S)  # the runs settle; lag with nothing sent
                    point.lag_quiet = lag.since(mark)
                    point.rss_self, point.rss_children, point.pss_children, point.children = _memory()
                    with pauses:
                        await _probe(slack, bot, point, lag, mentions=mentions, replies=replies)
                    point.gc_full = pauses.pauses[gcs:]
                    got.append(point)
                    print(f"  bot ({'as shipped' if shipped else 'before'}): {n} runs in progress measured",
                          flush=True)
            finally:
                await lag.stop()
                try:  # cancels the held runs; their CLIs are closed by the SDK
                    await asyncio.wait_for(bot.close(), 60)
                except TimeoutError:
                    print("  bot: close() took over 60 s; killing the CLIs left", flush=True)
                held.release()
        await _reap()
    return got


async def _reap() -> None:
    """Wait for every child this process started to end; kill (by pid) any left after 10 s."""
    deadline = time.monotonic() + 10
    while _children(os.getpid()) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    for pid in _children(os.getpid()):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass  # it ended between the listing and the kill


def _ms(v: float) -> str:
    return f"{v * 1000:.1f}"


def _report(got: list[Point]) -> str:
    base, rows = got[0], []

    def line(label: str, fn: Any, fmt: Any = _ms, target: str = "", limit: float | None = None,
             *, at_zero: bool = True) -> None:
        vals = [fn(p) for p in got]
        ratios = [f"{v / fn(base):.2f}x" if at_zero and fn(base) else "-" for v in vals[1:]]
        verdict = ""
        if limit is not None:
            verdict = " / ".join("met" if v < limit else "**MISSED**" for v in vals[1:])
        shown = [fmt(v) if at_zero or p.runs else "-" for p, v in zip(got, vals)]
        rows.append([label, *shown, *ratios, target, verdict])

    line("ack p50 (ms)", lambda p: pct(p.acks, 0.5))
    line("ack p99 (ms)", lambda p: pct(p.acks, 0.99), target="< 100 ms", limit=TARGET_ACK_S)
    line("ack max (ms)", lambda p: max(p.acks))
    line("first reply p50 (ms)", lambda p: pct(p.replies, 0.5))
    line("first reply p99 (ms)", lambda p: pct(p.replies, 0.99), target="< 1 s", limit=TARGET_REPLY_S)
    line("loop lag p50, probes (ms)", lambda p: pct(p.lag_busy, 0.5))
    line("loop lag p99, probes (ms)", lambda p: pct(p.lag_busy, 0.99), target="< 50 ms", limit=TARGET_LAG_S)
    line("loop lag p50, quiet (ms)", lambda p: pct(p.lag_quiet, 0.5))
    line("loop lag p99, quiet (ms)", lambda p: pct(p.lag_quiet, 0.99), target="< 50 ms", limit=TARGET_LAG_S)
    line("loop lag p99, runs starting (ms)", lambda p: pct(p.lag_start, 0.99), at_zero=False)
    line("loop lag max, runs starting (ms)", lambda p: max(p.lag_start), at_zero=False)
    line("full GCs during the probes", lambda p: len(p.gc_full), fmt=str)
    line("longest full GC during the probes (ms)", lambda p: max(p.gc_full, default=0.0))
    line("time to start the runs (s)", lambda p: p.start_s, fmt=lambda v: f"{v:.1f}", at_zero=False)
    line("CLI children", lambda p: p.children, fmt=str)
    line("RSS this process (MiB)", lambda p: p.rss_self, fmt=lambda v: f"{v / 2**20:.0f}")
    line("RSS CLI children (MiB)", lambda p: p.rss_children, fmt=lambda v: f"{v / 2**20:.0f}")
    line("RSS total (MiB)", lambda p: p.rss_self + p.rss_children, fmt=lambda v: f"{v / 2**20:.0f}")
    line("PSS CLI children (MiB)", lambda p: p.pss_children, fmt=lambda v: f"{v / 2**20:.0f}")
    heads = ["figure", *(f"{p.runs} runs" for p in got), *(f"{p.runs}/{base.runs}" for p in got[1:]),
             "target", "verdict"]
    def each(p: Point, n_bytes: float) -> str:
        return f"{n_bytes / p.runs / 2**20:.1f}"

    per = [[f"{p.runs} runs", each(p, p.rss_self - base.rss_self), each(p, p.rss_children - base.rss_children),
            each(p, p.rss_self + p.rss_children - base.rss_self - base.rss_children),
            each(p, p.pss_children - base.pss_children),
            each(p, p.rss_self + p.pss_children - base.rss_self - base.pss_children)]
           for p in got[1:] if p.runs]
    counts = (f"{len(base.acks)} acks and {len(base.replies)} first replies a point; "
              f"lag samples (10 ms sleeps): {', '.join(str(len(p.lag_busy)) for p in got)} during the probes")
    return "\n\n".join([
        counts,
        table(heads, rows),
        "Memory per waiting run, (RSS at N - RSS at 0) / N (MiB)",
        table(["point", "this process", "CLI children (RSS)", "total (RSS)", "CLI children (PSS)",
               "total (PSS)"], per),
    ])


def _compare(shipped: list[Point], before: list[Point]) -> str:
    """The figures the collector and the start gate move, as shipped next to before, and their ratio."""
    def seconds(v: float) -> str:
        return f"{v:.1f}"

    figures = [
        ("ack p99 (ms)", lambda p: pct(p.acks, 0.99), _ms),
        ("first reply p99 (ms)", lambda p: pct(p.replies, 0.99), _ms),
        ("loop lag p99, probes (ms)", lambda p: pct(p.lag_busy, 0.99), _ms),
        ("loop lag p99, runs starting (ms)", lambda p: pct(p.lag_start, 0.99), _ms),
        ("loop lag max, runs starting (ms)", lambda p: max(p.lag_start), _ms),
        ("time to start the runs (s)", lambda p: p.start_s, seconds),
        ("longest full GC during the probes (ms)", lambda p: max(p.gc_full, default=0.0), _ms),
    ]
    rows = []
    for a, b in zip(shipped, before):
        for label, fn, shown in figures:
            x, y = fn(a), fn(b)
            rows.append([f"{a.runs} runs", label, shown(x), shown(y), f"{x / y:.2f}x" if y else "-"])
    return table(["point", "figure", "as shipped", "before", "shipped/before"], rows)


def run(points: tuple[int, ...] = (0, 20, 50), mentions: int = 50, replies: int = 150) -> str:
    """Measure each load point twice in one process: as shipped, then as the bot was before."""
    pts = sorted({0, *points})
    shipped = asyncio.run(_bench(pts, mentions, replies, shipped=True))
    before = asyncio.run(_bench(pts, mentions, replies, shipped=False))
    return "\n\n".join(["As `flower-bot` runs (settled gc, start gate)", _report(shipped),
                        "As shipped against before (default gc, no start gate), same points",
                        _compare(shipped, before)])


def main(argv: list[str] | None = None) -> int:
    """``python -m bench bot [--runs 0,20] [--mentions 50] [--replies 150]``."""
    parser = argparse.ArgumentParser(prog="python -m bench bot", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", default="0,20,50",
                        help="runs in progress at each point (default 0,20,50)")
    parser.add_argument("--mentions", type=int, default=50, help="probe mentions a point (default 50)")
    parser.add_argument("--replies", type=int, default=150, help="probe replies a point (default 150)")
    args = parser.parse_args(argv)
    points = tuple(int(x) for x in args.runs.split(",") if x.strip())
    started = time.perf_counter()
    print_machine()  # a standalone run is a RESULTS.md section of its own: say where it ran
    print(run(points, max(1, args.mentions), max(0, args.replies)))
    print(f"\n(bench bot: {time.perf_counter() - started:.0f} s; load average at the end: {load_average()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``FLOWER_METRICS_PORT``: the operator's endpoint, on its own port (never Slack's).

``/metrics`` serves ``bot.metrics`` in Prometheus's text format, with the runs by state, the
queue and the waiting questions read from the bot at each scrape; ``/healthz`` answers 200 while
the process serves; ``/readyz`` 200 only while the bot is connected to Slack and its store
answers, else 503 saying which is not (a load balancer or compose's healthcheck uses it).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bot.metrics import Metrics
from bot.records import THREAD_STATES
from bot.runs.jobs import Jobs
from bot.store.factory import AnyBotStore

log = logging.getLogger(__name__)

__all__ = ["health_app"]


def health_app(metrics: Metrics, store: AnyBotStore, jobs: Jobs,
               slack_ready: Callable[[], Awaitable[bool]]) -> web.Application:
    """The endpoint's aiohttp application."""

    async def scrape(_: web.Request) -> web.Response:
        counts = await store.thread_counts()
        for state in sorted(THREAD_STATES):
            metrics.runs.labels(state).set(counts.get(state, 0))
        metrics.queue.set(jobs.queued())
        metrics.questions.set(await store.questions_waiting())
        return web.Response(body=generate_latest(metrics.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def readyz(_: web.Request) -> web.Response:
        problems = []
        if not await slack_ready():
            problems.append("not connected to Slack")
        try:
            await store.thread_counts()
        except Exception as exc:  # any failure means not ready; the reason is the answer
            problems.append(f"the store does not answer ({type(exc).__name__}: {exc})")
        if problems:
            return web.Response(status=503, text="not ready: " + "; ".join(problems) + "\n")
        return web.Response(text="ready\n")

    app = web.Application()
    app.add_routes([web.get("/metrics", scrape), web.get("/healthz", healthz), web.get("/readyz", readyz)])
    return app

"""``FLOWER_METRICS_PORT``: the operator's endpoint, on its own port (never Slack's).

``/metrics`` serves ``bot.ops.metrics`` in Prometheus's text format, with the runs by state, the
queue and the waiting questions read from the bot at each scrape; ``/healthz`` answers 200 while
the process serves; ``/readyz`` 200 only while the bot is connected to Slack and its store
answers, else 503 naming which is not (a load balancer or compose's healthcheck uses it).

The endpoint shows spend by channel and Slack's refusals, so it is private by default: it listens
on ``FLOWER_METRICS_HOST`` (loopback unless the operator says otherwise) and, with
``FLOWER_METRICS_TOKEN``, answers only a request bearing that token. What ``/readyz`` says names a
dependency, never an exception's text (which could carry a host, a user or worse).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable
from ipaddress import ip_address

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bot.core.thread import THREAD_STATES
from bot.ops.metrics import Metrics
from bot.store.factory import AnyBotStore

log = logging.getLogger(__name__)

__all__ = ["authorized", "exposed", "health_app"]

SLACK_DOWN = "slack: not connected"
STORE_DOWN = "store: not answering"
_REFUSED = "unauthorized: send the header Authorization: Bearer <FLOWER_METRICS_TOKEN>\n"


def exposed(host: str, token: str) -> bool:
    """True when an endpoint on ``host`` is reachable from other machines and asks no token."""
    return not token and host != "localhost" and not ip_address(host).is_loopback


def authorized(header: str, token: str) -> bool:
    """True when ``header`` (an ``Authorization`` value) is ``Bearer <token>``; compared in constant
    time, so a wrong guess says nothing about how much of it was right."""
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not given.strip().isascii():
        return False
    return hmac.compare_digest(given.strip().encode("ascii"), token.encode("ascii"))


def health_app(metrics: Metrics, store: AnyBotStore, queued: Callable[[], int],
               slack_ready: Callable[[], Awaitable[bool]], *, token: str = "") -> web.Application:
    """The endpoint's aiohttp application; with ``token``, every path answers 401 without it."""

    @web.middleware
    async def bearer(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                     ) -> web.StreamResponse:
        if token and not authorized(request.headers.get("Authorization", ""), token):
            return web.Response(status=401, text=_REFUSED, headers={"WWW-Authenticate": 'Bearer realm="flower"'})
        return await handler(request)

    async def scrape(_: web.Request) -> web.Response:
        counts = await store.thread_counts()
        for state in sorted(THREAD_STATES):
            metrics.runs.labels(state).set(counts.get(state, 0))
        metrics.queue.set(queued())
        metrics.questions.set(await store.questions_waiting())
        return web.Response(body=generate_latest(metrics.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    said = ""  # the problems last logged: a poller every few seconds logs each change once

    async def readyz(_: web.Request) -> web.Response:
        nonlocal said
        problems, why = [], ""
        if not await slack_ready():
            problems.append(SLACK_DOWN)
        try:
            await store.thread_counts()
        except Exception as exc:  # any failure means not ready; the answer names the store, the log says more
            problems.append(STORE_DOWN)
            # the type alone: a StoreError names the database by its URL, whose password is masked
            # only in the user part (``?password=`` stays), and a driver's text could hold anything
            why = f" ({type(exc).__name__})"
        reason = "; ".join(problems)
        if reason != said:
            said = reason
            if reason:
                log.warning("not ready: %s%s", reason, why)
            else:
                log.info("ready again")
        if problems:
            return web.Response(status=503, text=f"not ready: {reason}\n")
        return web.Response(text="ready\n")

    app = web.Application(middlewares=[bearer])
    app.add_routes([web.get("/metrics", scrape), web.get("/healthz", healthz), web.get("/readyz", readyz)])
    return app

"""What an operator watches: the bot's Prometheus metrics, one registry per bot (``prometheus_client``).

Counters are this process's (Prometheus copes with a restart's reset); the gauges of runs,
queue and waiting questions are read from the bot when ``/metrics`` is scraped
(``bot.ops.health``). The Web API client is measured by ``MeasuredWebClient``: every call's latency
by method, and every refusal by method and Slack's error.
"""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

__all__ = ["Metrics", "MeasuredWebClient"]


class Metrics:
    """The bot's metrics, in a registry of their own (several bots may share a test process)."""

    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.runs = Gauge("flower_runs", "Threads by the state of their run", ["state"], registry=r)
        self.queue = Gauge("flower_queue_length", "Runs waiting for a slot", registry=r)
        self.questions = Gauge("flower_questions_waiting", "Questions waiting for a person", registry=r)
        self.cost = Counter("flower_cost_usd", "US dollars spent by the runs' sessions", ["channel", "model"],
                            registry=r)
        self.limit_pauses = Counter("flower_limit_pauses", "Runs paused at a spend limit", ["scope"], registry=r)
        self.errors = Counter("flower_errors", "Runs that failed, by kind", ["kind"], registry=r)
        self.slack_seconds = Histogram("flower_slack_api_seconds", "Slack Web API call latency", ["method"],
                                       registry=r, buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
        self.slack_refusals = Counter("flower_slack_api_refusals", "Slack Web API calls refused",
                                      ["method", "error"], registry=r)
        self.model_retries = Counter("flower_model_api_retries", "Model API calls retried after an error",
                                     ["failure"], registry=r)
        self.takeovers = Counter("flower_replica_takeovers", "Threads taken over from a replica that died",
                                 registry=r)


class MeasuredWebClient(AsyncWebClient):
    """The Web API client, timing every call and counting every refusal in ``metrics``."""

    def __init__(self, *args: Any, metrics: Metrics, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.metrics = metrics

    async def api_call(self, api_method: str, **kwargs: Any) -> Any:  # type: ignore[override]
        began = time.monotonic()
        try:
            return await super().api_call(api_method, **kwargs)
        except SlackApiError as exc:
            self.metrics.slack_refusals.labels(api_method, str(exc.response.get("error") or "unknown")).inc()
            raise
        finally:
            self.metrics.slack_seconds.labels(api_method).observe(time.monotonic() - began)

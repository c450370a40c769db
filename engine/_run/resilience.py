"""Resilience: tell failures to wait out from failures to stop on, and wait for the network.

A run of several hours loses the network at some point. The engine then hangs on, probing the
model endpoint with DNS + TCP only (no HTTP, no credentials, no cost), and resumes the same
session with a prompt that carries no error detail: the model needs to know "you were
interrupted, continue", not whether it was ENOTFOUND or a 503.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from engine._events import FailureKind

FatalCause = Literal["auth", "billing", "forbidden", "model", "cli", "spend"]

DEFAULT_BASE_URL = "https://api.anthropic.com"


# Checked BEFORE the transient patterns: a 401 text often contains the word "connection", and
# with the order reversed the run would wait forever for a key that will never work.
_FATAL = re.compile(
    r"authentication|unauthori[sz]ed|\b401\b|\b403\b|forbidden|invalid[ _-]?api[ _-]?key|"
    r"invalid x-api-key|permission[ _-]denied|billing|credit balance|insufficient[ _-]quota|"
    r"model.{0,40}not[ _-]found|not_found_error|invalid_request|\b400\b|bad request|"
    r"oauth token|account.{0,30}(disabled|suspended)|CLINotFoundError|Claude Code (CLI )?not found|"
    r"issue with the selected model|model_not_found|authentication_failed|billing_error|spend_limit",
    re.IGNORECASE,
)
_TRANSIENT = re.compile(
    r"overloaded|\b529\b|\b503\b|\b502\b|\b504\b|\b500\b|\b429\b|rate[ _-]?limit|too many requests|"
    r"server[ _-]error|api_error|internal server|bad gateway|service unavailable|gateway timeout|"
    r"timed? ?out|timeout|connection|connect|network|socket|ECONNRESET|ECONNREFUSED|ENOTFOUND|"
    r"EAI_AGAIN|ETIMEDOUT|EPIPE|fetch failed|can't reach|cannot reach|unreachable|"
    r"stream (?:ended|closed|error)|premature|terminated|dns",
    re.IGNORECASE,
)


# Which fatal cause an error names, so a front end can say the fix; the first that matches wins.
_CAUSES: tuple[tuple[re.Pattern[str], FatalCause], ...] = (
    (re.compile(r"^spend_limit\b"), "spend"),  # a front end's limit (engine._run.spend); its kind leads
    (re.compile(r"authentication|\b401\b|invalid (x-)?api[ -]?key|oauth token", re.I), "auth"),
    (re.compile(r"billing|credit balance|insufficient[ _-]quota", re.I), "billing"),
    (re.compile(r"\b403\b|forbidden|permission[ _-]denied", re.I), "forbidden"),
    (re.compile(r"model.{0,60}(not[ _-]found|does not exist|unknown|invalid)|not_found_error|"
                r"(unknown|invalid) model", re.I), "model"),
    (re.compile(r"CLINotFound|Claude Code (CLI )?not found|CLIConnectionError", re.I), "cli"),
)


def fatal_cause(text: str) -> FatalCause | None:
    """The cause an error text (``failure_text``) names: a refused key, no credit, no access, an
    unknown model, no Claude Code; None for anything else."""
    return next((cause for pattern, cause in _CAUSES if pattern.search(text or "")), None)


def failure_text(error: str | None, kind: str | None) -> str:
    """What to classify for a failed attempt: the error's kind (the API's code, such as
    ``model_not_found``) and its text, since the kind names what the text may not."""
    return f"{kind or ''} {error or ''}".strip()


def classify(text: str) -> FailureKind:
    """Classify an error text: ``"fatal"`` (stop), ``"transient"`` (wait, retry), or ``"unknown"``.

    Fatal patterns are tested first (see ``_FATAL``). Empty text is ``"unknown"``.
    """
    if not text:
        return "unknown"
    if _FATAL.search(text):
        return "fatal"
    if _TRANSIENT.search(text):
        return "transient"
    return "unknown"


def endpoint(base_url: str | None = None) -> tuple[str, int]:
    """The (host, port) to probe: ``ANTHROPIC_BASE_URL`` or the public API; 443, or 80 for http.

    With a gateway of your own the gateway must be probed: api.anthropic.com being reachable
    says nothing about it.
    """
    url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
    parts = urlsplit(url if "://" in url else f"https://{url}")
    port = parts.port or (80 if parts.scheme == "http" else 443)
    return parts.hostname or "api.anthropic.com", port


def reachable(host: str, port: int, timeout: float = 5.0) -> bool:
    """DNS lookup plus one TCP handshake; any exception means unreachable. Sends no bytes."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        family, socktype, proto, _, addr = infos[0]
        with socket.socket(family, socktype, proto) as s:
            s.settimeout(timeout)
            s.connect(addr)
        return True
    except Exception:  # the probe's whole contract: every failure is "unreachable"
        return False


@dataclass
class Resilience:
    """Retry policy for one step: attempts, backoff with jitter, and waiting for the network.

    ``max_attempts`` counts the first attempt. The backoff for attempt n (1-based) is
    ``min(base_delay * 2**(n-1), max_delay)`` times a jitter of ±25%. ``wait_online`` probes
    every ``probe_interval`` seconds for at most ``max_offline_wait`` seconds.

    ``wait_out_storms`` (off by default, as the spec has it; the Slack bot turns it on): a
    transient failure past ``max_attempts`` does not end the step; it is tried again every
    ``max_delay`` seconds for as long as it takes (``WaitingForApi`` says so once, and again
    when the API answers).
    """

    enabled: bool = True
    max_attempts: int = 6
    base_delay: float = 4.0
    max_delay: float = 120.0
    probe_timeout: float = 5.0
    probe_interval: float = 15.0
    max_offline_wait: float = 3600.0
    retry_unknown: bool = True
    resume_prompt: str = ""  # "": the language in effect's RESUME_PROMPT (engine._lang)
    wait_out_storms: bool = False

    def classify(self, text: str) -> FailureKind:
        """See the module-level ``classify``."""
        return classify(text)

    def should_retry(self, text: str) -> bool:
        """Retry transient failures, and unknown ones when ``retry_unknown``; never fatal ones."""
        kind = classify(text)
        return kind == "transient" or (kind == "unknown" and self.retry_unknown)

    def delay_for(self, attempt: int) -> float:
        """Seconds to sleep after failed attempt number ``attempt`` (1-based)."""
        base = min(self.base_delay * 2 ** max(0, attempt - 1), self.max_delay)
        return base * random.uniform(0.75, 1.25)

    async def wait_online(
        self,
        *,
        base_url: str | None = None,
        on_wait: Callable[[str, int, float], None] | None = None,
    ) -> bool:
        """Block until the endpoint accepts a TCP connection; False after ``max_offline_wait``.

        ``on_wait(host, port, waited_s)`` is called before each sleep while offline.
        """
        host, port = endpoint(base_url)
        started = time.monotonic()
        while True:
            if await asyncio.to_thread(reachable, host, port, self.probe_timeout):
                return True
            waited = time.monotonic() - started
            if waited >= self.max_offline_wait:
                return False
            if on_wait is not None:
                on_wait(host, port, waited)
            await asyncio.sleep(min(self.probe_interval, self.max_offline_wait - waited))

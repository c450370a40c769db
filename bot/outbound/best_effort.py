"""A Slack surface the bot may use where Slack lets it, and goes without where it does not.

The thread's "is working…" line (``bot.outbound.assistant``) and its agent session
(``bot.outbound.agent_sessions``) are views: a call to them never fails a run. When Slack answers
that the app may not use the method at all (a missing scope, a feature the workspace lacks, a
method it does not know), the bot stops calling it for the whole process; when it refuses one
thread, for that thread. Each is said in one log line. A call that got no answer, or a 429 / 5xx
past the client's retries, is only skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from slack_sdk.errors import SlackApiError

from bot.core.thread import ThreadKey
from bot.outbound.api_errors import AUTH_ERRORS, UNREACHABLE, error_code

log = logging.getLogger(__name__)

__all__ = ["APP_REFUSED", "BestEffort"]

# Slack's answers meaning no thread will take this method from this app.
APP_REFUSED = frozenset({"missing_scope", "not_allowed_token_type", "is_bot", "method_deprecated",
                         "deprecated_endpoint", "unknown_method", "enterprise_is_restricted", "not_allowed",
                         "feature_disabled", "not_authorized", *AUTH_ERRORS})
PASSING = frozenset({"ratelimited", "fatal_error", "internal_error", "service_unavailable", "request_timeout"})


class BestEffort:
    """Calls of one Web API ``method`` for one bot, with what Slack refused remembered across
    runs: ``call(key, make)`` runs ``make()`` unless Slack turned the method off here."""

    def __init__(self, method: str, *, when_off: str) -> None:
        self.method = method
        self.when_off = when_off  # the log's sentence on what the bot does without the method
        self.off: str | None = None  # Slack's error that turned it off for the whole process
        self._off_threads: set[ThreadKey] = set()

    def available(self, key: ThreadKey) -> bool:
        """False once Slack refused the method for the whole app, or for this thread."""
        return self.off is None and ThreadKey(*key) not in self._off_threads

    async def call(self, key: ThreadKey, make: Callable[[], Awaitable[object]]) -> bool:
        """``await make()`` for thread ``key``; True when Slack took it, False when it was not
        called or did not succeed (never raises, but for a cancel)."""
        if not self.available(key):
            return False
        try:
            await make()
            return True
        except UNREACHABLE as exc:
            log.debug("%s in %s/%s got no answer: %s", self.method, key.channel, key.thread_ts, exc)
        except SlackApiError as exc:
            self._refused(ThreadKey(*key), error_code(exc) or f"HTTP {exc.response.status_code}")
        except Exception as exc:  # e.g. the client closing under a shutdown: a view is never worth a run
            log.debug("%s in %s/%s failed: %r", self.method, key.channel, key.thread_ts, exc)
        return False

    def _refused(self, key: ThreadKey, code: str) -> None:
        if code in PASSING or code.startswith("HTTP 5") or code == "HTTP 429":
            log.debug("%s in %s/%s failed for now: %s", self.method, key.channel, key.thread_ts, code)
        elif code in APP_REFUSED:
            self.off = code
            log.warning("Slack refused %s (%s): %s", self.method, code, self.when_off)
        else:
            self._off_threads.add(key)
            log.info("Slack refused %s in thread %s/%s (%s): not called there from now on",
                     self.method, key.channel, key.thread_ts, code)

"""Slack's "is working…" line under a thread (``assistant.threads.setStatus``), where the app may set it.

Slack shows the status as "<app name> <status>" until the app posts a reply, the status is set
to "" or about two minutes pass, so it says what is happening right now; the status message the
bot edits stays the durable progress. The method takes the ``chat:write`` scope (Slack's
changelog, March 2026; ``assistant:write`` is still accepted), in channels too.

It is best effort and never fails a run. When Slack answers that the app may not use it at all
(a missing scope, a token or app type it refuses, a method it does not know), the bot stops
calling it for the whole process; when it refuses this thread (not an assistant thread, a
channel or thread it cannot see), for that thread. Each is said in one log line. A call that
got no answer, or a 429 / 5xx past the client's retries, is only skipped.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.errors import AUTH_ERRORS, UNREACHABLE, error_code
from bot.store.bot_store import ThreadKey

log = logging.getLogger(__name__)

__all__ = ["AssistantStatus", "MAX_STATUS"]

# Slack's answers meaning no thread will take a status from this app (its error table for the method).
APP_REFUSED = frozenset({"missing_scope", "not_allowed_token_type", "is_bot", "method_deprecated",
                         "deprecated_endpoint", "unknown_method", "enterprise_is_restricted", "not_allowed",
                         *AUTH_ERRORS})
PASSING = frozenset({"ratelimited", "fatal_error", "internal_error", "service_unavailable", "request_timeout"})
MAX_STATUS = 100  # a line under the thread: longer ones are cut


class AssistantStatus:
    """The status lines of one bot (one Web API client): ``show`` and ``clear`` per thread. One
    per bot, kept for as long as it runs, so what Slack refused is remembered across runs."""

    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client
        self.off: str | None = None  # Slack's error that turned it off for the whole process
        self._off_threads: set[ThreadKey] = set()

    def available(self, key: ThreadKey) -> bool:
        """False once Slack refused the status for the whole app, or for this thread."""
        return self.off is None and ThreadKey(*key) not in self._off_threads

    async def show(self, key: ThreadKey, status: str) -> bool:
        """Set thread ``key``'s status line ("" clears it); True when Slack took it."""
        if not self.available(key):
            return False
        text = status if len(status) <= MAX_STATUS else status[: MAX_STATUS - 1] + "…"
        try:
            await self.client.assistant_threads_setStatus(channel_id=key.channel, thread_ts=key.thread_ts,
                                                          status=text)
            return True
        except UNREACHABLE as exc:
            log.debug("assistant.threads.setStatus in %s/%s got no answer: %s", key.channel, key.thread_ts, exc)
        except SlackApiError as exc:
            self._refused(ThreadKey(*key), error_code(exc) or f"HTTP {exc.response.status_code}")
        except Exception as exc:  # e.g. the client closing under a shutdown: a status line is never worth a run
            log.debug("assistant.threads.setStatus in %s/%s failed: %r", key.channel, key.thread_ts, exc)
        return False

    async def clear(self, key: ThreadKey) -> bool:
        """Clear thread ``key``'s status line (a run ended or waits for a person)."""
        return await self.show(key, "")

    def _refused(self, key: ThreadKey, code: str) -> None:
        if code in PASSING or code.startswith("HTTP 5") or code == "HTTP 429":
            log.debug("assistant.threads.setStatus in %s/%s failed for now: %s", key.channel, key.thread_ts, code)
        elif code in APP_REFUSED:
            self.off = code
            log.warning("Slack refused assistant.threads.setStatus (%s): no \"is working…\" status lines from "
                        "now on (the status message still shows progress). Give the app the chat:write scope "
                        "and reinstall it to have them.", code)
        else:
            self._off_threads.add(key)
            log.info("Slack refused a status line in thread %s/%s (%s): none are set there from now on",
                     key.channel, key.thread_ts, code)


"""Slack's agent surfaces of a thread: its agent session and its "is working…" line, best effort.

The agent session (``agents.sessions.setStatus``): its state and Stop button. A thread's run is a
session: ``processing`` while a step works (Slack shows its own Stop button,
which sends ``agent_session_stopped``), ``suspended`` while a question waits for a person or the
run is parked, ``active`` when it is done and waits for a follow-up, ``closed`` once ``/new``
archived it. Slack sets a session's title on creation only: the first status a thread gets in
this process carries the request, cut to ``MAX_TITLE``. Only apps declared as agents
(``features.agent_view`` in ``manifest.yml``) have sessions; where the workspace lacks them
(``feature_disabled``, ``not_authorized``, a missing scope), the bot logs it once and shows the
"is working…" line instead (``bot.runs.surfaces``). Best effort: it never fails a run.

Best effort (``BestEffort``): a surface the bot uses where Slack lets it, and goes without where it
does not. When Slack answers that the app may not use the method at all (a missing scope, a feature
the workspace lacks, a method it does not know), the bot stops calling it for the whole process;
when it refuses one thread, for that thread. Each is said in one log line. A call that got no
answer, or a 429 / 5xx past the client's retries, is only skipped.

The "is working…" line (``AssistantStatus``, ``assistant.threads.setStatus``): Slack shows it as
"<app name> <status>" until the app posts a reply, the status is set to "" or about two minutes
pass; the status message the bot edits stays the durable progress. It takes the ``chat:write`` scope
(Slack's changelog, March 2026), in channels too, and is the fallback where agent sessions are not
there.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Literal

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey
from bot.outbound.api_errors import AUTH_ERRORS, UNREACHABLE, error_code

log = logging.getLogger(__name__)

__all__ = ["APP_REFUSED", "AgentSessions", "AssistantStatus", "BestEffort", "MAX_STATUS", "MAX_TITLE", "SessionStatus"]

SessionStatus = Literal["processing", "suspended", "active", "closed"]

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


# -- Slack's agent session -------------------------------------------------------------------------

MAX_TITLE = 200  # Slack's limit for a session's title


class AgentSessions(BestEffort):
    """The agent sessions of one bot's threads: ``set(key, status, title=…)``. One per bot, so
    what Slack refused, and each thread's last status, are remembered across runs."""

    def __init__(self, client: AsyncWebClient) -> None:
        super().__init__("agents.sessions.setStatus",
                         when_off="threads show the \"is working…\" line instead of an agent session with a "
                                  "Stop button. Declare the app as an agent (features.agent_view in "
                                  "manifest.yml) and reinstall it to have them.")
        self.client = client
        self.shown: dict[ThreadKey, SessionStatus] = {}  # each thread's status as Slack last took it

    async def set(self, key: ThreadKey, status: SessionStatus, *, title: str = "", user: str = "") -> bool:
        """Move thread ``key``'s session to ``status`` (creating it, titled ``title``, the first
        time); True when Slack took it. Setting the status it already has calls nothing."""
        key = ThreadKey(*key)
        if self.shown.get(key) == status:
            return True
        first = key not in self.shown
        cut = title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1] + "…"
        took = await self.call(key, lambda: self.client.agents_sessions_setStatus(
            channel_id=key.channel, thread_ts=key.thread_ts, status=status,
            title=(cut or None) if first else None, initiator_user_id=(user or None) if first else None))
        if took:
            self.shown[key] = status
        return took


# -- The "is working…" line -----------------------------------------------------------------------

MAX_STATUS = 100  # a line under the thread: longer ones are cut


class AssistantStatus(BestEffort):
    """The status lines of one bot (one Web API client): ``show`` and ``clear`` per thread. One
    per bot, kept for as long as it runs, so what Slack refused is remembered across runs."""

    def __init__(self, client: AsyncWebClient) -> None:
        super().__init__("assistant.threads.setStatus",
                         when_off="no \"is working…\" status lines from now on (the status message still "
                                  "shows progress). Give the app the chat:write scope and reinstall it to have them.")
        self.client = client

    async def show(self, key: ThreadKey, status: str) -> bool:
        """Set thread ``key``'s status line ("" clears it); True when Slack took it."""
        text = status if len(status) <= MAX_STATUS else status[: MAX_STATUS - 1] + "…"
        return await self.call(key, lambda: self.client.assistant_threads_setStatus(
            channel_id=key.channel, thread_ts=key.thread_ts, status=text))

    async def clear(self, key: ThreadKey) -> bool:
        """Clear thread ``key``'s status line (a run ended or waits for a person)."""
        return await self.show(key, "")

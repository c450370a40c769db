"""Slack's "is working…" line under a thread (``assistant.threads.setStatus``), where the app may set it.

Slack shows the status as "<app name> <status>" until the app posts a reply, the status is set
to "" or about two minutes pass, so it says what is happening right now; the status message the
bot edits stays the durable progress. The method takes the ``chat:write`` scope (Slack's
changelog, March 2026; ``assistant:write`` is still accepted), in channels too. It is the
fallback for threads where Slack's agent sessions (``bot.outbound.agent_sessions``) are not there.
Best effort (``bot.outbound.best_effort``): it never fails a run.
"""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey
from bot.outbound.best_effort import BestEffort

__all__ = ["AssistantStatus", "MAX_STATUS"]

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

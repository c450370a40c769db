"""Slack's agent session of a thread (``agents.sessions.setStatus``): its state and Stop button.

A thread's run is a session: ``processing`` while a step works (Slack shows its own Stop button,
which sends ``agent_session_stopped``), ``suspended`` while a question waits for a person or the
run is parked, ``active`` when it is done and waits for a follow-up, ``closed`` once ``/new``
archived it. Slack sets a session's title on creation only: the first status a thread gets in
this process carries the request, cut to ``MAX_TITLE``. Only apps declared as agents
(``features.agent_view`` in ``manifest.yml``) have sessions; where the workspace lacks them
(``feature_disabled``, ``not_authorized``, a missing scope), the bot logs it once and shows the
"is working…" line instead (``bot.runs.surfaces``). Best effort: it never fails a run.
"""

from __future__ import annotations

from typing import Literal

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey
from bot.outbound.best_effort import BestEffort

__all__ = ["AgentSessions", "MAX_TITLE", "SessionStatus"]

SessionStatus = Literal["processing", "suspended", "active", "closed"]
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

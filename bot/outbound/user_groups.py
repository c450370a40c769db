"""User groups a policy names among its people (``S…``: ``@devs``), resolved with
``usergroups.users.list`` (scope ``usergroups:read``) and kept five minutes.

A group Slack will not list (no such group, a missing scope) counts as empty and is logged once:
naming a group never lets anyone in by mistake.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

from slack_sdk.web.async_client import AsyncWebClient

from bot.outbound.outbox import SLACK_FAILED

log = logging.getLogger(__name__)

__all__ = ["UserGroups"]

KEEP_S = 300.0


class UserGroups:
    """Who is in each user group, as Slack said at most ``KEEP_S`` ago."""

    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client
        self._members: dict[str, tuple[float, frozenset[str]]] = {}
        self._refused: set[str] = set()

    async def has(self, ids: Iterable[str], user: str) -> bool:
        """True when ``user`` is one of ``ids`` or in one of the user groups among them."""
        ids = list(ids)
        if user in ids:
            return True
        for group in (i for i in ids if i.startswith("S")):
            if user in await self.members(group):
                return True
        return False

    async def members(self, group: str) -> frozenset[str]:
        at, members = self._members.get(group, (0.0, frozenset()))
        if time.monotonic() - at < KEEP_S:
            return members
        try:
            got = await self.client.usergroups_users_list(usergroup=group)
            members = frozenset(got.get("users") or [])
        except SLACK_FAILED as exc:
            if group not in self._refused:
                self._refused.add(group)
                log.warning("cannot list user group %s (%s): it counts as empty. Check the group's ID and "
                            "that the app has the usergroups:read scope.", group, exc)
            members = frozenset()
        self._members[group] = (time.monotonic(), members)
        return members

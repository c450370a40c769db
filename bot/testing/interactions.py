"""People clicking buttons and typing slash commands: payload builders on top of the message store."""

from __future__ import annotations

import uuid
from typing import Callable, Literal

from bot.testing import payloads
from bot.testing.actors import Actors
from bot.testing.errors import FakeSlackError
from bot.testing.messages import MessageStore

# (channel, message_ts, thread_ts, user) -> a response_url served by the fake
ResponseUrlIssuer = Callable[[str, "str | None", "str | None", str], str]


class Interactions(Actors):
    """Actors plus interaction payloads (block_actions, slash commands) with working response URLs."""

    def __init__(self, store: MessageStore, *, response_url: ResponseUrlIssuer) -> None:
        super().__init__(store)
        self._issue_response_url = response_url

    def _trigger_id(self) -> str:
        return f"{self.store.next_id('')[1:]}.{uuid.uuid4().hex[:12]}"

    def click_payload(
        self, channel: str, message_ts: str, action_id: str, *, user: str | None = None, value: str | None = None,
        feedback: Literal["positive", "negative"] = "positive",
    ) -> dict:
        """The block_actions payload of `user` clicking the button `action_id` on the message at `message_ts`.

        The button must exist on that message (as a person can click only what is shown); `value`
        overrides the button's own value, to forge a click. On `feedback_buttons`, `feedback` says
        which of the two is clicked (the action carries that button's text and value).
        """
        where = self._channel(channel)
        message = self._existing(where, message_ts)
        block, element = _find_action(message.blocks or [], action_id)
        if element is None:
            ids = [e.get("action_id") for _, e in _elements(message.blocks or [])]
            raise FakeSlackError(f"no button {action_id!r} on message {message_ts} in {where.id}; it has {ids}")
        who = self.workspace.user(self._user(user))
        if element.get("type") == "feedback_buttons":
            button = element[f"{feedback}_button"]
            element = {"type": "feedback_buttons", "action_id": action_id, "text": button.get("text"),
                       "value": button.get("value")}
        action = element | {"block_id": block.get("block_id")} | ({} if value is None else {"value": value})
        return payloads.block_actions(
            self.workspace,
            user={"id": who.id, "username": who.name, "name": who.name, "team_id": self.workspace.team_id},
            channel={"id": where.id, "name": where.name or "directmessage"},
            message=self.store.to_api(message),
            action=action,
            trigger_id=self._trigger_id(),
            response_url=self._issue_response_url(where.id, message.ts, message.thread_ts, who.id),
            action_ts=self.store.next_ts(),
        )

    def home_click_payload(self, user: str, action_id: str) -> dict:
        """The block_actions payload of `user` clicking button `action_id` on their App Home tab."""
        view = self.store.home_views.get(user)
        if view is None:
            raise FakeSlackError(f"no Home tab was published for {user}; send home_opened first")
        block, element = _find_action(view.get("blocks") or [], action_id)
        if element is None:
            raise FakeSlackError(f"no button {action_id!r} on {user}'s Home tab")
        who = self.workspace.user(self._user(user))
        return {"type": "block_actions", "user": {"id": who.id, "username": who.name, "team_id": self.workspace.team_id},
                "api_app_id": self.workspace.app_id, "token": "fake-verification-token",
                "container": {"type": "view", "view_id": view["id"]}, "trigger_id": self._trigger_id(),
                "team": {"id": self.workspace.team_id, "domain": self.workspace.team_domain}, "view": view,
                "actions": [element | {"block_id": block.get("block_id"), "action_ts": self.store.next_ts()}]}

    def slash_command_payload(self, command: str, text: str = "", *, channel: str, user: str | None = None) -> dict:
        """The payload of `user` typing `command text` in `channel` (all values strings, as Slack sends)."""
        where, who = self._channel(channel), self.workspace.user(self._user(user))
        return payloads.slash_command(
            self.workspace, command=command, text=text, user_id=who.id, user_name=who.name, channel_id=where.id,
            channel_name=where.name or "directmessage", trigger_id=self._trigger_id(),
            response_url=self._issue_response_url(where.id, None, None, who.id),
        )  # fmt: skip


def _elements(blocks: list) -> list[tuple[dict, dict]]:
    """(block, element) for every interactive element: actions and context_actions elements, and
    section accessories."""
    found = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") in ("actions", "context_actions"):
            found.extend((block, element) for element in block.get("elements") or [] if isinstance(element, dict))
        if isinstance(block.get("accessory"), dict):
            found.append((block, block["accessory"]))
    return found


def _find_action(blocks: list, action_id: str) -> tuple[dict, dict | None]:
    for block, element in _elements(blocks):
        if element.get("action_id") == action_id:
            return block, element
    return {}, None

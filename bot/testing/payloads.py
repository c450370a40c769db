"""Pure builders of the JSON Slack sends: events, envelopes, interactions, slash commands."""

from __future__ import annotations

import time
from typing import Literal

from bot.testing.workspace import Workspace

EnvelopeType = Literal["events_api", "interactive", "slash_commands"]
DisconnectReason = Literal["warning", "refresh_requested", "link_disabled", "too_many_websockets"]


def event_callback(ws: Workspace, event: dict, *, event_id: str, event_time: int | None = None) -> dict:
    """The outer Events API payload (`type: event_callback`) around one event."""
    return {
        "token": "fake-verification-token",
        "team_id": ws.team_id,
        "context_team_id": ws.team_id,
        "context_enterprise_id": None,
        "api_app_id": ws.app_id,
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": event_time if event_time is not None else int(time.time()),
        "authorizations": ws.authorizations(),
        "is_ext_shared_channel": False,
        "event_context": f"4-fake-{event_id}",
    }


def url_verification(challenge: str) -> dict:
    """The handshake Slack sends when an Events API request URL is saved."""
    return {"token": "fake-verification-token", "challenge": challenge, "type": "url_verification"}


def message_event(
    ws: Workspace,
    *,
    channel: str,
    ts: str,
    text: str,
    user: str | None,
    event_type: Literal["message", "app_mention"] = "message",
    thread_ts: str | None = None,
    subtype: str | None = None,
    bot_id: str | None = None,
    files: list | None = None,
    channel_type: str = "channel",
) -> dict:
    """A `message` or `app_mention` event as it appears inside event_callback.event."""
    event: dict = {"type": event_type, "text": text, "ts": ts, "channel": channel, "event_ts": ts, "team": ws.team_id}
    if user is not None:
        event["user"] = user
    if event_type == "message":
        event["channel_type"] = channel_type
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    if subtype is not None:
        event["subtype"] = subtype
    if bot_id is not None:
        event["bot_id"] = bot_id
        event["app_id"] = ws.app_id if bot_id == ws.bot_id else "A0OTHER"
    if files is not None:
        event["files"] = files
    if user is not None and subtype is None:
        event["blocks"] = [
            {
                "type": "rich_text",
                "block_id": f"rt{ts.replace('.', '')}",
                "elements": [{"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}],
            }
        ]
    return event


def block_actions(
    ws: Workspace,
    *,
    user: dict,
    channel: dict,
    message: dict,
    action: dict,
    trigger_id: str,
    response_url: str,
    action_ts: str,
) -> dict:
    """A `block_actions` interaction payload for one clicked button of `message`."""
    container = {
        "type": "message",
        "message_ts": message["ts"],
        "channel_id": channel["id"],
        "is_ephemeral": False,
    }
    if message.get("thread_ts"):
        container["thread_ts"] = message["thread_ts"]
    clicked = {
        "action_id": action.get("action_id"),
        "block_id": action.get("block_id"),
        "text": action.get("text") or {"type": "plain_text", "text": "", "emoji": True},
        "value": action.get("value"),
        "type": action.get("type", "button"),
        "action_ts": action_ts,
    }
    if action.get("style"):
        clicked["style"] = action["style"]
    return {
        "type": "block_actions",
        "user": user,
        "api_app_id": ws.app_id,
        "token": "fake-verification-token",
        "container": container,
        "trigger_id": trigger_id,
        "team": {"id": ws.team_id, "domain": ws.team_domain},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": channel,
        "message": message,
        "state": {"values": {}},
        "response_url": response_url,
        "actions": [clicked],
    }


def slash_command(
    ws: Workspace,
    *,
    command: str,
    text: str,
    user_id: str,
    user_name: str,
    channel_id: str,
    channel_name: str,
    response_url: str,
    trigger_id: str,
) -> dict:
    """A slash command payload; every value is a string, as in Slack's form-encoded original."""
    return {
        "token": "fake-verification-token",
        "team_id": ws.team_id,
        "team_domain": ws.team_domain,
        "channel_id": channel_id,
        "channel_name": channel_name,
        "user_id": user_id,
        "user_name": user_name,
        "command": command,
        "text": text,
        "api_app_id": ws.app_id,
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": trigger_id,
    }


def envelope(
    kind: EnvelopeType,
    payload: dict,
    *,
    envelope_id: str,
    retry_attempt: int = 0,
    retry_reason: str = "",
) -> dict:
    """A Socket Mode envelope; events carry retry fields, slash commands accept a response payload."""
    frame: dict = {
        "envelope_id": envelope_id,
        "payload": payload,
        "type": kind,
        "accepts_response_payload": kind == "slash_commands",
    }
    if kind == "events_api":
        frame["retry_attempt"] = retry_attempt
        frame["retry_reason"] = retry_reason
    return frame


def hello(ws: Workspace, *, num_connections: int) -> dict:
    """The first frame on every Socket Mode connection."""
    return {
        "type": "hello",
        "num_connections": num_connections,
        "debug_info": {"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060},
        "connection_info": {"app_id": ws.app_id},
    }


def disconnect(reason: DisconnectReason) -> dict:
    """The frame Slack sends before it closes a Socket Mode connection."""
    return {"type": "disconnect", "reason": reason, "debug_info": {"host": "applink-fake"}}

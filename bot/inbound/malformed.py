"""Requests that are not what Slack sends: found before bolt reads them, refused with one log line.

bolt and the bot's middleware index what Slack always sends (``body["actions"][0]["action_id"]``,
``event["channel"]``, a text that is a string); a frame cut short, a proxy's error page or a
hand-made request would otherwise end in a ``KeyError`` / ``IndexError`` traceback, or worse,
halfway through handling (an event claimed, then dropped). ``problem`` checks exactly the fields
that code reads, for the request kinds the bot listens to, and lets everything else through
(bolt answers what has no listener).
"""

from __future__ import annotations

from typing import Any

__all__ = ["problem"]

_EVENTS_READ = frozenset({"app_mention", "message"})  # the events the bot has listeners for
_EVENT_REQUIRED = ("channel", "ts")
_EVENT_STRINGS = ("type", "subtype", "text", "user", "thread_ts", "bot_id", "team", "event_ts", "channel_type")
_BODY_STRINGS = ("type", "team_id", "event_id", "api_app_id", "command", "text", "user_id", "channel_id")


def _kind(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def problem(body: object) -> str | None:
    """Why ``body`` (a parsed request: an Events API callback, an interaction, a slash command)
    cannot be what Slack sent, in a few words naming the field; None when it may be.

    Checked: the body is an object; its ids are strings; an ``event`` is an object with a type,
    and a ``message`` / ``app_mention`` event has string ``channel`` and ``ts`` (and strings or
    nothing in the other fields the bot reads, ``files`` a list of objects); ``actions`` (and a
    ``block_actions`` has them) is a non-empty list of objects with a string ``action_id``, and the
    ``channel`` / ``user`` beside it are objects with a string ``id``.
    """
    if not isinstance(body, dict):
        return f"the body is {_kind(body)}, not an object"
    for name in _BODY_STRINGS:
        if body.get(name) is not None and not isinstance(body[name], str):
            return f"{name} is {_kind(body[name])}, not a string"
    if "event" in body:
        found = _event_problem(body["event"])
        if found:
            return found
    if "actions" in body or body.get("type") == "block_actions":
        return _actions_problem(body)
    return None


def _event_problem(event: object) -> str | None:
    if not isinstance(event, dict):
        return f"event is {_kind(event)}, not an object"
    if not isinstance(event.get("type"), str):
        return "event has no type"
    if event["type"] not in _EVENTS_READ:
        return None
    for name in _EVENT_REQUIRED:
        if not isinstance(event.get(name), str):
            return f"{event['type']} event without a string {name}"
    for name in _EVENT_STRINGS:
        if event.get(name) is not None and not isinstance(event[name], str):
            return f"event.{name} is {_kind(event[name])}, not a string"
    files = event.get("files")
    if files is not None and not (isinstance(files, list) and all(isinstance(f, dict) for f in files)):
        return "event.files is not a list of objects"
    return None


def _actions_problem(body: dict[str, Any]) -> str | None:
    actions = body.get("actions")
    if not isinstance(actions, list) or not actions:
        return "actions is missing or empty"
    for n, action in enumerate(actions):
        if not isinstance(action, dict) or not isinstance(action.get("action_id"), str):
            return f"actions[{n}] has no string action_id"
        for name in ("value", "block_id"):
            if action.get(name) is not None and not isinstance(action[name], str):
                return f"actions[{n}].{name} is {_kind(action[name])}, not a string"
    for name in ("channel", "user"):
        where = body.get(name)
        if where is not None and not (isinstance(where, dict) and isinstance(where.get("id"), str)):
            return f"{name} is not an object with a string id"
    return None

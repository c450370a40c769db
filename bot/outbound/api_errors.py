"""Slack's refusals, sorted by what the bot can do about them, and the error a refused token raises.

Retrying helps only when Slack or the network may answer differently next time. A refused token
never will (a person must fix the setting), nor a channel the bot may not post in (a person must
invite it or unarchive the channel), nor a message too long (it must be split). The codes are
Slack's (api.slack.com/methods/chat.postMessage, auth.test, apps.connections.open).
"""

from __future__ import annotations

import asyncio
from typing import Literal

import aiohttp
from slack_sdk.errors import SlackApiError

from bot.errors import SlackAuthError

__all__ = [
    "AUTH_ERRORS",
    "SLACK_FAILED",
    "UNREACHABLE",
    "UNPOSTABLE",
    "Refusal",
    "SlackAuthError",
    "classify",
    "error_code",
]

AUTH_ERRORS = frozenset({"invalid_auth", "account_inactive", "token_revoked", "token_expired", "not_authed"})
UNPOSTABLE = frozenset({"channel_not_found", "not_in_channel", "is_archived", "channel_is_archived",
                        "restricted_action"})
TOO_LONG = frozenset({"msg_too_long"})
BAD_BLOCKS = frozenset({"invalid_blocks", "invalid_blocks_format"})
# A call that never got an answer (a dropped network, a timeout): it may or may not have happened.
# SLACK_FAILED adds Slack refusing the call: every way a Web API call fails.
UNREACHABLE = (aiohttp.ClientError, OSError, asyncio.TimeoutError)
SLACK_FAILED = (SlackApiError, *UNREACHABLE)

Refusal = Literal["auth", "unpostable", "too_long", "bad_blocks", "unreachable", "other"]


def error_code(exc: BaseException) -> str | None:
    """Slack's ``error`` string of a refused Web API call (``invalid_auth``…), or None for anything else."""
    if isinstance(exc, SlackApiError):
        code = exc.response.get("error") if exc.response is not None else None
        return code if isinstance(code, str) else None
    return None


def classify(exc: BaseException) -> Refusal:
    """What a failed Web API call means for retrying it.

    ``auth``: the token is refused (stop, say which token). ``unpostable``: the bot may not post in
    that channel (drop, say why). ``too_long``: split the text. ``bad_blocks``: Slack refused the
    Block Kit (post the text alone). ``unreachable``: no answer at all (wait for the network).
    ``other``: anything else Slack answered (a 5xx past the client's retries, an internal error):
    worth a few more tries.
    """
    if isinstance(exc, UNREACHABLE):
        return "unreachable"
    code = error_code(exc)
    if code in AUTH_ERRORS:
        return "auth"
    if code in UNPOSTABLE:
        return "unpostable"
    if code in TOO_LONG:
        return "too_long"
    if code in BAD_BLOCKS:
        return "bad_blocks"
    return "other"

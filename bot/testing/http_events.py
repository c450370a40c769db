"""Signed HTTP delivery of events and interactions, byte for byte as Slack sends them."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from urllib.parse import urlencode

import aiohttp

INTERACTION_TYPES = {
    "block_actions", "view_submission", "view_closed", "shortcut", "message_action", "block_suggestion"
}  # fmt: skip


@dataclass(frozen=True)
class HttpDelivery:
    """What the app answered to one delivery."""

    status: int
    body: str
    headers: dict[str, str]

    def json(self) -> object:
        """The body parsed as JSON."""
        return json.loads(self.body)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """Slack's request signature: `v0=` + hex HMAC-SHA256(secret, `v0:{timestamp}:{body}`)."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def encode(payload: dict) -> tuple[bytes, str]:
    """The raw body and content type Slack uses for this payload.

    Events (event_callback, url_verification) are JSON; interactions are form-encoded
    `payload=<json>`; slash commands (a `command` field) are form-encoded fields.
    """
    if payload.get("type") in INTERACTION_TYPES:
        return urlencode({"payload": json.dumps(payload)}).encode(), "application/x-www-form-urlencoded"
    if "command" in payload and "type" not in payload:
        return urlencode(payload).encode(), "application/x-www-form-urlencoded"
    return json.dumps(payload).encode(), "application/json"


async def deliver(
    url: str,
    payload: dict,
    *,
    signing_secret: str,
    timestamp: int | None = None,
    tamper: bool = False,
    retry_num: int | None = None,
    retry_reason: str = "http_timeout",
) -> HttpDelivery:
    """POST `payload` to `url` signed with `signing_secret`; return the app's answer.

    `timestamp` defaults to now (pass an old one to test replay protection). `tamper` changes the
    body after signing. `retry_num` adds the `X-Slack-Retry-Num`/`-Reason` headers of a redelivery.
    """
    body, content_type = encode(payload)
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    headers = _headers(signing_secret, stamp, body, content_type)
    if retry_num is not None:
        headers["X-Slack-Retry-Num"] = str(retry_num)
        headers["X-Slack-Retry-Reason"] = retry_reason
    if tamper:
        body += b" "  # still parses, so only the signature check can catch it
    return await _post(url, body, headers)


async def deliver_raw(url: str, body: bytes, content_type: str, *, signing_secret: str) -> HttpDelivery:
    """POST `body` byte for byte (it need not parse), signed with `signing_secret` now."""
    return await _post(url, body, _headers(signing_secret, str(int(time.time())), body, content_type))


def _headers(secret: str, stamp: str, body: bytes, content_type: str) -> dict[str, str]:
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": signature(secret, stamp, body),
        "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
    }


async def _post(url: str, body: bytes, headers: dict[str, str]) -> HttpDelivery:
    async with aiohttp.ClientSession() as session:
        async with session.post(url, data=body, headers=headers) as resp:
            return HttpDelivery(resp.status, await resp.text(), {k.lower(): v for k, v in resp.headers.items()})

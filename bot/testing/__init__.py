"""A fake Slack for tests: Web API, Socket Mode and signed HTTP delivery on 127.0.0.1.

The real slack_sdk and slack-bolt run against it; see `FakeSlack`.
"""

from bot.testing.errors import FakeSlackError, FakeSlackTimeout
from bot.testing.fake_slack import FakeSlack
from bot.testing.http_events import HttpDelivery, signature
from bot.testing.messages import Message, Upload
from bot.testing.records import Ack, Call, Connection, Download, Envelope
from bot.testing.workspace import Channel, User, Workspace

__all__ = [
    # the server
    "FakeSlack",
    "Workspace",
    "User",
    "Channel",
    # what it records
    "Call",
    "Envelope",
    "Ack",
    "Connection",
    "Download",
    "Message",
    "Upload",
    "HttpDelivery",
    "signature",
    # errors
    "FakeSlackError",
    "FakeSlackTimeout",
]

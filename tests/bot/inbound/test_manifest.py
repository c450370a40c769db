"""manifest.yml matches the code: every event listened to is subscribed, every Web API call scoped."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
BOT = ROOT / "bot"

# Web API method (as slack_sdk spells it) -> the bot scope it needs (None: no scope needed).
SCOPES = {
    "auth_test": None,
    "chat_getPermalink": None,  # Slack documents no scope for it (a link to a message the bot can see)
    "chat_postMessage": "chat:write",
    "chat_update": "chat:write",
    "chat_postEphemeral": "chat:write",
    "chat_delete": "chat:write",
    "reactions_add": "reactions:write",
    "reactions_remove": "reactions:write",
    "conversations_replies": "channels:history",
    "files_upload_v2": "files:write",
    "files_info": "files:read",  # a Slack Connect file's details; its download needs the same scope
    "users_info": "users:read",
    "assistant_threads_setStatus": "chat:write",
    "agents_sessions_setStatus": "chat:write",
    "usergroups_users_list": "usergroups:read",
    "views_publish": None,  # the App Home tab: no scope beyond the bot's
}
# bolt listener event -> the subscriptions that deliver it
EVENTS = {"app_mention": {"app_mention"}, "message": {"message.channels", "message.groups"},
          "agent_session_stopped": {"agent_session_stopped"}, "app_home_opened": {"app_home_opened"}}


def _manifest() -> dict:
    return yaml.safe_load((ROOT / "manifest.yml").read_text(encoding="utf-8"))


def _bot_source() -> str:
    files = [p for p in BOT.rglob("*.py") if "testing" not in p.parts]
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


def test_manifest_has_socket_mode_and_interactivity():
    settings = _manifest()["settings"]
    assert settings["socket_mode_enabled"] is True
    assert settings["interactivity"]["is_enabled"] is True


def test_every_web_api_call_is_covered_by_a_scope():
    scopes = set(_manifest()["oauth_config"]["scopes"]["bot"])
    called = set(re.findall(r"\.((?:chat|reactions|conversations|files|users|usergroups|auth|assistant|agents|views)_[A-Za-z0-9_]+)\(", _bot_source()))
    assert called, "no Web API call found in bot/: the pattern is out of date"
    unknown = called - set(SCOPES)
    assert not unknown, f"add these methods to SCOPES in this test: {sorted(unknown)}"
    missing = {m: SCOPES[m] for m in called if SCOPES[m] and SCOPES[m] not in scopes}
    assert not missing, f"manifest.yml lacks scopes for {missing}"


def test_every_listened_event_is_subscribed():
    subscribed = set(_manifest()["settings"]["event_subscriptions"]["bot_events"])
    listened = set(re.findall(r"\.event\(\s*[\"']([a-z_]+)[\"']", _bot_source()))
    assert listened, "no @app.event listener found in bot/"
    for event in listened:
        assert EVENTS[event] <= subscribed, f"{event} needs {EVENTS[event]} in bot_events"


def test_scopes_are_least():
    scopes = set(_manifest()["oauth_config"]["scopes"]["bot"])
    source = _bot_source()
    needed = {s for m, s in SCOPES.items() if s and re.search(rf"\.{m}\(", source)}
    needed |= {"app_mentions:read", "channels:history", "groups:history"}  # the subscribed events
    assert scopes == needed, f"extra scopes {sorted(scopes - needed)}, missing {sorted(needed - scopes)}"

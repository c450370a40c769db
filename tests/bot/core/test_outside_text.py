"""Pure functions for what comes from outside: Slack's refusals sorted, requests that are not what
Slack sends found, error texts escaped and credentials in URLs masked (issue 13, findings 4 and 6)."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.core.outside_text import Sentence, mask_credentials, outside
from bot.errors import ConfigError, RepoError, SlackAuthError
from bot.inbound.app import describe
from bot.inbound.socket import problem
from bot.outbound.api_errors import classify, error_code
from bot.render import texts
from bot.repos.bindings import Bindings


def refused(error: str | None, status: int = 200) -> SlackApiError:
    body = {"ok": False, "error": error} if error is not None else {"ok": False}
    response = AsyncSlackResponse(client=None, http_verb="POST", api_url="https://slack.com/api/x",
                                  req_args={}, data=body, headers={}, status_code=status)
    return SlackApiError("refused", response)


# -- Slack's refusals ----------------------------------------------------------------------------

@pytest.mark.parametrize("exc, kind", [
    (refused("invalid_auth"), "auth"),
    (refused("account_inactive"), "auth"),
    (refused("token_revoked"), "auth"),
    (refused("token_expired"), "auth"),
    (refused("not_authed"), "auth"),
    (refused("channel_not_found"), "unpostable"),
    (refused("not_in_channel"), "unpostable"),
    (refused("is_archived"), "unpostable"),
    (refused("channel_is_archived"), "unpostable"),
    (refused("msg_too_long"), "too_long"),
    (refused("invalid_blocks"), "bad_blocks"),
    (refused("fatal_error", 502), "other"),
    (refused("internal_error"), "other"),
    (refused("ratelimited", 429), "other"),
    (refused(None, 503), "other"),
    (aiohttp.ClientConnectionError("reset"), "unreachable"),
    (asyncio.TimeoutError(), "unreachable"),
    (ConnectionResetError(), "unreachable"),
    (ValueError("a bug"), "other"),
])
def test_refusals_are_sorted_by_what_retrying_can_do(exc, kind):
    assert classify(exc) == kind


def test_error_code_reads_slacks_error_string_only():
    assert error_code(refused("invalid_auth")) == "invalid_auth"
    assert error_code(refused(None, 503)) is None
    assert error_code(OSError("x")) is None


@pytest.mark.parametrize("variable, fix", [("SLACK_BOT_TOKEN", "OAuth & Permissions"),
                                           ("SLACK_APP_TOKEN", "connections:write")])
def test_a_refused_token_names_its_variable_the_code_and_the_fix_on_one_line(variable, fix):
    err = SlackAuthError(variable, "token_revoked")
    assert isinstance(err, ConfigError)  # flower-bot treats it as a bad setting: one line, exit 2
    line = str(err)
    assert "\n" not in line and variable in line and "token_revoked" in line and fix in line


# -- credentials in URLs ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, shown", [
    ("https://user:tok3n@git.example/x.git", "https://user:***@git.example/x.git"),
    ("could not clone 'https://u:p@ss@host/x': boom", "could not clone 'https://u:***@host/x': boom"),
    ("https://x-access-token:ghs_abc@github.com:443/o/r", "https://x-access-token:***@github.com:443/o/r"),
    ("https://ghp_abcdef@github.com/o/r.git", "https://***@github.com/o/r.git"),
    ("HTTP://TOKEN@HOST/", "HTTP://***@HOST/"),
    ("ssh://user:pw@host/r", "ssh://user:***@host/r"),
    ("two: https://a:b@h1/ and http://c:d@h2/", "two: https://a:***@h1/ and http://c:***@h2/"),
    ("ssh://git@host/r.git", "ssh://git@host/r.git"),  # a user name alone is no secret over ssh
    ("git@github.com:o/r.git", "git@github.com:o/r.git"),
    ("https://host:8080/path@v1", "https://host:8080/path@v1"),
    ("https://host/x user:pw@y", "https://host/x user:pw@y"),
    ("https://user:***@host/", "https://user:***@host/"),  # already masked stays so
    ("no url here", "no url here"),
])
def test_credentials_in_urls_are_masked(text, shown):
    assert mask_credentials(text) == shown
    assert mask_credentials(shown) == shown


def test_outside_text_is_masked_then_escaped():
    assert outside("<!channel> & <https://evil|here> at https://u:t@h/") == (
        "&lt;!channel&gt; &amp; &lt;https://evil|here&gt; at https://u:***@h/")
    assert outside(RepoError("a > b")) == "a &gt; b"


@pytest.mark.parametrize("sentence, field", [
    (texts.RUN_FAILED, "reason"), (texts.RUN_REPO_FAILED, "reason"),
    (texts.NOT_BOUND_ERROR, "error"), (texts.REPO_ERROR, "error"),
])
def test_every_error_notice_sent_as_text_escapes_and_masks_its_field(sentence, field):
    assert isinstance(sentence, Sentence)
    shown = sentence.format(**{field: "<!here> & <@U0ALICE> cloning https://bob:s3cret@git.example/r.git"})
    assert "<" not in shown and ">" not in shown and "s3cret" not in shown
    assert "&lt;!here&gt; &amp; &lt;@U0ALICE&gt;" in shown and "https://bob:***@git.example/r.git" in shown
    assert type(shown) is str and shown.startswith(":x: ")


def test_a_bind_error_never_shows_the_credential(tmp_path):
    with pytest.raises(RepoError) as info:
        Bindings(tmp_path / "home").bind("C1", "https://alice:s3cr3t-tok@127.0.0.1:1/x.git")
    message = str(info.value)
    assert "s3cr3t-tok" not in message and "https://alice:***@127.0.0.1:1/x.git" in message
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no traceback shows the original


# -- requests that are not what Slack sends ----------------------------------------------------------

MENTION = {"type": "app_mention", "channel": "C0GENERAL", "ts": "1.1", "user": "U0ALICE", "text": "hi"}
CLICK = {"type": "block_actions", "user": {"id": "U0ALICE"}, "channel": {"id": "C0GENERAL"},
         "actions": [{"action_id": "flower_stop", "value": "v"}]}


@pytest.mark.parametrize("body", [
    {"type": "event_callback", "event_id": "Ev1", "team_id": "T1", "event": MENTION},
    {"type": "event_callback", "event": {**MENTION, "type": "message", "thread_ts": "1.0",
                                         "files": [{"id": "F1"}]}},
    {"type": "event_callback", "event": {"type": "message", "subtype": "message_changed", "channel": "C1",
                                         "ts": "2.2", "message": {"text": "x"}}},
    {"type": "event_callback", "event": {"type": "reaction_added", "user": {"odd": "but not ours"}}},
    CLICK,
    {"type": "view_submission", "view": {}},
    {"command": "/flower", "text": "hi", "user_id": "U1", "channel_id": "C1"},
    {"type": "url_verification", "challenge": "abc"},
    {"ssl_check": "1"},
    {},
])
def test_what_slack_sends_passes(body):
    assert problem(body) is None


@pytest.mark.parametrize("body, why", [
    ([1, 2], "the body is an array"),
    (None, "the body is null"),
    ("x", "the body is a string"),
    ({"type": 5}, "type is a number"),
    ({"event_id": ["x"]}, "event_id is an array"),
    ({"type": "event_callback", "event": "x"}, "event is a string"),
    ({"type": "event_callback", "event": {}}, "event has no type"),
    ({"type": "event_callback", "event": {"type": "app_mention"}}, "app_mention event without a string channel"),
    ({"type": "event_callback", "event": {**MENTION, "ts": 1.1}}, "without a string ts"),
    ({"type": "event_callback", "event": {**MENTION, "text": 5}}, "event.text is a number"),
    ({"type": "event_callback", "event": {**MENTION, "user": {"id": "U1"}}}, "event.user is an object"),
    ({"type": "event_callback", "event": {**MENTION, "files": "F1"}}, "event.files is not a list"),
    ({"type": "block_actions"}, "actions is missing or empty"),
    ({**CLICK, "actions": []}, "actions is missing or empty"),
    ({**CLICK, "actions": [{}]}, "actions[0] has no string action_id"),
    ({**CLICK, "actions": ["x"]}, "actions[0] has no string action_id"),
    ({**CLICK, "actions": [{"action_id": "a", "value": 3}]}, "actions[0].value is a number"),
    ({**CLICK, "channel": "C0GENERAL"}, "channel is not an object with a string id"),
    ({**CLICK, "user": {}}, "user is not an object with a string id"),
])
def test_what_slack_never_sends_is_named(body, why):
    found = problem(body)
    assert found is not None and why in found


@pytest.mark.parametrize("body", [[], "x", {"actions": ["x"]}, {"actions": "x", "channel": 1, "message": 2},
                                  {"event": {"type": "app_mention", "subtype": "x"}}])
def test_describe_never_raises_on_a_malformed_body(body):
    assert isinstance(describe(body), str)

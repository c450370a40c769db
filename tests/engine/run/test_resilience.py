"""Pure parts of resilience: classification order, backoff bounds, the endpoint to probe."""

import socket

import pytest

from engine import Resilience
from engine._run.resilience import classify, endpoint, reachable


@pytest.mark.parametrize("text, kind", [
    ("API Error: 529 Overloaded", "transient"),
    ("API Error: Request rejected (429) · rate limited", "transient"),
    ("API Error: 500 Internal server error", "transient"),
    ("Connection dropped (ECONNRESET)", "transient"),
    ("Unable to connect to API (ECONNREFUSED)", "transient"),
    ("getaddrinfo ENOTFOUND api.anthropic.com", "transient"),
    ("Request timed out", "transient"),
    ("Invalid API key · Fix external API key", "fatal"),
    ("401 authentication_error: connection refused by auth proxy", "fatal"),  # fatal wins
    ("Your credit balance is too low", "fatal"),
    ("403 Forbidden", "fatal"),
    ("model claude-x not found", "fatal"),
    ("something odd happened", "unknown"),
    ("", "unknown"),
])
def test_classify_checks_fatal_before_transient(text, kind):
    assert classify(text) == kind


def test_should_retry_follows_the_policy():
    assert Resilience().should_retry("529 Overloaded")
    assert not Resilience().should_retry("Invalid API key")
    assert Resilience().should_retry("weird")
    assert not Resilience(retry_unknown=False).should_retry("weird")


@pytest.mark.parametrize("attempt, low, high", [(1, 3.0, 5.0), (2, 6.0, 10.0), (3, 12.0, 20.0),
                                                (10, 90.0, 150.0)])
def test_delay_doubles_with_jitter_and_is_capped(attempt, low, high):
    r = Resilience()
    for _ in range(50):
        assert low <= r.delay_for(attempt) <= high


@pytest.mark.parametrize("url, expected", [
    (None, ("api.anthropic.com", 443)),
    ("https://gw.example.com", ("gw.example.com", 443)),
    ("http://127.0.0.1:8080/v1", ("127.0.0.1", 8080)),
    ("http://proxy.local", ("proxy.local", 80)),
])
def test_endpoint_follows_base_url(url, expected):
    assert endpoint(url) == expected


def test_reachable_is_a_tcp_handshake_only():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert reachable("127.0.0.1", port, timeout=2)
    assert not reachable("127.0.0.1", port, timeout=2)  # closed now

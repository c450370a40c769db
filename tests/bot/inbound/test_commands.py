"""A message read once into what it is (``read``): /repo, /limit, /policy, or words; /new in each
accepted spelling; everything else is plain words."""

from __future__ import annotations

import pytest

from bot.inbound.commands import LimitCommand, PolicyCommand, RepoCommand, Said, parse, read, strip_mentions


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("/new do X", Said(True, "do X")),
        (" /new do X", Said(True, "do X")),
        ("<@U0BOT> /new do X", Said(True, "do X")),
        ("<@U0BOT>   /new", Said(True, "")),
        ("!new", Said(True, "")),
        ("!new  two\nlines", Said(True, "two\nlines")),
        ("/NEW x", Said(True, "x")),
        ("/newer x", Said(False, "/newer x")),
        ("please /new x", Said(False, "please /new x")),
        ("<@U0BOT> write hello", Said(False, "write hello")),
        ("", Said(False, "")),
    ],
)
def test_parse(text, said):
    assert parse(text) == said


def test_strip_mentions_with_label():
    assert strip_mentions("<@U0BOT|flower> hi <@U0ALICE>") == "hi"


@pytest.mark.parametrize(("text", "message"), [
    ("<@U0BOT> /repo https://example.com/r.git main", RepoCommand("https://example.com/r.git", "main")),
    ("<@U0BOT> /repo", RepoCommand()),
    ("!limit request 0.50", LimitCommand("request", "0.50")),
    ("<@U0BOT> /policy", PolicyCommand()),
    ("<@U0BOT> /new do X", Said(True, "do X")),
    ("<@U0BOT> write hello", Said(False, "write hello")),
])
def test_a_message_is_read_once_into_what_it_is(text, message):
    assert read(text) == message

"""/new in each accepted spelling; everything else is plain words."""

from __future__ import annotations

import pytest

from bot.inbound.commands import Said, parse, strip_mentions


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

"""Text from outside the bot (errors, URLs, paths, git's and the engine's words) made safe to post.

Slack reads ``&``, ``<`` and ``>`` as mrkdwn control characters: an error text holding
``<!channel>`` or ``<https://evil|here>`` would ping everyone or show a disguised link. And a
repository URL may carry a credential (``https://user:token@host/…``) that must never reach a
thread or a log line. ``outside`` does both; ``Sentence`` applies it to every field of a catalogue
sentence, so ``texts.RUN_FAILED.format(reason=…)`` is safe whoever formats it.
"""

from __future__ import annotations

import re
from typing import Any

from bot.core.split_text import escape

__all__ = ["MASK", "Sentence", "mask_credentials", "outside"]

MASK = "***"
# scheme://user:secret@host — the secret runs to the last "@" before the path (it may hold "@" itself)
_USER_AND_SECRET = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@'\"]*):[^\s/'\"]*@")
# http(s)://token@host — a forge token given as the user name (GitHub's https://<token>@github.com/…)
_TOKEN_AS_USER = re.compile(r"(?P<head>\bhttps?://)[^\s:/@'\"]+@", re.IGNORECASE)


def mask_credentials(text: str) -> str:
    """``text`` with every credential in a URL replaced by ``***``.

    ``https://user:token@host/x`` -> ``https://user:***@host/x`` (any scheme), and
    ``https://token@host/x`` -> ``https://***@host/x`` (an http(s) user alone is a token in
    practice). ``ssh://git@host/x`` and ``git@host:x`` name no secret and stay as they are.
    """
    masked = _USER_AND_SECRET.sub(lambda m: f"{m['head']}:{MASK}@", text)
    return _TOKEN_AS_USER.sub(lambda m: f"{m['head']}{MASK}@", masked)


def outside(text: object) -> str:
    """``str(text)`` ready to post as mrkdwn: credentials in URLs masked, then ``&``, ``<``, ``>`` escaped."""
    return escape(mask_credentials(str(text)))


class Sentence(str):
    """A catalogue sentence whose fields are all outside text: ``format`` passes each through ``outside``.

    The result is a plain ``str``. Use it only for sentences whose fields never hold the bot's
    own markup (a ``<@U…>`` mention would be escaped into plain text).
    """

    def format(self, *args: Any, **kwargs: Any) -> str:
        return str.format(self, *(outside(a) for a in args), **{k: outside(v) for k, v in kwargs.items()})

"""The hidden markers the bot ends its forge comments with, and which comments are the bot's own.

A marker names what a comment is (``<!-- flower:reply:line:12:<tag> -->``: the reply to one remark,
the summary of one batch, the update for one commit), so a retry finds it and posts nothing twice.
Anyone may comment on a public pull request, so a marker proves nothing by being there:

- only the bot's own comments count (``own``): written by the token's login, or, where the forge
  will not name that login (a GitHub App's token), ending with a marker that verifies (a person who
  quotes a bot comment, marker and all, and says more after it is still a person);
- a marker cannot be written in advance: its tag is an HMAC of its name. The key is derived from the
  forge token: a secret the bot already has, the same on every replica and after a restart, and
  never in a comment. A new token only leaves the old markers unrecognised.
"""

from __future__ import annotations

import hashlib
import hmac
import re

from bot.forge.reviews import Remark

__all__ = ["MARKER", "Markers", "own"]

MARKER = "<!-- flower:"
TAG_CHARS = 16  # 64 bits of the HMAC: not guessable by posting comments
_ONE = re.compile(re.escape(MARKER) + r"(?P<name>[^\s>]+):(?P<tag>[0-9a-f]{%d}) -->" % TAG_CHARS)
_LAST = re.compile(_ONE.pattern + r"\s*\Z")


class Markers:
    """Markers keyed with ``secret`` (the forge token): ``make`` writes one, ``signed`` checks a body."""

    def __init__(self, secret: str) -> None:
        # the key is the token's HMAC, not the token: what the tags reveal is about this key alone
        self._key = hmac.new(secret.encode(), b"flower pull request markers", hashlib.sha256).digest()

    def _tag(self, name: str) -> str:
        return hmac.new(self._key, name.encode(), hashlib.sha256).hexdigest()[:TAG_CHARS]

    def make(self, name: str) -> str:
        """The marker ``<!-- flower:<name>:<tag> -->`` a bot comment ends with (``name`` has no spaces)."""
        return f"{MARKER}{name}:{self._tag(name)} -->"

    def signed(self, body: str) -> bool:
        """Whether ``body`` holds a marker this key made (a copy of one counts too: it names only the
        comment it was copied from)."""
        return any(hmac.compare_digest(m["tag"], self._tag(m["name"])) for m in _ONE.finditer(body))

    def ends(self, body: str) -> bool:
        """Whether ``body`` ends with a marker this key made, as every comment of the bot does."""
        last = _LAST.search(body)
        return last is not None and hmac.compare_digest(last["tag"], self._tag(last["name"]))


def own(remark: Remark, *, me: str, markers: Markers) -> bool:
    """Whether ``remark`` is the bot's own: by its login ``me``; when the forge would not say it (""),
    by the marker that verifies at its end. Anyone else's remark is someone else's, marker or not."""
    if me:
        return remark.author.lower() == me.lower()
    return markers.ends(remark.body)

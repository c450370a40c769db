"""Words the bot writes on a forge act on no one: every mention is broken, however it is spelled.

The models' words (a goal, a brief, a judge's reason, commit subjects) go into pull request titles,
bodies and comments. On GitHub and GitLab an ``@name`` there notifies that person or team, and on
GitLab a line that starts with ``/merge`` or ``/approve`` is a quick action the bot's token carries
out. So, whatever the spelling:

- every ``@`` becomes ``@`` + a zero-width space, which no forge reads as part of a name: the plain
  one, the full-width ``＠`` (U+FF20) and the small ``﹫`` (U+FE6B) (the characters whose NFKC form is
  ``@``), and HTML entities that a Markdown renderer turns into one (``&#64;``, ``&#x40;``,
  ``&commat;``);
- invisible format characters (zero-width spaces and joiners, word joiners, BOMs, bidi controls, soft
  hyphens; literal or as entities) around an ``@`` are dropped first, so none can join it to a name;
- a line whose first non-blank character is ``/`` starts with a zero-width space instead.

An ``@`` inside a link's address is broken as well (the link then points elsewhere: a price paid for
one rule with no Markdown parser to get wrong). Pure function; idempotent.
"""

from __future__ import annotations

import html
import re

__all__ = ["inert"]

BREAK = "\u200b"  # zero-width space: GitHub's and GitLab's names are [A-Za-z0-9_.-]; this ends one
# the Unicode format characters (category Cf) a text may hide next to an "@"
_INVISIBLE = "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
_ENTITY = re.compile(r"&(?:#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});?")
_AT_LIKE = "@\ufe6b\uff20"  # every character whose NFKC form is "@" (the tests check there is no other)
_AT = re.compile(f"[{_INVISIBLE}]*[{_AT_LIKE}][{_INVISIBLE}]*")
_COMMAND = re.compile(f"^([ \\t{_INVISIBLE}]*)/", re.MULTILINE)
_HIDDEN = re.compile(f"[{_INVISIBLE}]")


def _decoded(match: re.Match[str]) -> str:
    """An entity that a renderer would turn into an ``@`` or an invisible character, as that character;
    any other entity as written."""
    char = html.unescape(match[0])
    return char if len(char) == 1 and (char in _AT_LIKE or _HIDDEN.fullmatch(char)) else match[0]


def inert(text: str) -> str:
    """``text`` with every mention broken and every would-be quick action defused (see the module)."""
    text = _ENTITY.sub(_decoded, text)
    text = _AT.sub("@" + BREAK, text)
    return _COMMAND.sub(lambda m: f"{_HIDDEN.sub('', m[1])}{BREAK}/", text)

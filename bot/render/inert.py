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
- a line whose first non-blank character is ``/`` gets a zero-width space before it: GitLab runs a
  quick action only from a ``/`` that starts a line (once it has deleted every ``\r``).

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
# any number of digits: CommonMark takes at most 7 (6 hex), but raw HTML (a <div> block) is passed on to
# an HTML parser, which takes ``&#x0000000040;`` as "@" however many zeros lead
_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]{1,31});?")
_AT_LIKE = "@\ufe6b\uff20"  # every character whose NFKC form is "@" (the tests check there is no other)
_AT = re.compile(f"[{_INVISIBLE}]*[{_AT_LIKE}][{_INVISIBLE}]*")
# GitLab deletes every "\r" before it looks for quick actions (Gitlab::QuickActions::Extractor), so a
# "\r" before the "/" does not stop one: it counts as blank here
_COMMAND = re.compile(f"^([ \\t\\r{_INVISIBLE}]*)/", re.MULTILINE)
_HIDDEN = re.compile(f"[{_INVISIBLE}]")
_NUMBER = re.compile(r"&#(?P<x>[xX]?)0*(?P<digits>[0-9a-fA-F]+);?")  # a numeric reference, its leading zeros apart


def _decoded(match: re.Match[str]) -> str:
    """An entity that a renderer would turn into an ``@`` or an invisible character, as that character;
    any other entity as written."""
    number = _NUMBER.fullmatch(match[0])
    if number is not None and len(number["digits"]) > 8:  # past every character (and too long for int())
        return match[0]
    char = html.unescape(number.expand(r"&#\g<x>\g<digits>;") if number is not None else match[0])
    return char if len(char) == 1 and (char in _AT_LIKE or _HIDDEN.fullmatch(char)) else match[0]


def inert(text: str) -> str:
    """``text`` with every mention broken and every would-be quick action defused (see the module)."""
    text = _ENTITY.sub(_decoded, text)
    text = _AT.sub("@" + BREAK, text)
    return _COMMAND.sub(lambda m: f"{_HIDDEN.sub('', m[1])}{BREAK}/", text)

"""Brief amendments: a person's words added under a ``## 唤醒时追加`` (``## Added on wake``) section, once.

A pure text function; ``HumanChannel.amend`` reads and writes the file around it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine._human.transports import normalize_text
from engine._lang import other_names, words

_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")


def _headings(lines: Sequence[str]) -> list[tuple[int, int, str]]:
    """``(line index, level, title)`` of each ``#`` heading outside fenced code."""
    found, fenced = [], False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (m := _HEADING.match(line)):
            found.append((i, len(m.group(1)), normalize_text(m.group(2))))
    return found


def amend_text(text: str, said: str, *, label: str | None = None) -> str | None:
    """``text`` with ``said`` added as a bullet under its ``## {label}`` section, or None.

    ``label`` defaults to the language in effect's; a section under the other language's label
    counts as the same one (a brief written in one language keeps working in the other).

    None when ``said`` is blank or already in ``text`` (whitespace-insensitive): a repeated wake
    with the same words must not pile up the same amendment. An existing section with that
    title gets the bullet at its end (no duplicate heading); otherwise the section is appended.
    """
    said = said.strip()
    if not said or normalize_text(said) in normalize_text(text):
        return None
    said_lines = said.splitlines()
    bullet = [f"- {said_lines[0]}", *(f"  {x}" if x.strip() else "" for x in said_lines[1:])]
    lines = text.splitlines()
    heads = _headings(lines)
    label = label or words().AMEND_LABEL
    names = {normalize_text(n) for n in other_names(label, "AMEND_LABEL")}
    own = next(((i, lvl) for i, lvl, title in heads if title in names), None)
    if own is None:
        body = text.rstrip()
        return (body + "\n\n" if body else "") + "\n".join([f"## {label}", "", *bullet]) + "\n"
    start, level = own
    end = next((i for i, lvl, _ in heads if i > start and lvl <= level), len(lines))
    at = end
    while at > start + 1 and not lines[at - 1].strip():
        at -= 1
    prev = lines[at - 1]
    in_list = prev.lstrip().startswith(("- ", "* ", "+ ")) or (prev.startswith("  ") and at > start + 1)
    block = ([] if in_list else [""]) + bullet + ([""] if at < len(lines) and lines[at].strip() else [])
    return "\n".join(lines[:at] + block + lines[at:]).rstrip("\n") + "\n"

"""Code fences in model answers: which lines are code, where an unclosed fence cuts the text.

Fenced code (``` or ~~~) is content, never headings. An UNCLOSED fence drops everything from it
on: the clarifier pastes whole files, and a truncated answer must leave the later sections
missing (the gate asks again) rather than parse half-written code as sections.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")


def _closing(lines: Sequence[str], start: int, fence: str) -> int | None:
    """Index of the line closing the fence opened at ``start``: same character, at least as many
    of them, nothing else on the line (CommonMark); None when it is never closed."""
    closer = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
    return next((j for j in range(start + 1, len(lines)) if closer.match(lines[j])), None)


def code_mask(lines: Sequence[str]) -> tuple[list[str], list[bool]]:
    """Split off an unclosed fence and mark fenced lines.

    Returns the lines kept (everything before an unclosed opening fence) and, per kept line,
    whether it belongs to a closed code block (fence lines included). A closing fence uses the
    opening character, at least as many of them, and nothing else on the line (CommonMark).
    """
    kept: list[str] = []
    mask: list[bool] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            kept.append(lines[i])
            mask.append(False)
            i += 1
            continue
        end = _closing(lines, i, m.group(1))
        if end is None:  # unclosed: the answer was cut off here; drop the rest
            break
        kept.extend(lines[i : end + 1])
        mask.extend([True] * (end + 1 - i))
        i = end + 1
    return kept, mask


def unwrap_fences(lines: Sequence[str], infos: frozenset[str]) -> list[str]:
    """``lines`` with closed top-level fences whose info string is in ``infos`` unwrapped.

    Their inside becomes ordinary text, followed by a ``---`` break; other fences are left as is.
    """
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        end = _closing(lines, i, m.group(1)) if m else None
        if m is None or end is None:
            out.append(lines[i])
            i += 1
            continue
        wrapped = m.group(2).strip().lower() in infos
        # A wrapper's closing line becomes a thematic break: text after the wrapped document is
        # the model's chatter, not part of its last section.
        out.extend([*lines[i + 1 : end], "---"] if wrapped else lines[i : end + 1])
        i = end + 1
    return out


def has_unclosed_fence(text: str) -> bool:
    """True when ``text`` opens a code fence it never closes (a truncated answer)."""
    lines = text.splitlines()
    return len(code_mask(lines)[0]) < len(lines)

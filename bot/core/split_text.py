"""Long text cut into pieces Slack accepts: at safe points, with ``` code fences balanced in each.

Lengths are measured in UTF-16 code units (an emoji counts 2): at least what Slack counts, whether
it counts code points or UTF-16 units, so a piece that fits here fits there. Fences follow CommonMark: a line of 3+ backticks opens one
(with an optional info string), a bare line of at least as many backticks closes it, so a
````-fenced block may show ``` lines inside it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from bot.errors import SplitError

__all__ = ["clip", "escape", "escaped_len", "split_text", "utf16_len"]

Measure = Callable[[str], int]
Fence = tuple[str, str]  # (backticks, info string)

_FENCE = re.compile(r"[ \t]*(`{3,})([^`]*?)[ \t]*")
_GLUE = {"\u200d", "\ufe0e", "\ufe0f", "\u20e3"}  # zero-width joiner, variation selectors, keycap
_CJK_BREAKS = "。！？；，、：）」』】》"
_MIN_LIMIT = 16


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units: characters outside the BMP (most emoji) count twice."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def escape(text: str) -> str:
    """Escape ``&``, ``<``, ``>`` for Slack mrkdwn, so user text cannot form mentions or links."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escaped_len(text: str) -> int:
    """``utf16_len(escape(text))`` without building the escaped string."""
    return utf16_len(text) + 4 * text.count("&") + 3 * (text.count("<") + text.count(">"))


def _fence_after(state: Fence | None, line: str) -> Fence | None:
    m = _FENCE.fullmatch(line.rstrip("\r\n"))
    if m is None:
        return state
    ticks, info = m.groups()
    if state is None:
        return ticks, info
    if not info and len(ticks) >= len(state[0]):
        return None
    return state  # a ``` line inside a ```` block, or one with an info string: content


def _lines(text: str) -> list[tuple[str, bool]]:
    """(line with its newline, may be a fence line) for each line of ``text``."""
    parts = text.split("\n")
    out = [(p + "\n", True) for p in parts[:-1]]
    if parts[-1]:
        out.append((parts[-1], True))
    return out


def _safe_cut(text: str, cut: int) -> int:
    """Move ``cut`` back so it splits no emoji sequence or combining mark (if it can)."""
    start = cut
    while cut > 1 and (text[cut] in _GLUE or text[cut - 1] == "\u200d" or unicodedata.combining(text[cut])
                       or 0x1F3FB <= ord(text[cut]) <= 0x1F3FF):
        cut -= 1
    return cut if cut > 0 else start


def _fit(text: str, budget: int, measure: Measure) -> int:
    """How many leading characters of ``text`` fit in ``budget``."""
    size = 0
    for n, char in enumerate(text):
        size += measure(char)
        if size > budget:
            return n
    return len(text)


def _split_line(line: str, budget: int, measure: Measure) -> list[str]:
    """Cut one over-long line into pieces of at most ``budget``: at a space, after CJK punctuation,
    or anywhere but inside an emoji sequence."""
    pieces: list[str] = []
    while line and measure(line) > budget:
        fit = _fit(line, budget, measure)
        cut = line.rfind(" ", 0, fit) + 1  # the space stays with the first piece
        if cut <= fit // 3:
            cut = max(line.rfind(p, 0, fit) for p in _CJK_BREAKS) + 1
            if cut <= fit // 3:
                cut = _safe_cut(line, fit)
        cut = max(cut, 1)  # always progress, even when one character is over budget
        pieces.append(line[:cut])
        line = line[cut:]
    return pieces + ([line] if line else [])


def split_text(text: str, limit: int = 3000, *, measure: Measure = utf16_len) -> list[str]:
    """Cut ``text`` into pieces of at most ``limit`` (by ``measure``), each with balanced fences.

    Cuts go at a blank line outside code, else at a line end outside code, else at a line end in
    code, else (one line longer than ``limit``) at a space, after CJK punctuation, or anywhere but
    inside an emoji sequence; none in the first half of a piece if avoidable, and a code block that
    fits one piece whole goes to the next piece rather than being cut. A fence open at a
    cut is closed there and reopened, with its info string, at the start of the next piece; a
    fence never closed in ``text`` is closed at its end. Text that fits and is balanced comes back
    unchanged; blank text gives ``[]``. ``measure`` must be additive (a sum over characters).
    """
    if limit < _MIN_LIMIT:
        raise SplitError(f"split_text needs a limit of at least {_MIN_LIMIT}; got {limit}. Pass a larger limit.")
    if not text.strip():
        return []
    lines = _lines(text)
    end: Fence | None = None
    for line, _ in lines:
        end = _fence_after(end, line)
    if end is None and measure(text) <= limit:
        return [text]
    chunks: list[str] = []
    state: Fence | None = None  # the fence open where the current piece starts
    i = 0
    while i < len(lines):
        if state is None:
            while i < len(lines) and not lines[i][0].strip():
                i += 1  # a piece outside code never starts with blank lines
            if i == len(lines):
                break
        prefix = _reopen(state, limit, measure)
        used, cur, k = measure(prefix), state, i
        marks: list[tuple[int, Fence | None, int]] = []  # (end line, fence there, size) per line end
        while k < len(lines):
            line, fence_ok = lines[k]
            nxt = _fence_after(cur, line) if fence_ok else cur
            closing = _close_len(nxt, measure) - (1 if nxt and line.endswith("\n") else 0)  # reuses the newline
            if used + measure(line) + closing > limit:
                break
            used, cur, k = used + measure(line), nxt, k + 1
            marks.append((k, cur, used))
        if k == i:  # this one line does not fit
            if lines[i][1]:  # cut it into pieces and go again
                line = lines[i][0]
                if _FENCE.fullmatch(line.rstrip("\r\n")):  # a fence line too long to keep: defused
                    line = line.replace("`", "`\u200b", 1)
                budget = limit - measure(prefix) - _close_len(state, measure)
                lines[i:i + 1] = [(p, False) for p in _split_line(line, budget, measure)]
                continue
            k, cur = i + 1, state  # still too big (absurd fences): move on anyway
        elif k < len(lines):
            k, cur = _best_cut(marks, lines, state, limit, measure)
        _emit(chunks, prefix, lines[i:k], cur)
        i, state = k, cur
    return chunks


def _reopen(state: Fence | None, limit: int, measure: Measure) -> str:
    if state is None:
        return ""
    ticks, info = state
    opener = ticks + info if measure(ticks + info) <= limit // 3 else ticks  # an absurd info string is dropped
    return opener + "\n"


def _close_len(state: Fence | None, measure: Measure) -> int:
    return 0 if state is None else 1 + measure(state[0])


def _best_cut(
    marks: list, lines: list[tuple[str, bool]], start: Fence | None, limit: int, measure: Measure
) -> tuple[int, Fence | None]:
    """The line end to cut at, by preference, among those in the second half of the piece; a
    code block that fits one piece whole is moved to the next piece rather than cut."""

    def blank(j: int) -> bool:
        return 0 <= j < len(lines) and not lines[j][0].strip()

    def at_eol(n: int) -> bool:  # not in the middle of a line cut into pieces
        return lines[marks[n][0] - 1][0].endswith("\n")

    def opened_here(n: int) -> bool:  # the piece would end right after a fence opener
        before = marks[n - 1][1] if n > 0 else start
        return before is None and marks[n][1] is not None

    late = [n for n, (_, _, size) in enumerate(marks) if size >= limit // 2] or list(range(len(marks)))
    outside = [n for n in range(len(marks)) if at_eol(n) and marks[n][1] is None]
    tiers = [
        [n for n in late if n in outside and (blank(marks[n][0] - 1) or blank(marks[n][0]))],
        [n for n in late if n in outside],
        [n for n in outside if _block_fits(lines, marks[n][0], limit, measure)],
        [n for n in late if at_eol(n) and not opened_here(n)],
    ]
    for good in tiers:
        if good:
            k, fence, _ = marks[good[-1]]
            return k, fence
    k, fence, _ = marks[-1]
    return k, fence


def _block_fits(lines: list[tuple[str, bool]], k: int, limit: int, measure: Measure) -> bool:
    """True if lines from ``k`` (blank lines, then a fence opener) up to its closer fit in ``limit``."""
    while k < len(lines) and not lines[k][0].strip():
        k += 1
    state: Fence | None = None
    size = 0
    for j in range(k, len(lines)):
        line, fence_ok = lines[j]
        size += measure(line)
        state = _fence_after(state, line) if fence_ok else state
        if j == k and state is None:
            return False  # not a code block
        if state is None or size > limit:
            return size <= limit
    return state is not None and size + _close_len(state, measure) <= limit


def _emit(chunks: list[str], prefix: str, body_lines: list[tuple[str, bool]], fence: Fence | None) -> None:
    body = "".join(line for line, _ in body_lines)
    if not body.strip():
        return
    if fence is None:
        chunks.append(prefix + body.rstrip())
    else:
        chunks.append(prefix + body.rstrip("\r\n") + "\n" + fence[0])


def clip(text: str, limit: int, *, measure: Measure = utf16_len) -> str:
    """``text`` if it fits in ``limit``, else cut (at a space in its second half if any) plus ``…``.

    For short one-piece texts (button labels, notification fallbacks); fences are not balanced.
    """
    if measure(text) <= limit:
        return text
    fit = _fit(text, limit - 1, measure)
    cut = text.rfind(" ", 0, fit + 1)
    if cut < fit // 2:
        cut = _safe_cut(text, fit)
    return text[:cut].rstrip() + "…"

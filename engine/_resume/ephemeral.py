"""``is_ephemeral``: is this Bash command a read-only glance whose output goes stale?

One function serves two callers and must stay one function: ``delegate_guard(allow_glance=True)``
lets the coordinator run exactly these commands itself, and the expire pass
(``engine._resume.expire``) expires exactly these results on resume. Letting a command through
without expiring it leaves a stale ``git status`` in context forever (and misleading); expiring
without letting it through makes the coordinator dispatch a subagent (about 4.3k of start-up
cost) for an ``ls``.

Decision order (the spec's):

1. empty or only whitespace: False;
2. command substitution (``$(``, backtick, ``<(``, ``>(``) outside single quotes: False;
3. after removing safe redirections (``2>&1``, ``>/dev/null``, ``&> /dev/null``...), any ``>`` or
   ``<`` left: False;
4. after removing ``&&`` ``||`` ``;`` ``|``, a lone ``&`` (background job) left: False;
5. split on ``&&`` ``||`` ``;`` ``|`` (and newlines), and every segment must match the whitelist
   in ``engine._resume.ephemeral_rules``, which also refuses the state-changing forms of
   whitelisted verbs (``sed -i``, ``find -delete``, ``git branch -D``, ``git ... --force``...).

Operators and quotes are read the shell's way: a ``|`` or ``;`` inside quotes is text, not a pipe.
Anything the scanner cannot read for sure (an unclosed quote) is refused: a wrong False only costs
a subagent dispatch, a wrong True lets the coordinator change state.
"""

from __future__ import annotations

import functools
import re
import shlex

from engine._resume.ephemeral_rules import segment_ok, segment_yields_value

__all__ = ["is_ephemeral", "yields_value"]

_END = r"(?=[\s;&|)]|$)"
_SAFE_REDIRECT = re.compile(
    r"\d?>&\d" + _END  # 2>&1, >&2
    + r"|&>>?\s*/dev/null" + _END  # &> /dev/null
    + r"|\d?>>?\s*/dev/null" + _END  # >/dev/null, 2>/dev/null, 1>> /dev/null
    + r"|\d?<\s*/dev/null" + _END  # </dev/null
)
_SEPARATOR = re.compile(r"&&|\|\||;|\||\n")
_SUBSTITUTION = ("$(", "`", "<(", ">(")


@functools.lru_cache(maxsize=4096)  # the same glances recur; a load checks every old Bash call
def is_ephemeral(cmd: str) -> bool:
    """True when ``cmd`` is a read-only glance (git status, ls, grep...) per the spec's five steps.

    Never raises: a command that cannot be parsed for sure (an unclosed quote) is not ephemeral.
    """
    words = _simple_commands(cmd)
    return bool(words) and all(w is not None and segment_ok(w) for w in words)


@functools.lru_cache(maxsize=4096)
def yields_value(cmd: str) -> bool:
    """True when a simple command of ``cmd`` prints a value the run may use again (``date``,
    ``pwd``, ``mktemp``, ``git rev-parse``...): such a result is never expired."""
    return any(w and segment_yields_value(w) for w in _simple_commands(cmd) or [])


def _simple_commands(cmd: str) -> list[list[str] | None] | None:
    """The words of each simple command of ``cmd`` (None for one shlex cannot split), or None
    when steps 1-4 already rule ``cmd`` out."""
    if not cmd or not cmd.strip():  # 1
        return None
    masked_sq = _mask(cmd, double=False)
    masked = _mask(cmd, double=True)
    if masked is None or masked_sq is None:
        return None
    if any(s in masked_sq for s in _SUBSTITUTION):  # 2: "$(" runs even inside double quotes
        return None
    text, masked = _blank_safe_redirects(cmd, masked)
    if "<" in masked or ">" in masked:  # 3
        return None
    if "&" in re.sub(r"&&|\|\|", "", masked):  # 4: the lone & of a background job
        return None
    segments = []
    start = 0
    for m in _SEPARATOR.finditer(masked):  # 5: split at the operators the shell sees
        segments.append(text[start : m.start()])
        start = m.end()
    segments.append(text[start:])
    words = [_split(s) for s in segments]
    return [w for w in words if w != []]


def _mask(cmd: str, *, double: bool) -> str | None:
    """``cmd`` with quoted characters (and backslash-escaped ones) replaced by ``_``, same length.

    ``double=False`` masks only single quotes and escapes (what ``$(`` ignores). Returns None for
    an unclosed quote.
    """
    out = []
    quote = ""
    i = 0
    while i < len(cmd):
        c = cmd[i]
        if quote == "'":
            out.append("'" if c == "'" else "_")
            quote = "" if c == "'" else quote
        elif quote == '"':
            if c == "\\" and i + 1 < len(cmd):
                out.append("__")
                i += 2
                continue
            out.append('"' if c == '"' else ("_" if double else c))
            quote = "" if c == '"' else quote
        elif c == "\\":
            out.append("_" * len(cmd[i : i + 2]))
            i += 2
            continue
        else:
            out.append(c)
            quote = c if c in "'\"" else ""
        i += 1
    return None if quote else "".join(out)


def _blank_safe_redirects(text: str, masked: str) -> tuple[str, str]:
    """Blank out the safe redirections in both strings, keeping positions aligned."""
    for m in reversed(list(_SAFE_REDIRECT.finditer(masked))):
        pad = " " * (m.end() - m.start())
        text = text[: m.start()] + pad + text[m.end() :]
        masked = masked[: m.start()] + pad + masked[m.end() :]
    return text, masked


def _split(segment: str) -> list[str] | None:
    try:
        return shlex.split(segment)
    except ValueError:
        return None

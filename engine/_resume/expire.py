"""``expire_ephemeral``: on resume, old glances (``git status``, ``ls``...) become a short note.

A glance's output goes stale: an old ``git status`` left in context misleads, and running it
again is cheap. Only Bash results whose command ``is_ephemeral`` are candidates, only on the chain
the CLI resumes (``engine._resume.chain``), and the ``keep_recent`` newest of them stay. The note
never makes the context bigger, and a glance that printed a value (``date``, ``pwd``) stays.
"""

from __future__ import annotations

from engine._lang import words
from engine._resume.entries import Calls, Entry, blocks_of, calls_of, command_of, result_text
from engine._resume.ephemeral import is_ephemeral, yields_value
from engine._resume.policies import EphemeralPolicy

__all__ = ["expire_ephemeral"]

CMD_CHARS = 200  # a host text with {cmd}: a long pipeline is cut; the model still sees the call


def expire_ephemeral(entries: list[Entry], policy: EphemeralPolicy, calls: Calls | None = None) -> dict[str, int]:
    """Replace old ephemeral Bash results in ``entries`` (the shown chain) with ``policy.text``.

    The ``keep_recent`` newest ephemeral results stay; an older one is expired only when it is
    text of at most ``max_chars``, longer than the note, and its command prints no value the run
    may use again (``yields_value``). Edits in place. Returns ``{"expired": n, "expired_chars":
    characters removed}``. Walks newest first, so only the newest few calls and the results that
    could be expired are parsed (parsing every old command dominated the load). ``calls``: the
    chain's index, when the caller has one.
    """
    uses = (calls or calls_of(entries)).uses
    later_turns = _later_assistant_turns(entries)
    report = {"expired": 0, "expired_chars": 0}
    kept = 0
    for index in range(len(entries) - 1, -1, -1):
        entry = entries[index]
        if entry.get("type") != "user" or entry.get("toolDenialKind"):
            continue  # a refused or interrupted call never ran: nothing of it can go stale
        for block in reversed(blocks_of(entry) or []):
            if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                continue
            use = uses.get(block.get("tool_use_id", ""))
            if not use or use.get("name") != "Bash" or (use.get("input") or {}).get("run_in_background"):
                continue
            cmd = command_of(use)
            if kept < max(policy.keep_recent, 0):
                kept += is_ephemeral(cmd)
                continue
            text = result_text(block)
            if text is None or len(text) > policy.max_chars:
                continue  # images stay; a long result is the trim pass's to spill, not to drop
            note = _note(policy.text or words().EXPIRED_TEXT, cmd, later_turns[index])
            if len(note) >= len(text) or not is_ephemeral(cmd) or yields_value(cmd):
                continue
            block["content"] = note
            report["expired"] += 1
            report["expired_chars"] += len(text) - len(note)
    return report


def _note(template: str, cmd: str, age: int) -> str:
    short = cmd if len(cmd) <= CMD_CHARS else cmd[: CMD_CHARS - 1] + "…"
    return template.replace("{cmd}", short).replace("{age}", str(age))


def _later_assistant_turns(entries: list[Entry]) -> list[int]:
    """For each index, how many assistant responses (distinct message ids) come after it."""
    seen: set[str] = set()
    counts = [0] * len(entries)
    for i in range(len(entries) - 1, -1, -1):
        counts[i] = len(seen)
        e = entries[i]
        msg = e.get("message")
        if e.get("type") == "assistant" and isinstance(msg, dict) and not e.get("isApiErrorMessage"):
            seen.add(str(msg.get("id") or e.get("uuid") or i))
    return counts

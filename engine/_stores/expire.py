"""``expire_ephemeral``: on resume, old glances (``git status``, ``ls``...) become a short note.

A glance's output goes stale: an old ``git status`` left in context misleads, and running it
again is cheap. Only Bash results whose command ``is_ephemeral`` are candidates, only on the chain
the CLI resumes (``engine._stores.chain``), and the ``keep_recent`` newest of them stay.
"""

from __future__ import annotations

from engine._stores.entries import Entry, blocks_of, command_of, result_text, tool_uses
from engine._stores.ephemeral import EphemeralPolicy, is_ephemeral

__all__ = ["expire_ephemeral"]

CMD_CHARS = 200  # a long pipeline is cut in the expiry note; the model can still see the call


def expire_ephemeral(entries: list[Entry], policy: EphemeralPolicy) -> dict[str, int]:
    """Replace old ephemeral Bash results in ``entries`` (the shown chain) with ``policy.text``.

    Edits in place. Returns ``{"expired": n, "expired_chars": characters removed}``.
    """
    uses = tool_uses(entries)
    later_turns = _later_assistant_turns(entries)
    candidates = []
    for index, entry in enumerate(entries):
        if entry.get("type") != "user" or entry.get("toolDenialKind"):
            continue  # a refused or interrupted call never ran: nothing of it can go stale
        for block in blocks_of(entry) or []:
            if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                continue
            use = uses.get(block.get("tool_use_id", ""))
            background = isinstance(use, dict) and (use.get("input") or {}).get("run_in_background")
            if use and use.get("name") == "Bash" and not background and is_ephemeral(command_of(use)):
                candidates.append((index, block, command_of(use)))
    report = {"expired": 0, "expired_chars": 0}
    for index, block, cmd in candidates[: max(len(candidates) - max(policy.keep_recent, 0), 0)]:
        text = result_text(block)
        if text is None or len(text) > policy.max_chars:
            continue  # images stay; a long result is the trim pass's to spill, not to drop
        short = cmd if len(cmd) <= CMD_CHARS else cmd[: CMD_CHARS - 1] + "…"
        note = policy.text.replace("{cmd}", short).replace("{age}", str(later_turns[index]))
        block["content"] = note
        report["expired"] += 1
        report["expired_chars"] += max(len(text) - len(note), 0)
    return report


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

"""The spill passes: on resume, old bulky tool results and Write/Edit inputs move to files.

What the model is shown of an old result over ``TrimPolicy.min_chars`` becomes a pointer line to a
file in the workspace plus its first 400 characters, so it can still Read the whole text back; the
stored rows never change. Files are named by content (``engine._resume.spill_file``), so a second
resume of the same session rewrites nothing. A text that cannot be written stays whole, with one
log line: the session must load.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from engine._errors import FlowerError
from engine._resume.entries import Calls, Entry, calls_of, replace_text, text_parts
from engine._resume.file_calls import WRITE_FIELDS
from engine._resume.policies import TrimPolicy
from engine._resume.shrink import written_pointer
from engine._resume.spill_file import safe_text, write_spill

__all__ = ["PREVIEW_CHARS", "spill_folder", "spill_results", "spill_written_inputs"]

log = logging.getLogger(__name__)

PREVIEW_CHARS = 400  # the same preview length as spill_guard's pointer line


def _old_results(calls: Calls, policy: TrimPolicy) -> list[tuple[Entry, dict[str, Any]]]:
    """The tool results older than the ``keep_recent`` newest, in file order."""
    return calls.results[: max(len(calls.results) - max(policy.keep_recent, 0), 0)]


def _spill(spill_dir: Path, text: str, anchor: Path | None) -> Path | None:
    try:  # beneath the workspace: the run may have put a link at .flower or .flower/spill since
        return write_spill(spill_dir, text, anchor=spill_dir.parent if anchor is None else anchor)
    except (OSError, ValueError) as exc:  # the session must load: this text stays as it is
        log.warning("could not spill %d characters to %s (%s); they stay in context", len(text), spill_dir, exc)
        return None


def spill_results(
    entries: list[Entry], policy: TrimPolicy, spill_dir: Path, calls: Calls | None = None, *,
    anchor: Path | None = None,
) -> dict[str, int]:
    """Move the text of old, long tool results to files in ``spill_dir``; pointers stay, in place.

    Returns ``{"spilled": n, "spilled_chars": characters removed}``. Files are named by content
    hash, so loading the same session again rewrites nothing. Any text spills (lone surrogates
    included, see ``spill_file``); a result that cannot be written stays whole, with one log line.
    ``calls``: the chain's index, when the caller has one. ``anchor``: the folder the host made
    that holds ``spill_dir`` (the workspace), below which no link is followed (default: its parent).
    """
    calls = calls or calls_of(entries)
    report = {"spilled": 0, "spilled_chars": 0}
    for _entry, block in _old_results(calls, policy):
        if (calls.uses.get(block.get("tool_use_id", "")) or {}).get("name") in policy.exempt_tools:
            continue
        text = text_parts(block)
        if len(text) <= policy.min_chars or (path := _spill(spill_dir, text, anchor)) is None:
            continue
        pointer = (
            f"[Tool result trimmed on resume: its {len(text)} characters are in {path}. "
            f"Read that file for the full text. The first {PREVIEW_CHARS} characters:]\n"
            + safe_text(text[:PREVIEW_CHARS])
        )
        replace_text(block, pointer)
        report["spilled"] += 1
        report["spilled_chars"] += max(len(text) - len(pointer), 0)
    return report


def spill_written_inputs(
    entries: list[Entry], policy: TrimPolicy, spill_dir: Path, calls: Calls | None = None, *,
    anchor: Path | None = None,
) -> dict[str, int]:
    """Move the long text inputs of old Write/Edit calls to files in ``spill_dir``; pointers stay.

    Old: the call's result is older than the ``keep_recent`` newest. Long: over ``min_chars``.
    The pointer names the file written and the spilled copy (the file may have changed since).
    Returns ``{"inputs_spilled": calls, "inputs_spilled_chars": characters removed}``.
    """
    calls = calls or calls_of(entries)
    old = {b.get("tool_use_id") for _e, b in _old_results(calls, policy)}
    report = {"inputs_spilled": 0, "inputs_spilled_chars": 0}
    for use_id, use in calls.uses.items():
        inp = use.get("input")
        if use_id not in old or use.get("name") not in WRITE_FIELDS or not isinstance(inp, dict):
            continue
        saved = 0
        for name in WRITE_FIELDS[use["name"]]:
            text = inp.get(name)
            if (not isinstance(text, str) or len(text) <= policy.min_chars
                    or (spilled := _spill(spill_dir, text, anchor)) is None):
                continue
            pointer = written_pointer(str(inp.get("file_path")), text,
                                      f"the text is in {spilled}; the file may have changed since")
            inp[name] = pointer
            saved += len(text) - len(pointer)
        if saved:
            report["inputs_spilled"] += 1
            report["inputs_spilled_chars"] += saved
    return report


def spill_folder(workspace: Path, policy: TrimPolicy) -> tuple[Path, Path]:
    """The spill folder, and its top folder in the workspace (kept out of git: spilled output can
    hold keys). Raises ``FlowerError`` for a folder outside the workspace: refused when the store
    is built, not at the resume that would have written there."""
    root = workspace.resolve()
    spill = (root / policy.spill_dirname).resolve()
    if spill == root or root not in spill.parents:
        raise FlowerError(
            f"TrimPolicy.spill_dirname must name a folder inside the workspace {root}; got "
            f"{policy.spill_dirname!r}. Use a relative path such as '.flower/spill'."
        )
    return spill, root / spill.relative_to(root).parts[0]

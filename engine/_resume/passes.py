"""The shaping passes a resumed session goes through, in the one order they run (``PRUNING``).

Every pass edits only what ``load()`` returns (what the model is shown on resume), never a stored
row, and sees only the chain the CLI will show (``Load.shown``, ``engine._resume.chain``): cutting
elsewhere saves nothing, counting elsewhere spends "keep the newest N" on results nobody sees.
Two red lines hold throughout: a ``tool_result`` block always stays (only its ``content``
changes, ``tool_use_id`` and ``is_error`` are kept; a missing one is "Missing Tool Result
Block"), and ``isCompactSummary`` entries are never touched. Text is what is cut; an image block
is atomic: kept whole, or (an old one) replaced whole by a note naming its file, its base64 never
cut in half. Document blocks are left as they are. The entry's ``toolUseResult`` field (the
tool's structured output, next to ``message``) is left as stored: measured with the bundled CLI,
the model is shown ``message.content`` only on resume, and a Read repeated after resume returns
the file in full rather than an "unchanged" stub.

The order is the whole point of this module, so it is written once, as a list: ``TRIMMING`` is
what ``TrimmingSessionStore`` runs, and ``PRUNING`` is the same list with the prune pass after it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine._files import keep_out_of_git
from engine._resume.entries import Calls, Entry
from engine._resume.expire import expire_ephemeral
from engine._resume.old_images import drop_old_images
from engine._resume.policies import EphemeralPolicy, PrunePolicy, TrimPolicy
from engine._resume.pruning import prune_entries
from engine._resume.reasoning import drop_old_thinking
from engine._resume.shrink import (
    drop_rerun_outputs,
    drop_stale_views,
    drop_superseded_attachments,
    drop_superseded_todos,
    shrink_written_inputs,
)
from engine._resume.spill import spill_results, spill_written_inputs

__all__ = ["PRUNING", "TRIMMING", "Load", "Pass"]

log = logging.getLogger(__name__)


@dataclass
class Load:
    """One load being shaped: what the passes share, built fresh for every ``load()``.

    ``entries`` is what ``load()`` returns (a pass that drops entries replaces it); ``shown``
    holds the same dicts, the chain the CLI shows (a dropping pass takes its entries out of it
    too, in place). ``calls`` indexes ``shown``'s tool calls once, before any pass: scanning once
    per pass was a large part of a load, and the index stays valid until a pass drops blocks.
    The policies are the store's at the moment of the load.
    """

    entries: list[Entry]
    shown: list[Entry]
    calls: Calls
    policy: TrimPolicy
    ephemeral: EphemeralPolicy
    prune: PrunePolicy
    spill_dir: Path
    spill_top: Path  # the spill folder's top folder in the workspace, kept out of git; its parent is
    # the workspace, the folder the host made: both are reached beneath it (the run may plant links)
    spill_ready: bool = False  # set by the spill-folder pass once the folder can be written


@dataclass(frozen=True)
class Pass:
    """One step of the shaping: ``run`` edits the load and returns counts for ``last_report``;
    it runs only when ``when`` says so (a switched-off policy adds no counts at all)."""

    name: str
    run: Callable[[Load], dict[str, int]]
    when: Callable[[Load], bool]


def _expiring(load: Load) -> bool:
    return load.ephemeral.enabled


def _trimming(load: Load) -> bool:
    return load.policy.enabled


def _spilling(load: Load) -> bool:
    return load.policy.enabled and load.spill_ready


def _always(load: Load) -> bool:
    return True  # the prune policy switches its cuts off one by one, inside prune_entries


def _spill_folder(load: Load) -> dict[str, int]:
    try:
        keep_out_of_git(load.spill_top, anchor=load.spill_top.parent)
    except OSError as exc:  # a read-only workspace: resume with the results in place
        log.warning("could not prepare the spill folder %s (%s); nothing spilled", load.spill_dir, exc)
    else:
        load.spill_ready = True
    return {}


def _todos(load: Load) -> dict[str, int]:
    load.entries, counts = drop_superseded_todos(load.entries, load.shown, load.calls)
    return counts


def _attachments(load: Load) -> dict[str, int]:
    load.entries, counts = drop_superseded_attachments(load.entries, load.shown)
    return counts


def _thinking(load: Load) -> dict[str, int]:
    load.entries, counts = drop_old_thinking(load.entries, load.shown, load.policy.keep_recent)
    return counts


def _prune(load: Load) -> dict[str, int]:
    load.entries, counts = prune_entries(load.entries, load.prune, shown=load.shown)
    return counts


TRIMMING: tuple[Pass, ...] = (
    # old glances (git status, ls) become a short note: first, as the spec orders it, on their own switch
    Pass("expire", lambda d: expire_ephemeral(d.shown, d.ephemeral, d.calls), _expiring),
    # file views a later call showed again or changed become a note: before the spill, which would file them
    Pass("stale_views", lambda d: drop_stale_views(d.shown, d.policy.keep_recent, d.calls), _trimming),
    # old outputs of a command run again word for word become a note: before the spill, likewise
    Pass("reruns", lambda d: drop_rerun_outputs(d.shown, d.policy.keep_recent, d.calls), _trimming),
    # Write/Edit inputs a later call read back or changed shrink to a pointer: before the spill, likewise
    Pass("shrink_written", lambda d: shrink_written_inputs(d.shown, d.calls), _trimming),
    # the spill folder (kept out of git) is made once for both spills; a read-only workspace skips them
    Pass("spill_folder", _spill_folder, _trimming),
    # old tool results over min_chars move to a spill file; a pointer and a preview stay
    Pass("spill_results", lambda d: spill_results(d.shown, d.policy, d.spill_dir, d.calls,
                                                  anchor=d.spill_top.parent), _spilling),
    # old Write/Edit inputs over min_chars move to a spill file the same way
    Pass("spill_inputs", lambda d: spill_written_inputs(d.shown, d.policy, d.spill_dir, d.calls,
                                                        anchor=d.spill_top.parent), _spilling),
    # images before the window become a note naming their file (Read it again): whole blocks, never cut
    Pass("images", lambda d: drop_old_images(d.shown, d.policy.keep_recent, d.calls), _trimming),
    # all TodoWrite calls but the newest go with their results: the first to drop blocks, so all above share calls
    Pass("todos", _todos, _trimming),
    # older copies of the same attachment (skill listing, memory file...) go, their children re-linked
    Pass("attachments", _attachments, _trimming),
    # thinking blocks of turns before the keep_recent window go; the newest turn keeps its own
    Pass("thinking", _thinking, _trimming),
)

PRUNING: tuple[Pass, ...] = (
    *TRIMMING,
    # API errors, old denials, interruption debris go last, from what the trim left (it re-finds the calls)
    Pass("prune", _prune, _always),
)

"""``TrimmingSessionStore``: on resume, expire stale glances and spill old bulky tool results.

Both passes edit only the entries ``load()`` returns (what the model is shown on resume); the
stored rows never change a byte. ``TrimLayer`` does it over any store (SQLite here, PostgreSQL in
``engine._stores.postgres_layers``), ``TrimmingSessionStore`` over SQLite. Two red lines hold
throughout: a ``tool_result`` block always stays (only its ``content`` changes, ``tool_use_id``
and ``is_error`` are kept; a missing one is "Missing Tool Result Block"), and
``isCompactSummary`` entries are never touched. Image and
document blocks are left as they are: only text is trimmed.

The entry's ``toolUseResult`` field (the tool's structured output, next to ``message``) is left
as stored: measured with the bundled CLI, the model is shown ``message.content`` only on resume,
and a Read repeated after resume returns the file in full rather than an "unchanged" stub.

Subagent transcripts (keys with a ``subpath``) are trimmed the same way: the SDK loads them
through the same ``load()`` when it materializes a session, and a stale ``git status`` misleads a
worker as much as the coordinator.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread
from claude_agent_sdk import SessionKey, SessionStoreEntry

from engine._files import keep_out_of_git
from engine._errors import FlowerError
from engine._stores.chain import ShownSize, resume_chain
from engine._stores.entries import (  # re-exported: prune.py and the tests read them from here
    Calls,
    Entry,
    blocks_of,
    calls_of,
    replace_text,
    result_text,
    text_parts,
    tool_results,
    tool_uses,
)
from engine._stores.ephemeral import EphemeralPolicy
from engine._stores.expire import expire_ephemeral
from engine._stores.file_calls import WRITE_FIELDS
from engine._stores.reasoning import drop_old_thinking
from engine._stores.shrink import (
    drop_rerun_outputs,
    drop_stale_views,
    drop_superseded_attachments,
    drop_superseded_todos,
    shrink_written_inputs,
    written_pointer,
)
from engine._stores.spill_file import safe_text, write_spill
from engine._stores.sqlite import SqliteSessionStore

__all__ = [
    "EphemeralPolicy",
    "TrimLayer",
    "TrimPolicy",
    "TrimmingSessionStore",
    "expire_ephemeral",
    "spill_results",
    "spill_written_inputs",
]

log = logging.getLogger(__name__)

PREVIEW_CHARS = 400  # the same preview length as spill_guard's pointer line


@dataclass
class TrimPolicy:
    """Spill tool results older than the ``keep_recent`` newest, whose text exceeds ``min_chars``.

    Spilled text goes to ``<workspace>/<spill_dirname>/<sha256[:16]>.txt`` (inside the workspace;
    a different folder from spill_guard's on purpose: that one is the cut made at once, this one
    the cut made on resume) and is replaced by a pointer line plus the first 400 characters.
    Results of ``exempt_tools`` (subagent reports, plan approvals) are never spilled. The text
    inputs of old Write/Edit calls (those whose result is outside the window) spill the same way,
    to a pointer naming the file written and the spilled copy. With the policy on, written inputs
    a later call read back or changed, views of a file a later call superseded and superseded
    attachments and todo lists are left out too (``engine._stores.shrink``), and so is the
    thinking of turns before the window (``engine._stores.reasoning``).
    """

    keep_recent: int = 20
    min_chars: int = 2000
    spill_dirname: str = ".flower/spill"
    enabled: bool = True
    # Beyond the spec: what a coordinator needs most is never spilled. A subagent's report (up
    # to 35k characters measured) is the work it bought; a plan approval is the person's decision.
    exempt_tools: tuple[str, ...] = ("Agent", "Task", "ExitPlanMode")


# -- the spill pass ----------------------------------------------------------------------------


def _old_results(calls: Calls, policy: TrimPolicy) -> list[tuple[Entry, dict[str, Any]]]:
    """The tool results older than the ``keep_recent`` newest, in file order."""
    return calls.results[: max(len(calls.results) - max(policy.keep_recent, 0), 0)]


def _spill(spill_dir: Path, text: str) -> Path | None:
    try:
        return write_spill(spill_dir, text)
    except (OSError, ValueError) as exc:  # the session must load: this text stays as it is
        log.warning("could not spill %d characters to %s (%s); they stay in context", len(text), spill_dir, exc)
        return None


def spill_results(
    entries: list[Entry], policy: TrimPolicy, spill_dir: Path, calls: Calls | None = None
) -> dict[str, int]:
    """Move the text of old, long tool results to files in ``spill_dir``; pointers stay, in place.

    Returns ``{"spilled": n, "spilled_chars": characters removed}``. Files are named by content
    hash, so loading the same session again rewrites nothing. Any text spills (lone surrogates
    included, see ``spill_file``); a result that cannot be written stays whole, with one log line.
    ``calls``: the chain's index, when the caller has one.
    """
    calls = calls or calls_of(entries)
    report = {"spilled": 0, "spilled_chars": 0}
    for _entry, block in _old_results(calls, policy):
        if (calls.uses.get(block.get("tool_use_id", "")) or {}).get("name") in policy.exempt_tools:
            continue
        text = text_parts(block)
        if len(text) <= policy.min_chars or (path := _spill(spill_dir, text)) is None:
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
    entries: list[Entry], policy: TrimPolicy, spill_dir: Path, calls: Calls | None = None
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
                    or (spilled := _spill(spill_dir, text)) is None):
                continue
            pointer = written_pointer(str(inp.get("file_path")), text,
                                      f"the text is in {spilled}; the file may have changed since")
            inp[name] = pointer
            saved += len(text) - len(pointer)
        if saved:
            report["inputs_spilled"] += 1
            report["inputs_spilled_chars"] += saved
    return report


# -- the store ---------------------------------------------------------------------------------


class TrimLayer:
    """The trim layer over any session store: ``load()`` expires stale glances, then spills bulky results.

    A mixin placed before a store class (``class S(TrimLayer, SqliteSessionStore)``), whose
    ``__init__`` calls ``_setup_trim``. ``load()``: the base store's ``load()``, clear
    ``last_report``, ``expire`` if ``ephemeral.enabled``, ``trim`` if ``policy.enabled``. A
    main-transcript key starts a new ``last_report``; the subagent keys the SDK loads right
    after it add to that report. The base store's rows never change.
    """

    workspace: Path
    policy: TrimPolicy
    ephemeral: EphemeralPolicy
    last_report: dict[str, int]

    def _setup_trim(
        self, workspace: str | Path, policy: TrimPolicy | None, ephemeral: EphemeralPolicy | None
    ) -> None:
        self.workspace = Path(workspace)
        self.policy = policy if policy is not None else TrimPolicy()
        self.ephemeral = ephemeral if ephemeral is not None else EphemeralPolicy()
        self.last_report = {}
        self._spill, self._spill_top = self._spill_dir()  # outside the workspace: refused now, not at resume

    def _spill_dir(self) -> tuple[Path, Path]:
        """The spill folder, and its top folder in the workspace (kept out of git: spilled output can hold keys)."""
        root = self.workspace.resolve()
        spill = (root / self.policy.spill_dirname).resolve()
        if spill == root or root not in spill.parents:
            raise FlowerError(
                f"TrimPolicy.spill_dirname must name a folder inside the workspace {root}; got "
                f"{self.policy.spill_dirname!r}. Use a relative path such as '.flower/spill'."
            )
        return spill, root / spill.relative_to(root).parts[0]

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The stored entries with old glances expired and old bulky results spilled."""
        entries = await super().load(key)  # type: ignore[misc]  # the base store: next in the MRO
        if not key.get("subpath"):
            self.last_report = {}
        if entries:
            entries = await anyio.to_thread.run_sync(self._transform, entries, not key.get("subpath"))
            if not key.get("subpath"):  # what a resume costs, for whoever reads the run's log
                log.info("session %s %s", key.get("session_id"), self.trim_report())
        return entries

    def _transform(self, entries: list[Entry], main_thread: bool) -> list[Entry]:
        """The entries to return; every pass sees only the chain the CLI will show."""
        shown = resume_chain(entries, main_thread=main_thread).shown
        size = ShownSize(shown)
        entries = self._cut(entries, shown)
        self._add({"shown_before": size.before, "shown_after": size.after(entries)})
        return entries

    def _cut(self, entries: list[Entry], shown: list[Entry]) -> list[Entry]:
        """Edit the shown entries in place and return what to load; subclasses add passes after
        calling this (they may drop entries: ``shown`` holds the same objects as ``entries``)."""
        calls = calls_of(shown)  # valid until a pass drops blocks: those come last
        if self.ephemeral.enabled:
            self._add(expire_ephemeral(shown, self.ephemeral, calls))
        if not self.policy.enabled:
            return entries
        # What a later call superseded goes first: it needs no spill file, and is not spilled for nothing.
        self._add(drop_stale_views(shown, self.policy.keep_recent, calls))
        self._add(drop_rerun_outputs(shown, self.policy.keep_recent, calls))
        self._add(shrink_written_inputs(shown, calls))
        try:
            keep_out_of_git(self._spill_top)
        except OSError as exc:  # a read-only workspace: resume with the results in place
            log.warning("could not prepare the spill folder %s (%s); nothing spilled", self._spill, exc)
        else:
            self._add(spill_results(shown, self.policy, self._spill, calls))
            self._add(spill_written_inputs(shown, self.policy, self._spill, calls))
        entries, counts = drop_superseded_todos(entries, shown, calls)  # the first to drop blocks
        self._add(counts)
        entries, counts = drop_superseded_attachments(entries, shown)
        self._add(counts)
        entries, counts = drop_old_thinking(entries, shown, self.policy.keep_recent)
        self._add(counts)
        return entries

    def _add(self, counts: dict[str, int]) -> None:
        for name, n in counts.items():
            self.last_report[name] = self.last_report.get(name, 0) + n

    def trim_report(self) -> str:
        """One line on what the last resume cut, e.g. for a log: the counts, then the characters
        of the chain the CLI resumes before and after (``last_report["shown_before"]`` and
        ``["shown_after"]``, measured on what ``load()`` returned, the subagent keys included)."""
        r = self.last_report
        parts = [
            f"{r.get(name, 0)} {label}" for name, label in self.report_labels() if r.get(name, 0)
        ]
        if not parts:
            return "load: nothing trimmed"
        before, after = r.get("shown_before", 0), r.get("shown_after", 0)
        return "load: " + ", ".join(parts) + (
            f" (shown {before} -> {after} characters, {before - after} kept out of context)")

    @classmethod
    def report_labels(cls) -> list[tuple[str, str]]:
        """``(last_report key, label)`` pairs in the order ``trim_report()`` prints them."""
        return [("expired", "stale glances expired"), ("stale_views", "superseded file views left out"),
                ("reruns", "outputs of commands run again left out"),
                ("spilled", "bulky results spilled"), ("inputs_spilled", "old written inputs spilled"),
                ("shrunk", "written inputs shrunk"), ("attachments", "superseded attachments dropped"),
                ("todos", "superseded todo lists dropped"), ("thinking", "old thinking blocks dropped")]


class TrimmingSessionStore(TrimLayer, SqliteSessionStore):
    """``SqliteSessionStore`` whose ``load()`` expires stale glances, then spills bulky results (``TrimLayer``)."""

    def __init__(
        self,
        path: str | Path,
        workspace: str | Path,
        policy: TrimPolicy | None = None,
        ephemeral: EphemeralPolicy | None = None,
    ) -> None:
        super().__init__(path)
        self._setup_trim(workspace, policy, ephemeral)

"""``ShapedStore``: a session store whose ``load()`` runs an ordered list of shaping passes.

One wrapper, whatever the backend: it holds a backend store (SQLite or PostgreSQL, from
``engine._stores``) and a list of passes (``engine._resume.passes``), so what a resumed model is
shown cannot depend on where the session was kept. ``append`` and every other call go straight
to the backend: shaping happens at ``load()`` only, and the stored rows never change a byte.

Subagent transcripts (keys with a ``subpath``) are shaped the same way: the SDK loads them through
the same ``load()`` when it materializes a session, and a stale ``git status`` misleads a worker
as much as the coordinator. A main-transcript key starts a new ``last_report``; the subagent keys
the SDK loads right after it add to that report.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import anyio.to_thread
from claude_agent_sdk import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
)

from engine._resume.chain import ShownSize, resume_chain
from engine._resume.entries import Entry, calls_of
from engine._resume.passes import Load, Pass
from engine._resume.policies import EphemeralPolicy, PrunePolicy, TrimPolicy
from engine._resume.spill import spill_folder

__all__ = ["REPORT_LABELS", "ShapedStore", "trim_report"]

log = logging.getLogger(__name__)

# What ``trim_report()`` prints, in its order (older than the pass list's, and kept: logs compare).
REPORT_LABELS: tuple[tuple[str, str], ...] = (
    ("expired", "stale glances expired"), ("stale_views", "superseded file views left out"),
    ("reruns", "outputs of commands run again left out"),
    ("spilled", "bulky results spilled"), ("inputs_spilled", "old written inputs spilled"),
    ("shrunk", "written inputs shrunk"), ("attachments", "superseded attachments dropped"),
    ("todos", "superseded todo lists dropped"), ("thinking", "old thinking blocks dropped"),
    ("images", "old images left out"),
    ("api_errors", "API errors dropped"), ("denials", "old denied calls dropped"),
    ("interrupted", "interrupted results neutralized"),
)


class ShapedStore(SessionStore):
    """``backend`` with ``passes`` run, in order, over every non-empty ``load()``.

    Public attributes: ``backend``, ``passes``, ``workspace``, the policies the passes read at
    each load (``policy``, ``ephemeral``, ``prune``; one a pass of the list does not read is
    never used) and ``last_report`` (counts of the last load; ``shown_before``/``shown_after``
    are the characters of the chain the CLI resumes, measured on what ``load()`` returned). The
    spill folder is checked at construction: one outside the workspace raises ``FlowerError``.
    Any other attribute (``path``, ``url``, ``close``...) is the backend's: a shaped store is used
    wherever its backend is, and the named stores count as their backend class for ``isinstance``.
    """

    def __init__(
        self,
        backend: SessionStore,
        passes: Iterable[Pass],
        workspace: str | Path,
        policy: TrimPolicy | None = None,
        ephemeral: EphemeralPolicy | None = None,
        prune: PrunePolicy | None = None,
    ) -> None:
        self.backend = backend
        self.passes = tuple(passes)
        self.workspace = Path(workspace)
        self.policy = policy if policy is not None else TrimPolicy()
        self.ephemeral = ephemeral if ephemeral is not None else EphemeralPolicy()
        self.prune = prune if prune is not None else PrunePolicy()
        self.last_report: dict[str, int] = {}
        self._spill, self._spill_top = spill_folder(self.workspace, self.policy)  # refused now, not at resume

    def __getattr__(self, name: str) -> Any:
        """The backend's attribute (only reached for names the wrapper itself does not have)."""
        backend = self.__dict__.get("backend")
        if backend is None or name.startswith("__"):  # half-built (copy, pickle): no backend to ask yet
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(backend, name)

    # -- shaping ----------------------------------------------------------------------------

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The backend's entries of ``key``, shaped by the passes (None for a key never written)."""
        entries = await self.backend.load(key)
        main = not key.get("subpath")
        if main:
            self.last_report = {}
        if entries:
            entries = await anyio.to_thread.run_sync(self.shape, entries, main)
            if main:  # what a resume costs, for whoever reads the run's log
                log.info("session %s %s", key.get("session_id"), self.trim_report())
        return entries

    def shape(self, entries: list[Entry], main_thread: bool = True) -> list[Entry]:
        """Run the passes over ``entries`` (edited in place) and return what to load; synchronous,
        so ``load()`` runs it in a worker thread. ``main_thread=False``: a subagent transcript."""
        shown = resume_chain(entries, main_thread=main_thread).shown
        size = ShownSize(shown)
        load = Load(entries, shown, calls_of(shown), self.policy, self.ephemeral, self.prune,
                    self._spill, self._spill_top)
        for step in self.passes:
            if step.when(load):
                self._add(step.run(load))
        self._add({"shown_before": size.before, "shown_after": size.after(load.entries)})
        return load.entries

    def _add(self, counts: dict[str, int]) -> None:
        for name, n in counts.items():
            self.last_report[name] = self.last_report.get(name, 0) + n

    def trim_report(self) -> str:
        """One line on what the last resume cut, e.g. for a log: the counts, then the characters
        of the chain the CLI resumes before and after (``last_report["shown_before"]`` and
        ``["shown_after"]``, measured on what ``load()`` returned, the subagent keys included)."""
        r = self.last_report
        parts = [f"{r.get(name, 0)} {label}" for name, label in self.report_labels() if r.get(name, 0)]
        if not parts:
            return "load: nothing trimmed"
        before, after = r.get("shown_before", 0), r.get("shown_after", 0)
        return "load: " + ", ".join(parts) + (
            f" (shown {before} -> {after} characters, {before - after} kept out of context)")

    @classmethod
    def report_labels(cls) -> list[tuple[str, str]]:
        """``(last_report key, label)`` pairs in the order ``trim_report()`` prints them."""
        return list(REPORT_LABELS)

    # -- everything else is the backend's -----------------------------------------------------

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """The backend's append: entries are stored as the CLI wrote them, shaped only on load."""
        await self.backend.append(key, entries)

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        return await self.backend.list_sessions(project_key)

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        return await self.backend.list_session_summaries(project_key)

    async def delete(self, key: SessionKey) -> None:
        await self.backend.delete(key)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        return await self.backend.list_subkeys(key)

    async def has_session(self, session_id: str) -> bool:
        return await self.backend.has_session(session_id)

    def close(self) -> None:
        self.backend.close()

    async def aclose(self) -> None:
        await self.backend.aclose()


def trim_report(store: ShapedStore) -> str:
    """One line on what the last resume of ``store`` cut, for a log: ``store.trim_report()``.

    The spec lists ``trim_report()`` among the session store's names (its section was lost in the
    export); it reads ``last_report``, so any shaped store will do (trimming, pruning, either
    backend). Nothing trimmed reads ``load: nothing trimmed``.
    """
    return store.trim_report()

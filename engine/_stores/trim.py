"""``TrimmingSessionStore``: on resume, expire stale glances and spill old bulky tool results.

Both passes edit only the entries ``load()`` returns (what the model is shown on resume); the
rows in SQLite never change a byte. Two red lines hold throughout: a ``tool_result`` block always
stays (only its ``content`` changes, ``tool_use_id`` and ``is_error`` are kept; a missing one is
"Missing Tool Result Block"), and ``isCompactSummary`` entries are never touched. Image and
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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread
from claude_agent_sdk import SessionKey, SessionStoreEntry

from engine._files import keep_out_of_git
from engine._errors import FlowerError
from engine._stores.ephemeral import EphemeralPolicy, is_ephemeral
from engine._stores.spill_file import safe_text, write_spill
from engine._stores.sqlite import SqliteSessionStore

__all__ = [
    "EphemeralPolicy",
    "TrimPolicy",
    "TrimmingSessionStore",
    "expire_ephemeral",
    "spill_results",
]

log = logging.getLogger(__name__)

Entry = dict[str, Any]
PREVIEW_CHARS = 400  # the same preview length as spill_guard's pointer line
CMD_CHARS = 200  # a long pipeline is cut in the expiry note; the model can still see the call


@dataclass
class TrimPolicy:
    """Spill tool results older than the ``keep_recent`` newest, whose text exceeds ``min_chars``.

    Spilled text goes to ``<workspace>/<spill_dirname>/<sha256[:16]>.txt`` (inside the workspace;
    a different folder from spill_guard's on purpose: that one is the cut made at once, this one
    the cut made on resume) and is replaced by a pointer line plus the first 400 characters.
    """

    keep_recent: int = 20
    min_chars: int = 2000
    spill_dirname: str = ".flower/spill"
    enabled: bool = True


# -- transcript helpers (shared with prune.py) -------------------------------------------------


def blocks_of(entry: Entry) -> list[dict[str, Any]] | None:
    """The content block list of a user/assistant entry, or None (string content, other types)."""
    if entry.get("type") not in ("user", "assistant") or entry.get("isCompactSummary"):
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else None


def tool_results(entries: list[Entry]) -> Iterator[tuple[Entry, dict[str, Any]]]:
    """Every ``(entry, tool_result block)`` in file order; compact summaries are skipped."""
    for entry in entries:
        if entry.get("type") == "user":
            for block in blocks_of(entry) or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    yield entry, block


def tool_uses(entries: list[Entry]) -> dict[str, dict[str, Any]]:
    """``tool_use`` blocks by id, from every assistant entry."""
    found: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if entry.get("type") == "assistant":
            for block in blocks_of(entry) or []:
                if isinstance(block, dict) and block.get("type") == "tool_use" and "id" in block:
                    found[block["id"]] = block
    return found


def result_text(block: dict[str, Any]) -> str | None:
    """The text of a tool_result's content, or None when it holds anything but text blocks."""
    content = block.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" for b in content
    ):
        return "\n".join(str(b.get("text", "")) for b in content)
    return None


def _text_parts(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(
        str(b.get("text", "")) for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )


def _replace_text(block: dict[str, Any], new: str) -> None:
    """Put ``new`` where the text was; image/document blocks stay, in order."""
    content = block.get("content")
    if not isinstance(content, list):
        block["content"] = new
        return
    out, placed = [], False
    for b in content:
        if isinstance(b, dict) and b.get("type") == "text":
            if not placed:
                out.append({"type": "text", "text": new})
                placed = True
        else:
            out.append(b)
    block["content"] = out


# -- the two passes ----------------------------------------------------------------------------


def expire_ephemeral(entries: list[Entry], policy: EphemeralPolicy) -> dict[str, int]:
    """Replace old ephemeral Bash results with ``policy.text``, in place.

    Returns ``{"expired": n, "expired_chars": characters removed}``.
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
            if use and use.get("name") == "Bash" and not background and is_ephemeral(_command(use)):
                candidates.append((index, block, _command(use)))
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


def spill_results(entries: list[Entry], policy: TrimPolicy, spill_dir: Path) -> dict[str, int]:
    """Move the text of old, long tool results to files in ``spill_dir``; pointers stay, in place.

    Returns ``{"spilled": n, "spilled_chars": characters removed}``. Files are named by content
    hash, so loading the same session again rewrites nothing. Any text spills (lone surrogates
    included, see ``spill_file``); a result that cannot be written stays whole, with one log line.
    """
    results = list(tool_results(entries))
    report = {"spilled": 0, "spilled_chars": 0}
    for _entry, block in results[: max(len(results) - max(policy.keep_recent, 0), 0)]:
        text = _text_parts(block)
        if len(text) <= policy.min_chars:
            continue
        try:
            path = write_spill(spill_dir, text)
        except (OSError, ValueError) as exc:  # the session must load: this result stays as it is
            log.warning("could not spill a tool result of %d characters to %s (%s); it stays in context",
                        len(text), spill_dir, exc)
            continue
        pointer = (
            f"[Tool result trimmed on resume: its {len(text)} characters are in {path}. "
            f"Read that file for the full text. The first {PREVIEW_CHARS} characters:]\n"
            + safe_text(text[:PREVIEW_CHARS])
        )
        _replace_text(block, pointer)
        report["spilled"] += 1
        report["spilled_chars"] += max(len(text) - len(pointer), 0)
    return report


def _command(use: dict[str, Any]) -> str:
    inp = use.get("input")
    cmd = inp.get("command") if isinstance(inp, dict) else None
    return cmd if isinstance(cmd, str) else ""


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


# -- the store ---------------------------------------------------------------------------------


class TrimmingSessionStore(SqliteSessionStore):
    """``SqliteSessionStore`` whose ``load()`` expires stale glances, then spills bulky results.

    ``load()``: ``super().load()``, clear ``last_report``, ``expire`` if ``ephemeral.enabled``,
    ``trim`` if ``policy.enabled``. A main-transcript key starts a new ``last_report``; the
    subagent keys the SDK loads right after it add to that report.
    """

    def __init__(
        self,
        path: str | Path,
        workspace: str | Path,
        policy: TrimPolicy | None = None,
        ephemeral: EphemeralPolicy | None = None,
    ) -> None:
        super().__init__(path)
        self.workspace = Path(workspace)
        self.policy = policy if policy is not None else TrimPolicy()
        self.ephemeral = ephemeral if ephemeral is not None else EphemeralPolicy()
        self.last_report: dict[str, int] = {}
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
        entries = await super().load(key)
        if not key.get("subpath"):
            self.last_report = {}
        if entries:
            await anyio.to_thread.run_sync(self._transform, entries)
        return entries

    def _transform(self, entries: list[Entry]) -> None:
        """Edit the loaded copies in place; subclasses add passes after calling this."""
        if self.ephemeral.enabled:
            self._add(expire_ephemeral(entries, self.ephemeral))
        if self.policy.enabled:
            try:
                keep_out_of_git(self._spill_top)
            except OSError as exc:  # a read-only workspace: resume with the results in place
                log.warning("could not prepare the spill folder %s (%s); nothing spilled", self._spill, exc)
                return
            self._add(spill_results(entries, self.policy, self._spill))

    def _add(self, counts: dict[str, int]) -> None:
        for name, n in counts.items():
            self.last_report[name] = self.last_report.get(name, 0) + n

    def trim_report(self) -> str:
        """One line summing up ``last_report`` (what the last resume cut), e.g. for a log."""
        r = self.last_report
        parts = [
            f"{r.get(name, 0)} {label}" for name, label in self.report_labels() if r.get(name, 0)
        ]
        saved = sum(n for k, n in r.items() if k.endswith("_chars"))
        if not parts:
            return "load: nothing trimmed"
        return "load: " + ", ".join(parts) + f" ({saved} characters kept out of context)"

    @classmethod
    def report_labels(cls) -> list[tuple[str, str]]:
        """``(last_report key, label)`` pairs in the order ``trim_report()`` prints them."""
        return [("expired", "stale glances expired"), ("spilled", "bulky results spilled")]

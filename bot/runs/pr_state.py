"""What the watch of one open pull request remembers between two reads (``pr_watch.state``, JSON).

``seen``: every remark already read (ignored, or the bot's own), so a restart or a replica taking
over never takes one twice; ``passed``: those passed on, apart, so no flood of strangers' remarks
(GitLab lists a thread with all its notes, however many) can push one out and have it said again.
``pending``: remarks from people who may steer, gathered until the pull request has been quiet for
``FLOWER_PR_BATCH_S``. ``batches``: what was posted to the
thread (a **Work on this** click names one), ``addressing`` the one a follow-up works on: its
line remarks get their replies after the follow-up's push (the pushed commit moves off
``addressing_from``). ``said``: the checks said per commit (``<sha>:<name>``, ``<sha>:passed``).
``pages``: per list of remarks, where its next read goes on (``bot.forge.pages.Where``, as JSON).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from bot.forge.pages import MOST, PER_PAGE
from bot.forge.reviews import Check, Remark

__all__ = ["Batch", "Watch"]

KEEP_BATCHES = 20  # older posts' buttons say the work is gone; a PR with more rounds is rare
# one read takes at most 3 kinds x MOST pages of remarks (GitHub; GitLab's threads may hold more), and puts
# them last in ``seen``: an id trimmed off is one the reads have moved past, or a stranger's read again
KEEP_SEEN = 3 * MOST * PER_PAGE + 1000
KEEP_PASSED = 20_000  # remarks from people who may steer: only they add to it


@dataclass
class Batch:
    """One post to the thread: remarks, or failing checks of commit ``sha``; ``taken`` once a
    follow-up started on it (the audit trail says by whom)."""

    id: str
    remarks: list[Remark] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    sha: str = ""
    taken: bool = False


@dataclass
class Watch:
    """The watch of one pull request; ``to_json`` / ``from_json`` keep it in ``pr_watch``."""

    interval: float = 0.0  # the current gap between two reads: FLOWER_PR_POLL_S, doubled while quiet
    seen: list[str] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)
    pending: list[Remark] = field(default_factory=list)
    quiet_since: float = 0.0  # when the newest pending remark was read
    batches: list[Batch] = field(default_factory=list)
    numbered: int = 0  # batches posted so far: the next one's id
    said: list[str] = field(default_factory=list)
    check_fixes: int = 0  # follow-ups started by themselves for failing checks (capped)
    ignored_said: bool = False
    unreachable_said: bool = False
    addressing: str = ""
    addressing_from: str = ""
    pages: dict[str, Any] = field(default_factory=dict)

    def new_batch(self, number: int, **parts: Any) -> Batch:
        self.numbered += 1
        batch = Batch(id=f"{number}-{self.numbered}", **parts)
        self.batches = [*self.batches, batch][-KEEP_BATCHES:]
        return batch

    @property
    def failed_before(self) -> bool:
        """A failing check was said here: a later pass is news."""
        return any(not said.endswith(":passed") for said in self.said)

    def batch(self, batch_id: str) -> Batch | None:
        return next((b for b in self.batches if b.id == batch_id), None)

    def to_json(self) -> str:
        data = asdict(self)
        data["seen"], data["passed"] = self.seen[-KEEP_SEEN:], self.passed[-KEEP_PASSED:]
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, *, interval: float) -> Watch:
        """The watch ``text`` holds ("{}" before the first read: a fresh one at ``interval``)."""
        data = json.loads(text or "{}")
        watch = cls(**_known(cls, data))
        watch.interval = watch.interval or interval
        watch.pending = [Remark(**r) for r in data.get("pending", [])]
        watch.batches = [Batch(**{**_known(Batch, b), "remarks": [Remark(**r) for r in b.get("remarks", [])],
                                  "checks": [Check(**c) for c in b.get("checks", [])]})
                         for b in data.get("batches", [])]
        return watch


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """``data``'s keys that ``cls`` has: a field an older bot wrote and this one dropped is ignored."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}

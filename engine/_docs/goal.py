"""The goal (目标.md): the statement and the checklist the judge rules on every round."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from engine._docs.sections import MarkdownFile, SectionTable, list_items, numbered
from engine._lang import words

GOAL_SECTIONS = SectionTable(
    {
        "statement": ("目标", "Goal", "Objective", "Goal statement"),
        "checks": (
            "判定清单", "验收清单", "检查项", "检查清单", "验收标准",
            "Checks", "Checklist", "Acceptance checks", "Acceptance criteria", "Verdict checklist",
        ),
    }
)

# A check the judge cannot verify where it runs (macOS target, Linux container): the goal step
# warns about these at once, because at verdict time a whole round of work is already spent.
_UNVERIFIABLE = re.compile(
    r"^[\[【]\s*(?:此环境无法验证|本环境无法验证|此环境不可验证|当前环境无法验证"
    r"|unverifiable here|unverifiable in this environment|cannot be verified here)",
    re.IGNORECASE,
)


@dataclass
class Goal(MarkdownFile):
    """The goal statement plus the verdict checklist, one check per list item.

    ``complete()`` needs a statement and at least one check. Unlike the spec's listing, ``path``
    is left out of equality (as in Brief and Handoff): two goals with the same text are equal.
    """

    statement: str = ""
    checks: list[str] = field(default_factory=list)
    path: Path | None = field(default=None, compare=False)

    @classmethod
    def parse(cls, text: str) -> Self:
        """Read the statement and the checks (``-``, ``1.``, ``- [ ]`` items); never raises."""
        p = GOAL_SECTIONS.parse(text)
        return cls(statement=p.sections["statement"], checks=list_items(p.sections["checks"]))

    def unverifiable(self) -> list[str]:
        """The checks written as ``[此环境无法验证:…]`` / ``[unverifiable here: …]``, verbatim."""
        return [c for c in self.checks if _UNVERIFIABLE.match(c)]

    def missing(self) -> list[str]:
        """Titles of what is missing, in the language in effect: "目标" and/or "判定清单"."""
        titles = words().GOAL_TITLES
        out = [] if self.statement.strip() else [titles["statement"]]
        return out + ([] if self.checks else [titles["checks"]])

    def complete(self) -> bool:
        """True when there is a statement and at least one check."""
        return not self.missing()

    def to_markdown(self) -> str:
        """The file form: ``## 目标`` then ``## 判定清单`` as a ``-`` list ("(未填)" when empty)."""
        w = words()
        checks = "\n".join(f"- {c}" for c in self.checks) or w.PLACEHOLDER
        statement = self.statement.strip() or w.PLACEHOLDER
        return f"## {w.GOAL_TITLES['statement']}\n\n{statement}\n\n## {w.GOAL_TITLES['checks']}\n\n{checks}\n"

    def prompt_block(self) -> str:
        """Statement plus numbered checks, so the judge can say "第 2 项没通过"."""
        titles = words().GOAL_TITLES
        parts = [f"## {titles['statement']}\n\n{self.statement.strip()}"] if self.statement.strip() else []
        if self.checks:
            parts.append(f"## {titles['checks']}\n\n{numbered(self.checks)}")
        return "\n\n".join(parts)

    def amend(self, said: str) -> Goal:
        """A new Goal carrying a person's amendment ``said``, both ways.

        The statement gets a line marked as overriding the checklist (an amendment may relax an
        existing check, e.g. "macOS 上能编译就行"), and the checklist gets one more check so the
        judge must rule on it explicitly. Empty or already-present ``said``: an unchanged copy.
        """
        said = " ".join((said or "").split())
        if not said or said in self.statement:
            return Goal(self.statement, list(self.checks), self.path)
        w = words()
        statement = f"{self.statement.strip()}\n\n{w.GOAL_AMEND_NOTE}{said}".strip()
        return Goal(statement, [*self.checks, w.GOAL_AMEND_CHECK.format(said=said)], self.path)

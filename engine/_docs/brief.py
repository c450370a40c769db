"""The brief (需求.md): what the person asked for, confirmed, in exactly four sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from engine._docs.sections import MarkdownFile, SectionTable
from engine._lang import words

# "Out of scope" / "Non-goals" are deliberately NOT aliases of bounds: a model that writes both
# "## Scope" and "## Out of scope" would lose the second to "first copy wins". As unknown
# headings they land in ``extra``, verbatim, and still reach the downstream models.
BRIEF_SECTIONS = SectionTable(
    {
        "goal": ("目标", "需求目标", "Goal", "Goals", "Objective", "Objectives"),
        "accept": (
            "验收标准", "验收条件", "验收", "完成标准",
            "Acceptance criteria", "Acceptance", "Done when", "Definition of done",
        ),
        "bounds": ("边界", "范围", "约束", "边界与约束", "Bounds", "Boundaries", "Scope", "Constraints"),
        "unknowns": (
            "未知与假设", "未知和假设", "未知", "假设", "待确认", "开放问题",
            "Unknowns and assumptions", "Unknowns & assumptions", "Unknowns", "Assumptions",
            "Open questions",
        ),
    }
)


@dataclass
class Brief(MarkdownFile):
    """The confirmed requirement: goal → accept → bounds → unknowns, in that fixed order.

    ``complete()`` needs all four. ``extra`` holds any other ``#`` sections found after them
    (the ``## 唤醒时追加`` amendments a person adds on wake), verbatim: it is not part of
    equality, ``write()`` keeps it, and ``prompt_block()`` shows it to the next model. Put only
    headed markdown sections in it (plain text would read back as part of ``unknowns``).
    """

    goal: str = ""
    accept: str = ""
    bounds: str = ""
    unknowns: str = ""
    path: Path | None = field(default=None, compare=False)
    extra: str = field(default="", compare=False)

    @classmethod
    def parse(cls, text: str) -> Self:
        """Read the four sections out of a model answer or a brief file; never raises."""
        p = BRIEF_SECTIONS.parse(text)
        return cls(**p.sections, extra=p.extra)

    def _values(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in BRIEF_SECTIONS.keys}

    def missing(self) -> list[str]:
        """Titles of the empty sections, in order and in the language in effect (what the gate
        asks the model to add)."""
        return [words().BRIEF_TITLES[k] for k, v in self._values().items() if not v.strip()]

    def complete(self) -> bool:
        """True when all four sections have content."""
        return not self.missing()

    def to_markdown(self) -> str:
        """The file form: four ``##`` sections ("(未填)" for empty ones), then ``extra``."""
        body = BRIEF_SECTIONS.render(self._values(), titles=words().BRIEF_TITLES)
        return body + (f"\n{self.extra.strip()}\n" if self.extra.strip() else "")

    def prompt_block(self) -> str:
        """The brief as the next model reads it: the filled sections, then the amendments."""
        body = BRIEF_SECTIONS.render(self._values(), placeholder=False, titles=words().BRIEF_TITLES)
        return (body + (f"\n{self.extra.strip()}\n" if self.extra.strip() else "")).strip()

    def amend(self, said: str, *, label: str | None = None) -> Brief:
        """A copy with ``said`` appended as a ``## {label}`` section of ``extra``.

        Empty ``said``, or ``said`` already in the brief, returns an unchanged copy: a repeated
        wake with the same words must not pile up the same amendment.
        """
        said = (said or "").strip()
        copy = Brief(**self._values(), path=self.path, extra=self.extra)
        if said and said not in self.to_markdown():
            copy.extra = "\n\n".join(x for x in (self.extra.strip(), f"## {label or words().AMEND_LABEL}\n\n{said}") if x)
        return copy

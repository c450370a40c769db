"""The four parsed documents: Brief (需求.md), Goal (目标.md), Verdict, Handoff (交接-<步骤>.md).

Each parses a model answer into a fixed set of sections (``parse``), checks completeness
(``missing`` / ``complete``), renders for humans (``to_markdown``) and for the next model
(``prompt_block``), and round-trips through a file (``write`` / ``load``). The handoff module's
``is_overflow`` and ``degraded`` are imported from ``engine._docs.handoff_doc``; every text they write
(titles, placeholders, prompts) is the language in effect's (``engine._lang``).
"""

from engine._docs.brief import Brief
from engine._docs.goal import Goal
from engine._docs.handoff_doc import Handoff
from engine._docs.sections import PLACEHOLDER
from engine._docs.verdict import Verdict, VerdictState

__all__ = ["Brief", "Goal", "Handoff", "PLACEHOLDER", "Verdict", "VerdictState"]

"""What the engine renders for the models and the workbench in one language, as name -> text: the
zh snapshot (``tests/engine/lang/data/zh_rendered.json``, taken before the English texts existed) is compared to it."""

from __future__ import annotations

from pathlib import Path

from engine import Brief, Goal, Verdict
from engine.lang import speaking
from engine.authoring import Handoff, Workbench, clarify, coordinator, judge, oracle, worker
from engine._docs.handoff_doc import degraded
from engine._flow.steps import goal_step, with_goal
from engine._flow.base import Step


def rendered(language: str, root: Path) -> dict[str, str]:
    """The texts, with ``root`` (a workspace folder) written as ``<ws>``."""
    with speaking(language):
        out = {
            "coordinator": coordinator("c", "", {}).instructions,
            "clarify": clarify("c", None).instructions,
            "judge": judge("j", None).instructions,
            "oracle": oracle().instructions,
            "worker": worker("w", "do it").prompt,
            "brief.md": Brief("g", "a", "b", "u").to_markdown(),
            "brief.empty": Brief().to_markdown(),
            "goal.md": Goal("s", ["one", "two"]).to_markdown(),
            "goal.prompt": Goal("s", ["one", "two"]).prompt_block(),
            "goal.amend": Goal("s", ["one"]).amend("also two").to_markdown(),
            "verdict.md": Verdict("not_yet", "r", ["x"]).to_markdown(),
            "handoff.md": Handoff("d", "x", "y", "n", "s", step="work").to_markdown(),
            "handoff.prompt": Handoff("d", "x", "y", "n", "s", step="work").prompt_block(),
            "handoff.degraded": degraded("work", "the task", why="full").prompt_block(),
            "brief.amend": Brief("g", "a", "b", "u").amend("more").to_markdown(),
        }
        for state in ("not_yet", "unreachable", "achieved", ""):
            out[f"verdict.feedback.{state}"] = Verdict(state, "r", ["x"]).feedback()
        wb = Workbench(root)
        wb.ensure()
        (wb.notes / "a.md").write_text("x")
        out["workbench.prompt"] = wb.prompt_block()
        out["workbench.index"] = wb.index()
        out["workbench.outside"] = Workbench(root, home=root.parent / ".flower-x").prompt_block()
    return {k: v.replace(str(root.parent), "<ws>") for k, v in out.items()}

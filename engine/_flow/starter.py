"""``starter_flow``: confirm the requirement -> set the goal -> work (goal-guarded); and the
read-only ``wake_state`` probe that tells "continue" from "start".

Where the workbench (and with it the brief, the goal and the Q&A log) lives is decided here
once, for both: ``isolate=True`` -> ``<ws>.parent/.flower-<ws.name>`` (outside the repository, an
isolated worker cannot write the shared checkout); otherwise ``<ws>/.flower``. A driver that
needs the brief's path uses ``starter_paths`` too: building the path by hand and getting it
wrong raises nothing, it just fails silently.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine._human.channel import HumanChannel, Park
from engine._beneath import move, open_dir
from engine._run.lineage import LINEAGE_FILE, Lineage
from engine._agents.roles import coordinator, worker
from engine._agents.workbench import Workbench
from engine._docs.brief import Brief
from engine._docs.goal import Goal
from engine._resume.archive import session_archive
from engine._flow.base import Ctx, Step, Workflow
from engine._flow.steps import BRIEF_KEY, GOAL_KEY, clarify_step, goal_step, with_goal
from engine._lang import current, other_names, speaking, words, zh
from engine._media.image import Image

# The spec's names of the work and goal steps; a run in another language names them from its
# table (``engine._lang``: "work", "set the goal"), and ``step_names`` maps one to the other.
WORK_STEP = zh.WORK_STEP
GOAL_STEP = zh.GOAL_STEP


@dataclass(frozen=True)
class StarterPaths:
    """Where ``starter_flow`` keeps its files for one workspace."""

    workspace: Path
    workbench: Workbench
    brief: Path
    goal: Path
    log: Path

    @property
    def archive(self) -> Path:
        return self.workbench.notes / "archive"


def starter_paths(
    workspace: str | Path = ".",
    *,
    isolate: bool = False,
    brief_name: str | None = None,
    goal_name: str | None = None,
    log_name: str | None = None,
) -> StarterPaths:
    """The workbench, brief, goal and Q&A log paths of ``workspace`` (nothing is created).

    A name left None is the language in effect's (``brief.md`` / ``需求.md``...), unless only the
    other language's file exists: a workspace made in one language keeps its files in the other.
    """
    ws = Path(workspace).resolve()
    home = ws.parent / f".flower-{ws.name}" if isolate else None
    wb = Workbench(ws, home=home)
    return StarterPaths(ws, wb, _named(wb.root, brief_name, "BRIEF_FILE"), _named(wb.root, goal_name, "GOAL_FILE"),
                        _named(wb.notes, log_name, "QA_LOG_FILE"))


def _named(folder: Path, name: str | None, attribute: str) -> Path:
    if name is not None:
        return folder / name
    own = getattr(words(), attribute)
    return next((folder / n for n in other_names(own, attribute) if (folder / n).exists()), folder / own)


def _is_git_repo(path: Path) -> bool:
    done = subprocess.run(["git", "-C", str(path), "rev-parse", "--is-inside-work-tree"],
                          capture_output=True, text=True)
    return done.returncode == 0 and done.stdout.strip() == "true"


def archive_run(paths: StarterPaths, run_dir: str | Path = "runs") -> Path:
    """``--new``: move lineage, brief and goal together into ``notes/archive/<YYYYmmdd-HHMMSS>/``
    and zero the lineage. ``sessions.db`` is never touched: it is the archive. Anything but a
    folder at ``notes/archive`` goes in with them, as ``archive``."""
    lineage = Lineage(Path(run_dir) / LINEAGE_FILE, paths.workspace)
    # a link, FIFO or file the run put at notes/archive is archived as it is (renamed, never followed): /new still works
    aside = _set_aside(paths)
    into = lineage.archive(paths.archive / time.strftime("%Y%m%d-%H%M%S"),
                           extra=[paths.brief, paths.goal], anchor=paths.workbench.anchor)
    if aside is not None:
        move(paths.workbench.anchor, aside, into / paths.archive.name)
    return into


def _set_aside(paths: StarterPaths) -> Path | None:
    """Rename what stands at ``notes/archive`` when it is not a folder, under a hidden name beside
    it; the new name, or None when there is nothing to move. A link or FIFO at ``notes`` or above
    is refused (``UnsafePath``, ``NotADirectoryError``): that is the run's workbench itself."""
    try:
        fd = open_dir(paths.workbench.anchor, paths.archive.parent)
    except FileNotFoundError:
        return None
    try:
        mode = os.lstat(paths.archive.name, dir_fd=fd).st_mode
    except FileNotFoundError:
        return None
    finally:
        os.close(fd)
    if stat.S_ISDIR(mode):
        return None
    aside = paths.archive.with_name(f".{paths.archive.name}-{os.urandom(4).hex()}")
    move(paths.workbench.anchor, paths.archive, aside)
    return aside


def starter_flow(
    ask: str,
    *,
    workspace: str | Path = ".",
    run_dir: str | Path = "runs",
    new: bool = False,
    isolate: bool = False,
    worktrees: bool | None = None,
    clarify_only: bool = False,
    goal: bool = True,
    rounds: int = 3,
    judge_can_run: bool = False,
    max_asks: int | None = None,
    timeout_s: float | None = 1800.0,
    instructions: str = "",
    judge_instructions: str = "",
    worker_prompt: str | None = None,
    brief_name: str | None = None,
    goal_name: str | None = None,
    log_name: str | None = None,
    transport: Any = None,
    park: Park | None = None,
    language: str | None = None,
    images: Sequence[Image] = (),
) -> Workflow:
    """Three steps that run as they are: confirm the requirement, set the goal, work.

    A complete brief on disk means a wake: a non-empty ``ask`` then lands in three places at
    once (missing one fails silently): appended to the brief under ``唤醒时追加``, the goal
    re-derived (else the judge keeps reading the old checklist), and handed straight to the
    coordinator (else it works by the old criteria and is judged by the new). ``transport``
    is how questions reach a person (``HumanChannel``); None means nobody can be asked.
    ``park`` is the channel's hook for a question with no default left unanswered past its
    deadline (the Slack bot parks the run); without it the run goes on on its best judgement.
    ``worktrees`` says whether each worker dispatch gets a git worktree of its own (default:
    ``isolate``); False with ``isolate=True`` keeps the workbench outside the checkout while the
    workers work in the checkout itself (a checkout that is already a worktree of its own).
    ``instructions`` are the coordinator's standing instructions, ``judge_instructions`` the goal
    setter's and the judge's (a team's policy gives both).
    ``language`` (``en`` / ``zh``; default: the one in effect) is what every model is told, what
    the files are named and how the steps are called; the workflow runs in it.
    ``images`` came with ``ask`` (``engine.Image``): the steps that read the person's request are
    shown them, the clarifier and the coordinator's first round of work; the goal setter and
    the judge read the brief and the work instead.
    Raises ``ValueError`` for an empty ``ask`` on a fresh workspace, and for ``isolate=True``
    outside a git repository (before any money is spent).
    """
    with speaking(language or current()):  # every text, name and file below is in it
        w = words()
        paths = starter_paths(workspace, isolate=isolate, brief_name=brief_name,
                              goal_name=goal_name, log_name=log_name)
        if isolate and not _is_git_repo(paths.workspace):
            raise ValueError(
                f"isolate=True needs a git repository; {paths.workspace} is not one. "
                "Run `git init` there, or drop isolate.")
        if new:
            archive_run(paths, run_dir)
        said = (ask or "").strip()
        old_brief = Brief.load(paths.brief)
        waking = old_brief is not None and old_brief.complete()
        if not waking and not said:
            raise ValueError(w.EMPTY_ASK)
        paths.workbench.ensure()
        ch = HumanChannel(transport=transport, log_path=paths.log, amend_path=paths.brief,
                          max_asks=max_asks, timeout_s=timeout_s, park=park,
                          anchor=paths.workbench.anchor)
        if waking and said:
            ch.amend(said, label=w.AMEND_LABEL)

        def clarify_prompt(ctx: Ctx) -> str:
            text = w.CLARIFY_PROMPT.format(ask=said or w.SEE_BRIEF)
            partial = Brief.load(paths.brief)
            return text + (w.CLARIFY_AGAIN.format(brief=partial.to_markdown()) if partial else "")

        shared = tuple(images)
        steps: list[Step] = [replace(clarify_step(ch, brief_path=paths.brief, prompt=clarify_prompt, retries=2),
                                     images=shared)]
        if not clarify_only:
            if goal:
                steps.append(goal_step(ch, goal_path=paths.goal, always_set=waking and bool(said),
                                       retries=2, can_run=judge_can_run, instructions=judge_instructions))
            workers = {"coder": worker(w.WORKER_DESCRIPTION, worker_prompt or w.WORKER_PROMPT,
                                       isolate=isolate if worktrees is None else worktrees)}
            lead = coordinator(w.COORDINATOR_NAME, instructions, workers, channel=ch)

            def goal_text(ctx: Ctx) -> str:
                g = ctx.get(GOAL_KEY)
                return g.prompt_block() if isinstance(g, Goal) else ""

            def work_prompt(ctx: Ctx) -> str:
                return w.WORK_PROMPT.format(brief=ctx[BRIEF_KEY].prompt_block(), goal=goal_text(ctx))

            def wake_prompt(ctx: Ctx) -> str:
                return w.WAKE_SAID.format(said=said, goal=goal_text(ctx)) if said else w.WAKE_SILENT

            # later rounds continue the same session (the judge's feedback): shown them once
            work = Step(w.WORK_STEP, lead, work_prompt, resume_prompt=wake_prompt, images=shared)
            if goal:
                work = with_goal(work, ch, goal_path=paths.goal, rounds=rounds, can_run=judge_can_run,
                                 instructions=judge_instructions)
            steps.append(work)
        return Workflow(steps, name="starter", channel=ch, workbench=paths.workbench,
                        context={"_said": said, "_waking": waking}, language=current())


def wake_state(
    workspace: str | Path = ".",
    *,
    run_dir: str | Path = "runs",
    isolate: bool = False,
    brief_name: str | None = None,
    goal_name: str | None = None,
    database_url: str | None = None,
) -> dict[str, Any]:
    """A read-only probe before starting; writes not one byte.

    Returns ``{"waking", "brief", "goal", "checks", "woke", "steps"}``: ``waking`` = the brief
    exists with all four sections; ``brief`` / ``goal`` = the loaded documents (or None);
    ``checks`` = how many verdict checks the goal has; ``woke`` = how many wakes so far;
    ``steps`` = step name -> session id, only sessions still in ``sessions.db`` (or, with
    ``database_url``, still in that PostgreSQL database under this workspace's project key).
    """
    paths = starter_paths(workspace, isolate=isolate, brief_name=brief_name, goal_name=goal_name)
    brief = Brief.load(paths.brief)
    goal = Goal.load(paths.goal)
    archive = session_archive(run_dir, paths.workspace, database_url)
    lineage = Lineage(Path(run_dir) / LINEAGE_FILE, paths.workspace, has_session=archive.has_session)
    return {
        "waking": brief is not None and brief.complete(),
        "brief": brief,
        "goal": goal,
        "checks": len(goal.checks) if goal is not None else 0,
        "woke": lineage.woke,
        "steps": dict(lineage.steps),
    }

"""What a thread's pull request says: its title, its body, the comment after a follow-up.

A ``Report`` is taken from a finished run (the confirmed brief, the goal's checks with their
states, the judge's reason, cost and rounds) and kept in bot.db, so the body can be written when
a person clicks, long after the run. Pure functions; the body is GitHub / GitLab markdown.

The texts come from the models, so they are made inert on the forge (``bot.render.inert``): an
``@name``, however spelled, would notify that person or team.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from bot.core.split_text import clip
from bot.render import texts
from bot.render.inert import inert
from engine import RunResult
from engine.authoring import check_states

__all__ = ["Report", "body", "comment", "report_from", "thread_markdown", "title"]

MAX_BODY = 60_000  # GitHub refuses a body over 65,536 characters; GitLab allows more
MAX_TITLE = 120
_MARK = {"passed": "x", "failing": " ", "pending": " ", "unverifiable": " "}


@dataclass(frozen=True)
class Report:
    """A finished run of a bound thread, as its pull request shows it."""

    goal: str = ""
    brief: str = ""
    checks: list[tuple[str, str]] = field(default_factory=list)  # (text, state), in the goal's order
    reason: str = ""  # the last verdict's
    achieved: bool = False
    cost: float = 0.0
    rounds: int = 0

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Report | None:
        """The report kept in bot.db, or None for an empty or unreadable one."""
        try:
            data = json.loads(text or "{}")
            return cls(**{**data, "checks": [tuple(c) for c in data.get("checks", [])]}) if data else None
        except (ValueError, TypeError):
            return None


def report_from(result: RunResult, *, cost: float, rounds: int) -> Report:
    """The ``Report`` of a finished run from how it ended and the thread's totals."""
    goal, verdict, brief = result.goal, result.verdict, result.brief
    checks = [(c.text, c.state) for c in check_states(goal, verdict)] if goal is not None else []
    return Report(goal=goal.statement.strip() if goal is not None else "",
                  brief=brief.prompt_block() if brief is not None else "",
                  checks=checks, reason=verdict.reason if verdict else "", achieved=result.ok,
                  cost=cost, rounds=rounds)


def title(report: Report, branch: str) -> str:
    """The goal's first line, cut to fit a title; the branch when there is no goal."""
    first = next((line.strip(" #*-") for line in report.goal.splitlines() if line.strip(" #*-")), "")
    return clip(inert(first), MAX_TITLE) if first else branch


def body(report: Report, *, thread_link: str, branch: str) -> str:
    """The pull request's description: the checklist, the judge's reason, the brief, the totals and
    the Slack thread it came from."""
    parts = [texts.PR_BODY_OPENED.format(link=thread_markdown(thread_link), branch=branch),
             texts.PR_BODY_CHECKS, _checklist(report)]
    if report.reason.strip():
        parts += [texts.PR_BODY_REASON, _quote(report.reason)]
    if report.brief.strip():
        parts += [texts.PR_BODY_BRIEF, report.brief.strip()]
    parts.append(_totals(report))
    return clip(inert("\n\n".join(parts)), MAX_BODY)


def comment(report: Report, *, commits: list[str], thread_link: str) -> str:
    """The comment a follow-up adds: its new commits, then the new verdict and checklist."""
    shown = "\n".join(f"- {c}" for c in commits[-20:]) or texts.PR_COMMENT_NO_COMMITS
    verdict = texts.PR_COMMENT_ACHIEVED if report.achieved else texts.PR_COMMENT_NOT_YET
    parts = [texts.PR_COMMENT_HEAD.format(link=thread_markdown(thread_link), n=len(commits)), shown,
             verdict, _checklist(report)]
    if report.reason.strip():
        parts.append(_quote(report.reason))
    parts.append(_totals(report))
    return clip(inert("\n\n".join(parts)), MAX_BODY)


def _checklist(report: Report) -> str:
    if not report.checks:
        return texts.PR_BODY_NO_CHECKS
    return "\n".join(f"- [{_MARK.get(state, ' ')}] {' '.join(text.split())} ({texts.PR_BODY_STATE.get(state, state)})"
                     for text, state in report.checks)


def _totals(report: Report) -> str:
    totals = texts.PR_TOTALS_ACHIEVED if report.achieved else texts.PR_TOTALS_NOT_ACHIEVED
    return totals.format(rounds=report.rounds, cost=report.cost)


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" for line in text.strip().splitlines())


def thread_markdown(url: str) -> str:
    return texts.PR_THREAD_LINK.format(url=url) if url else texts.PR_THREAD_UNKNOWN

"""How a thread's run ends in the thread: the one place a run's ``Outcome`` is recorded and said.

A finished run's summary is queued before the thread is marked over, so a kill in between cannot
lose it; a bound thread's branch message (Push, the pull request, Diff) comes right under it. A
shutdown records nothing (the next start resumes the thread). What may wait until the thread
knows how its run ended (the pull request kept in step) comes after, in ``after``.
"""

from __future__ import annotations

import asyncio
import logging
import time

from bot.core.thread import folder_name, notice_key
from bot.errors import RepoError
from bot.outbound.quick import permalink
from bot.render import controls, texts
from bot.render import deadline as render_deadline
from bot.render import pull_request as pr_text
from bot.render import repo as render_repo
from bot.render.failures import failure_reason
from bot.render.feedback import with_feedback
from bot.render.limit_notices import limit_reached
from bot.repos.git import remotes
from bot.repos.worktrees import summary as repo_summary
from bot.runs.final import summary_payload
from bot.runs.outcome import Failed, Finished, Limited, Outcome, Parked, ShutDown, Stopped, state_after
from bot.runs.plan_feed import goal_digest
from bot.runs.run import ThreadRun
from bot.runs.shared_files import post_outbox
from bot.runs.spend import limit_admins
from engine import RunResult

log = logging.getLogger(__name__)

__all__ = ["after", "conclude"]


async def _checklist_link(run: ThreadRun, result: RunResult) -> str:
    """Where the final answer's one line about the checks points: the run's checklist message."""
    ts = await run.s.store.plan_ts(run.key, goal_digest(result.goal)) if result.goal is not None else None
    return await permalink(run.s.client, run.key.channel, ts) if ts else ""


async def conclude(run: ThreadRun, outcome: Outcome) -> None:
    """Record how ``run`` ended and say it in the thread."""
    key, s, feed, name = run.key, run.s, run.feed, folder_name(run.key)
    # Slack never moves a session off processing itself: waiting for a person, or for a follow-up
    await s.sessions.set(key, "suspended" if isinstance(outcome, (Parked, Limited)) else "active")
    if isinstance(outcome, ShutDown):
        return
    state = state_after(outcome)
    totals = await run.totals()  # one cost and one elapsed for the status line and the summary
    if isinstance(outcome, Finished):
        result = outcome.result
        reason = "" if result.ok or result.failure is None else failure_reason(result.failure)
        if not result.ok:
            log.warning("run in %s ended without its goal: %s", name, reason)
            if result.failure is not None and result.failure.kind == "step":
                s.metrics.errors.labels(result.failure.cause or "step").inc()
        status_ts = feed.ts if feed is not None else None
        branch = run.bound[1].branch if run.bound is not None else ""
        heard = feed.status.heard_in if feed is not None else []
        files = await _post_files(run)
        summary = with_feedback(summary_payload(result, totals, reason=reason, branch=branch, heard=heard,
                                                checklist_link=await _checklist_link(run, result), files=files), key)
        await s.outbox.send(key, "summary", notice_key("summary", key, status_ts), summary["text"], summary["blocks"])
        if run.bound is not None:  # right under the summary: Push, the pull request and Diff act on it
            await _post_branch(run, pr_text.report_from(result, cost=totals.cost, rounds=totals.rounds), status_ts)
        await s.store.set_state(key, state)
        if feed is not None:
            await feed.finish(state, cost=totals.cost, at=totals.at, reason=reason)
        return
    if feed is not None:  # the status line shows the end before the thread hears of it
        reason = outcome.reason if isinstance(outcome, Failed) else ""
        await feed.finish(state, cost=totals.cost, at=totals.at, reason=reason)
    await s.store.set_state(key, state)
    if isinstance(outcome, Failed):
        s.metrics.errors.labels("repository" if outcome.repo else "run").inc()
        log.warning("run in %s failed: %s", name, outcome.reason)
        text = (texts.RUN_REPO_FAILED if outcome.repo else texts.RUN_FAILED).format(reason=outcome.reason)
        await s.outbox.send(key, "error", notice_key("repo-error" if outcome.repo else "error", key, time.time()),
                            text)
    elif isinstance(outcome, Stopped):
        await s.outbox.send(key, "stopped", notice_key("stopped", key, time.time()), texts.RUN_STOPPED)
        if run.surfaces is not None:
            try:
                await run.surfaces.plan.stopped()
            except Exception:  # the checklist is a view: the stop is said and recorded all the same
                log.exception("marking the checklist of thread %s stopped failed", name)
    elif isinstance(outcome, Parked):
        await s.outbox.send(key, "parked", notice_key("parked", key, outcome.question.key, time.time()),
                            render_deadline.parked(outcome.question.timeout_s))
    elif isinstance(outcome, Limited):
        r = outcome.reached
        s.metrics.limit_pauses.labels(r.scope).inc()
        log.info("run in %s paused at the %s limit ($%.2f, $%.4f spent)", name, r.scope, r.limit, r.spent)
        shown = limit_reached(r.scope, r.limit, r.spent, sorted(limit_admins(s.config, key.channel, r.scope)),
                              controls.thread_value(key))
        await s.outbox.send(key, "limit", notice_key("limit", key, time.time()), shown["text"], shown["blocks"])


async def _post_files(run: ThreadRun) -> list[str]:
    """The files the run left in its outbox, uploaded to the thread above the answer; their names.
    What was not posted (a link, too big, too many) is said; a failure never holds the answer up."""
    try:
        names, unposted = await post_outbox(run.s.client, run.s.config, run.key, run.ws)
    except Exception:  # the answer matters more than its files: logged, and said without them
        log.exception("posting the outbox of %s failed", folder_name(run.key))
        return []
    if unposted:
        await run.s.outbox.send(run.key, "files", notice_key("outbox", run.key, time.time()), unposted)
    return names


async def after(run: ThreadRun, outcome: Outcome) -> None:
    """The branch's pull request kept in step, or opened by itself (``FLOWER_AUTO_PR``): network
    calls, after the thread's state is set."""
    if isinstance(outcome, Finished) and run.bound is not None:
        try:
            await run.s.pull_requests.after_finished(run.key, run.bound[1].branch, achieved=outcome.ok)
        except Exception:  # the forge's failures are said in the thread; anything else must not end the thread's task
            log.exception("pull request follow-up in %s failed", folder_name(run.key))


async def _post_branch(run: ThreadRun, report: pr_text.Report, status_ts: str | None) -> None:
    assert run.bound is not None
    (binding, worktree), key, s = run.bound, run.key, run.s
    try:
        result = await asyncio.to_thread(repo_summary, worktree)
    except RepoError as exc:  # a branch the bot cannot read (a changed .git): said, and the run ends as usual
        await s.outbox.send(key, "branch", notice_key("branch", key, status_ts, "unread"),
                            texts.REPO_ERROR.format(error=exc))
        return
    if not report.achieved and not result.commits:
        return  # nothing to push or review yet: the summary says what is left
    has_remote = bool(await asyncio.to_thread(remotes, binding.path))
    pr = await s.pull_requests.finished(key, binding, worktree, report, commits=len(result.commits))
    shown = render_repo.branch_message(key, result, has_remote=has_remote, pr=pr)
    await s.outbox.send(key, "branch", notice_key("branch", key, status_ts, result.branch),
                        shown["text"], shown["blocks"])

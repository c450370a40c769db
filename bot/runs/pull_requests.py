"""A bound thread's pull request: opened on a click (or by itself), kept in step by follow-ups.

Opening checks everything it can before it changes anything (a known forge, a token, the token's
access, the base branch on the forge), then pushes the branch, then creates the pull request
(or reuses the open one the branch already has). When the create fails after a push that made
the branch, the branch is deleted again: a bad case leaves nothing half-made. Every failure is
said in the thread with the forge's reason and the fix (``ForgeError``, ``RepoError``).

After each finished run the thread's ``Report`` is kept (``BotStore.save_pr_report``); a run that
moved the branch of an open pull request pushes it and comments the new verdict (once: the comment
carries a marker that a retry looks for first). What people say back on it is ``bot.runs.pr_watch``'s. A pull request
merged or closed on the forge is noticed when the thread is woken again (and before any update),
said once, and never updated again: ``/new`` gives a new branch and so a new pull request.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.split_text import escape
from bot.core.thread import ThreadKey, folder_name, notice_key
from bot.errors import ForgeError, RepoError
from bot.forge.client import Forge, PullRequest, Retry, forge_for
from bot.forge.markers import own
from bot.forge.push import branch_commit, commits_between, delete_branch, push_branch
from bot.forge.remote import ForgeRepo, recognise
from bot.outbound.outbox import Outbox, permalink
from bot.render import messages as render
from bot.render import pull_request as pr_text
from bot.render import texts
from bot.render.pull_request import Report
from bot.render.repo import DRAFT_PR_ACTION, OPEN_PR_ACTION, PrButton
from bot.repos.bindings import Binding, Bindings
from bot.repos.worktrees import Worktree
from bot.settings.config import Config
from bot.store.bot_store import BotStore, PullRequestRow

log = logging.getLogger(__name__)

WAKE_RETRY = Retry(tries=1)  # the check on a wake must not hold the run up: one try, else next time

__all__ = ["PullRequests", "Target"]


@dataclass(frozen=True)
class Target:
    """Where a thread's pull request goes: the binding, its forge, and the bot's token there."""

    binding: Binding
    forge: ForgeRepo
    token: str


class PullRequests:
    """The pull requests of one bot's bound threads."""

    def __init__(self, *, config: Config, store: BotStore, client: AsyncWebClient, outbox: Outbox,
                 retry: Retry = Retry()) -> None:
        self.config, self.store, self.client, self.outbox, self.retry = config, store, client, outbox, retry
        self.bindings = Bindings(config.home)
        self._locks: dict[tuple[ThreadKey, str], asyncio.Lock] = {}

    def forge(self, binding: Binding) -> ForgeRepo | None:
        """The forge ``binding``'s repository is on, or None (a local path, an unknown host)."""
        return recognise(binding.remote_url, self.config.forges)

    async def finished(self, key: ThreadKey, binding: Binding, worktree: Worktree, report: Report,
                       *, commits: int) -> PrButton | None:
        """A run of ``key`` ended on ``worktree``'s branch: keep its ``report`` and say which pull
        request button its branch message shows (none off a forge, or for an empty branch)."""
        branch = worktree.branch
        await self.store.save_pr_report(key, branch, report.to_json())
        forge = self.forge(binding)
        if forge is None:
            return None
        row = await self.store.pull_request(key, branch)
        if row is not None and row.is_open:
            return PrButton(texts.PR_LINK.format(ref=forge.ref(row.number or 0)), url=row.url)
        if not commits:
            return None
        if report.achieved:
            return PrButton(texts.PR_BUTTON.format(noun=texts.FORGE_NOUN[forge.kind]), OPEN_PR_ACTION)
        return PrButton(texts.DRAFT_PR_BUTTON.format(short="MR" if forge.kind == "gitlab" else "PR"), DRAFT_PR_ACTION)

    async def after_finished(self, key: ThreadKey, branch: str, *, achieved: bool) -> None:
        """After the branch message: update the branch's open pull request, or open one by itself
        (``FLOWER_AUTO_PR``) for an achieved goal."""
        row = await self.store.pull_request(key, branch)
        if row is not None and row.is_open:
            await self._keep_in_step(key, row)
        elif achieved and self.config.auto_pr:
            await self.open(key, None, branch, draft=False)

    async def open(self, key: ThreadKey, user: str | None, branch: str | None, *, draft: bool) -> None:
        """Open (or reuse) the pull request of ``branch`` for ``user``'s click (None: by itself)."""
        noun = texts.FORGE_NOUN["github"]
        try:
            if branch is None:
                raise RepoError(texts.PR_NAMES_NO_BRANCH)
            target = await self.target(key)
            noun = texts.FORGE_NOUN[target.forge.kind]
            async with self._lock(key, branch):
                await self._open(key, user, branch, target, draft=draft)
        except (ForgeError, RepoError) as exc:
            log.warning("pull request for %s in %s not opened: %s", branch, folder_name(key), exc)
            await self.outbox.send(key, "pr", notice_key("pr-failed", branch, time.time()),
                                   texts.PR_FAILED.format(noun=noun, error=exc))

    async def woken(self, key: ThreadKey, branch: str) -> None:
        """The thread is woken again: if its branch's pull request was merged or closed meanwhile,
        say so (once) and stop updating it. A forge that does not answer is tried next time."""
        row = await self.store.pull_request(key, branch)
        if row is None or not row.is_open:
            return
        try:
            target = await self.target(key)
            async with forge_for(target.forge, target.token, retry=WAKE_RETRY) as forge:
                await self.still_open(key, row, target, forge)
        except (ForgeError, RepoError) as exc:
            log.warning("could not check %s's pull request in %s: %s", branch, folder_name(key), exc)

    # -- the steps ---------------------------------------------------------------------------

    async def _open(self, key: ThreadKey, user: str | None, branch: str, target: Target, *, draft: bool) -> None:
        row = await self.store.pull_request(key, branch)
        # no report: a branch message from before this bot kept them; the pull request says less
        report = (Report.from_json(row.report) if row is not None else None) or Report()
        forge_repo, binding, home = target.forge, target.binding, self.config.home
        async with forge_for(forge_repo, target.token, retry=self.retry) as forge:
            await forge.check_access()
            await forge.check_base(binding.base)
            existing = await forge.find(branch)
            pushed = await asyncio.to_thread(push_branch, binding, branch, forge_repo, target.token, home)
            if existing is not None and existing.state == "open":
                await self._record(key, branch, existing, pushed.commit)
                await self._say(key, branch, texts.PR_REUSED, existing, forge_repo)
                return
            link = await permalink(self.client, key.channel, key.thread_ts)
            try:
                made = await forge.create(head=branch, base=binding.base, title=pr_text.title(report, branch),
                                          body=pr_text.body(report, thread_link=link, branch=branch), draft=draft)
            except ForgeError as exc:
                if exc.kind == "exists" and (found := await forge.find(branch)) is not None:
                    made = found  # opened meanwhile (a second click): the same pull request
                else:
                    if pushed.created:
                        await asyncio.to_thread(delete_branch, binding, branch, forge_repo, target.token, home)
                    raise
        await self._record(key, branch, made, pushed.commit)
        await self.store.audit(user or "", "pull_request", key, made.url)
        sentence = texts.PR_OPENED_BY_ITSELF if user is None else texts.PR_OPENED
        await self._say(key, branch, sentence, made, forge_repo, who=render.mention(user) if user else "")

    async def _keep_in_step(self, key: ThreadKey, row: PullRequestRow) -> None:
        """Push the branch's new commits to its open pull request and comment the new verdict."""
        assert row.number is not None
        noun, ref = texts.FORGE_NOUN["github"], f"#{row.number}"
        try:
            target = await self.target(key)
            noun, ref, binding = texts.FORGE_NOUN[target.forge.kind], target.forge.ref(row.number), target.binding
            async with self._lock(key, row.branch):
                head = await asyncio.to_thread(branch_commit, binding, row.branch)
                if head == row.pushed:
                    return  # the follow-up made no commit: nothing new to review
                async with forge_for(target.forge, target.token, retry=self.retry) as forge:
                    current = await self.still_open(key, row, target, forge)
                    if current is None:
                        return
                    commits = await asyncio.to_thread(commits_between, binding, row.pushed, row.branch)
                    pushed = await asyncio.to_thread(push_branch, binding, row.branch, target.forge, target.token,
                                                     self.config.home)
                    report = Report.from_json(row.report) or Report()
                    link = await permalink(self.client, key.channel, key.thread_ts)
                    # a retry after a timeout finds it among the bot's own comments and posts nothing
                    note, me = forge.markers.make(f"update:{pushed.commit}"), await forge.me()
                    if not any(note in r.body for r in await forge.remarks(row.number)
                               if own(r, me=me, markers=forge.markers)):
                        await forge.comment(row.number, pr_text.comment(report, commits=commits, thread_link=link)
                                            + f"\n\n{note}")
            await self._record(key, row.branch, current, pushed.commit)
            await self.store.poke_pull_requests(number=row.number, branch=row.branch)  # its replies go out now
            await self.outbox.send(key, "pr", notice_key("pr-updated", row.branch, pushed.commit),
                                   texts.PR_UPDATED.format(n=len(commits), branch=row.branch,
                                                           url=render.link_url(current.url), ref=ref))
        except (ForgeError, RepoError) as exc:
            log.warning("pull request of %s in %s not updated: %s", row.branch, folder_name(key), exc)
            await self.outbox.send(key, "pr", notice_key("pr-update-failed", row.branch, time.time()),
                                   texts.PR_UPDATE_FAILED.format(noun=noun, ref=ref, error=exc))

    async def still_open(self, key: ThreadKey, row: PullRequestRow, target: Target,
                          forge: Forge) -> PullRequest | None:
        """The pull request as the forge has it now, or None (said in the thread once) when it was
        merged or closed there."""
        assert row.number is not None
        current = await forge.get(row.number)
        if current.state == "open":
            return current
        await self.store.set_pr_state(key, row.branch, current.state)
        repo, noun = target.forge, texts.FORGE_NOUN[target.forge.kind]
        await self.outbox.send(key, "pr", notice_key("pr-ended", row.branch, row.number),
                               texts.PR_ENDED.format(noun=noun, noun_cap=noun[:1].upper() + noun[1:],
                                                     url=render.link_url(current.url), ref=repo.ref(current.number),
                                                     state=texts.PR_STATE.get(current.state, current.state),
                                                     forge=repo.name))
        return None

    # -- plumbing ----------------------------------------------------------------------------

    async def target(self, key: ThreadKey) -> Target:
        binding = await asyncio.to_thread(self.bindings.get, key.channel)
        if binding is None:
            raise RepoError(texts.NOWHERE_TO_PUSH)
        forge = self.forge(binding)
        if forge is None:
            raise RepoError(texts.PR_NOT_A_FORGE)
        return Target(binding, forge, self.config.forges.token(forge.kind))

    async def _record(self, key: ThreadKey, branch: str, made: PullRequest, pushed: str) -> None:
        await self.store.set_pull_request(key, branch, number=made.number, url=made.url, state=made.state,
                                          pushed=pushed)

    async def _say(self, key: ThreadKey, branch: str, sentence: str, made: PullRequest, repo: ForgeRepo,
                   who: str = "") -> None:
        await self.outbox.send(key, "pr", notice_key("pr-opened", branch, made.number),
                               sentence.format(who=who, noun=texts.FORGE_NOUN[repo.kind],
                                               url=render.link_url(made.url), ref=repo.ref(made.number),
                                               branch=branch, base=escape(made.base)))

    def _lock(self, key: ThreadKey, branch: str) -> asyncio.Lock:
        return self._locks.setdefault((ThreadKey(*key), branch), asyncio.Lock())

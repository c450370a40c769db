"""Reviews and checks of each open pull request come back to its thread, and the work goes on.

Every ``tick_s`` the watcher looks for pull requests whose next read is due (``pr_watch.poll_at``)
and reads those whose thread this process holds the lease of (one reader per pull request across
replicas). A read is conditional (``If-None-Match``: a 304 is free of GitHub's rate limit); while
nothing changes the gap doubles from ``FLOWER_PR_POLL_S`` up to eight times it, and a webhook
(``bot.forge.webhooks``) or a push makes the next read due at once. While the forge says the token
has less than a quarter of its rate limit left, every read waits the longest gap: a stranger who
keeps a flooded pull request's pages changing (each read then costs up to ``pages.MOST`` requests a
list) cannot spend the requests every other thread needs.

A remark is passed on only from someone who may steer: write access to the repository (the
forge's member API, asked once per person per ``STEER_TTL_S``) or named in the channel's policy
(``pr_allowed_users``). Anyone else's words never reach a model or a thread; the thread is told
once that one was ignored. The bot's own comments (``bot.forge.markers.own``: its login) are
never read back; a stranger's comment is a stranger's, whatever marker it copies. Remarks gather
until the pull request has been quiet for ``FLOWER_PR_BATCH_S``, then make one post; under
``pr_followup = "auto"`` a follow-up starts with them as its words, under ``"ask"`` (the default)
**Work on this** waits for an allowed person. A failing check of the head commit is said once per
commit and check; a pass after a failure once. After the follow-up's push each line remark it
worked on gets a reply in its review thread, the others one summary comment, each once (a keyed
marker, looked for in the bot's own comments before posting).

Each read takes what was said since the last one and the newest pages (``bot.forge.pages``);
where it stopped is kept in the watch, so a restart or another replica goes on from there.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence

from bot.core.thread import ThreadKey, notice_key
from bot.errors import ForgeError, RepoError
from bot.forge.client import Forge, PullRequest, Retry, forge_for
from bot.forge.markers import own
from bot.forge.pages import Where
from bot.forge.reviews import Check, Conditional, Remark
from bot.outbound.outbox import Outbox, ephemeral, permalink
from bot.render import pr_feedback as say
from bot.render import texts
from bot.render.controls import thread_value
from bot.runs.jobs import Jobs
from bot.runs.pr_state import Batch, Watch
from bot.runs.pull_requests import PullRequests, Target
from bot.runs.start import Start
from bot.settings.config import Config
from bot.store.bot_store import BotStore, StoreError
from bot.store.pr_rows import WatchedPullRequest
from bot.store.replicas import Replicas, Solo

log = logging.getLogger(__name__)

__all__ = ["PrWatch"]

BACKOFF = 8  # a quiet pull request is read at most every 8 × FLOWER_PR_POLL_S (8 minutes by default)
STEER_TTL_S = 600.0  # a person's write access, as the forge said it, is asked again after this
AUTO_CHECK_FIXES = 3  # follow-ups a failing check starts by itself on one pull request; then it asks


class PrWatch:
    """The watcher of every open pull request of this bot's threads; ``start`` / ``close``."""

    def __init__(self, *, config: Config, store: BotStore, jobs: Jobs, outbox: Outbox,
                 replicas: Solo | Replicas, retry: Retry = Retry(), clock: Callable[[], float] = time.time) -> None:
        self.config, self.store, self.jobs, self.outbox, self.replicas = config, store, jobs, outbox, replicas
        self.pull_requests: PullRequests = jobs.pull_requests
        self.retry, self.clock = retry, clock
        self.tick_s = min(5.0, max(0.2, config.pr_poll_s / 10))  # how late a due read (or a webhook's) may start
        self._caches: dict[tuple[ThreadKey, str], Conditional] = {}
        self._steer: dict[tuple[str, str], tuple[bool, float]] = {}
        self._me: dict[str, str] = {}
        self._lock = asyncio.Lock()  # one read at a time: a click and the loop never write one watch at once
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="flower-pr-watch")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _loop(self) -> None:
        while True:
            try:
                await self.tick()
            except StoreError as exc:  # the database is away: the next tick tries again
                log.warning("could not read the open pull requests: %s", exc)
            await asyncio.sleep(self.tick_s)

    async def tick(self) -> None:
        """Read every pull request that is due and whose thread is this process's."""
        for watched in await self.store.watched_pull_requests(due_by=self.clock()):
            if not await self.replicas.here(watched.pr.thread):
                continue
            async with self._lock:
                try:
                    await self._read(watched)
                except (StoreError, asyncio.CancelledError):
                    raise
                except Exception:  # one broken pull request must not stop the others' reads
                    log.exception("reading back pull request %s of %s failed; trying again in %.0f s",
                                  watched.pr.number, watched.pr.thread, self.config.pr_poll_s * BACKOFF)
                    await self.store.save_pr_watch(watched.pr.thread, watched.pr.branch, state=watched.state,
                                                   poll_at=self.clock() + self.config.pr_poll_s * BACKOFF)

    # -- one read ----------------------------------------------------------------------------

    async def _read(self, watched: WatchedPullRequest) -> None:
        row, key, now = watched.pr, watched.pr.thread, self.clock()
        assert row.number is not None
        watch = Watch.from_json(watched.state, interval=self.config.pr_poll_s)
        cache = self._caches.setdefault((key, row.branch), Conditional())
        cache.reset()
        # the watch says where each list's read goes on, even after a failed read
        cache.resume = {path: Where.from_json(where) for path, where in watch.pages.items()}
        try:
            target = await self.pull_requests.target(key)
        except (ForgeError, RepoError) as exc:  # unbound since, or the forge unknown: nothing to read
            log.info("not reading back %s's pull request in %s: %s", row.branch, key, exc)
            await self._save(key, row.branch, watch, now + self.config.pr_poll_s * BACKOFF)
            return
        ref, policy = target.forge.ref(row.number), self.config.for_channel(key.channel)
        before = (list(watch.seen), list(watch.passed), watch.addressing)  # a read failing half-way is read again
        try:
            async with forge_for(target.forge, target.token, retry=self.retry) as forge:
                current = await forge.get(row.number, cache)
                if current.state != "open":
                    await self.pull_requests.still_open(key, row, target, forge)  # says so once, stops the watch
                    self._caches.pop((key, row.branch), None)
                    return
                remarks = await forge.remarks(row.number, cache)
                checks = await forge.checks(row.number, current.sha, cache) if current.sha else []
                fresh, ignored = await self._sort(forge, target, watch, remarks, policy.pr_allowed_users)
                if watch.addressing and row.pushed and row.pushed != watch.addressing_from:
                    me = await self._login(forge, target)
                    await self._reply(forge, key, watch, row.number, row.pushed, [r for r in remarks if own(
                        r, me=me, markers=forge.markers)])
        except ForgeError as exc:
            watch.seen, watch.passed, watch.addressing = before  # nothing it took is lost; the replies' markers
            # prevent twice
            log.warning("could not read back %s %s of %s: %s", target.forge.name, ref, key, exc)
            if not watch.unreachable_said:
                watch.unreachable_said = True
                await self.outbox.send(key, "pr", notice_key("pr-unreachable", row.branch, now),
                                       texts.PR_UNREACHABLE.format(noun=texts.FORGE_NOUN[target.forge.kind],
                                                                   ref=ref, error=exc))
            watch.interval = min(watch.interval * 2, self.config.pr_poll_s * BACKOFF)
            await self._save(key, row.branch, watch, now + watch.interval)
            return
        watch.unreachable_said = False
        watch.pages = {path: where.to_json() for path, where in cache.resume.items()}
        auto = policy.pr_followup == "auto"
        if ignored and not watch.ignored_said:
            watch.ignored_said = True
            await self.outbox.send(key, "pr", notice_key("pr-ignored", row.number, row.branch),
                                   say.ignored_text(ignored[0].author, ref=ref, url=current.url))
        if fresh:
            watch.pending += fresh
            watch.quiet_since = now
        if watch.pending and now - watch.quiet_since >= self.config.pr_batch_s:
            batch, watch.pending = watch.new_batch(row.number, remarks=watch.pending, sha=current.sha), []
            await self._post(key, current, ref, watch, batch, auto=auto, pushed=row.pushed)
        await self._said_checks(key, row.number, current, ref, watch, checks, auto=auto, pushed=row.pushed)
        slowest = self.config.pr_poll_s * BACKOFF
        watch.interval = (slowest if forge.short_of_requests()  # the token is every thread's: keep its reserve
                          else self.config.pr_poll_s if cache.changed or fresh else min(watch.interval * 2, slowest))
        due = now + watch.interval
        if watch.pending:  # the quiet window ends sooner than the next regular read
            due = min(due, watch.quiet_since + self.config.pr_batch_s)
        await self._save(key, row.branch, watch, due)

    async def _sort(self, forge: Forge, target: Target, watch: Watch, remarks: Sequence[Remark],
                    named: frozenset[str]) -> tuple[list[Remark], list[Remark]]:
        """The remarks not seen before: those from people who may steer, and the others (whose words
        go nowhere, a copied marker or not); every one is marked seen, the bot's own skipped. Those passed
        on are kept apart (``passed``): a stranger's flood can push only strangers' ids out of ``seen``."""
        me = await self._login(forge, target)
        seen, fresh, ignored = {*watch.seen, *watch.passed}, [], []
        for remark in remarks:
            if remark.id in seen or own(remark, me=me, markers=forge.markers):
                continue  # the bot's own words are never a request
            if remark.author.lower() in named or await self._may_steer(forge, target, remark):
                fresh.append(remark)
            else:
                ignored.append(remark)
        # the remarks just read go last: what the next reads take again is never trimmed from ``seen``
        read = [r.id for r in remarks]
        again = set(read)
        watch.seen = [*(i for i in watch.seen if i not in again), *read]
        watch.passed += [r.id for r in fresh]
        return fresh, ignored

    async def _login(self, forge: Forge, target: Target) -> str:
        where = f"{target.forge.kind}:{target.forge.api_url}"
        if where not in self._me:
            self._me[where] = await forge.me()
        return self._me[where]

    async def _may_steer(self, forge: Forge, target: Target, remark: Remark) -> bool:
        who, now = (target.forge.path, remark.author_id), self.clock()
        known = self._steer.get(who)
        if known is None or known[1] <= now:
            known = (await forge.may_steer(remark), now + STEER_TTL_S)
            self._steer[who] = known
        return known[0]

    # -- what the thread hears ---------------------------------------------------------------

    async def _said_checks(self, key: ThreadKey, number: int, current: PullRequest, ref: str, watch: Watch,
                           checks: Sequence[Check], *, auto: bool, pushed: str) -> None:
        """A failing check of the head commit, once per commit and check; all passing after a failure, once."""
        sha = current.sha
        failed = [c for c in checks if c.state == "failed" and f"{sha}:{c.name}" not in watch.said]
        if failed:
            watch.said += [f"{sha}:{c.name}" for c in failed]
            by_itself = auto and watch.check_fixes < AUTO_CHECK_FIXES  # a fix that fails again must not loop for ever
            watch.check_fixes += by_itself
            await self._post(key, current, ref, watch, watch.new_batch(number, checks=failed, sha=sha), auto=by_itself,
                             pushed=pushed)
        elif (checks and all(c.state == "passed" for c in checks) and watch.failed_before
              and f"{sha}:passed" not in watch.said):
            watch.said.append(f"{sha}:passed")
            await self.outbox.send(key, "pr", notice_key("pr-checks-pass", current.number, sha),
                                   say.checks_pass_text(sha=sha, ref=ref, url=current.url))

    async def _post(self, key: ThreadKey, current: PullRequest, ref: str, watch: Watch, batch: Batch, *,
                    auto: bool, pushed: str) -> None:
        """One post for ``batch``: its follow-up started (``auto``), or Work on this to start it."""
        started = auto and await self._follow_up(key, ref, watch, batch, by="", pushed=pushed)
        value = thread_value(key, batch.id)
        if batch.remarks:
            shown = say.remarks_message(batch.remarks, ref=ref, url=current.url, value=value, auto=started)
        else:
            shown = say.checks_failed_message(batch.checks, sha=batch.sha, ref=ref, url=current.url, value=value,
                                              auto=started)
        await self.outbox.send(key, "pr", notice_key("pr-feedback", current.number, batch.id), shown["text"],
                               shown["blocks"])

    async def _follow_up(self, key: ThreadKey, ref: str, watch: Watch, batch: Batch, *, by: str,
                         pushed: str) -> bool:
        """Start the follow-up on ``batch`` as ``by`` ("" by itself), or give it to the run going
        now; False when neither can take it this moment (a run starting or the bot closing)."""
        ask = say.follow_up_request(batch.remarks, batch.checks, ref=ref, sha=batch.sha, language=self.config.language)
        if not await self.jobs.interrupt(key, ask, by=by):  # else a reply, from the forge: its own start
            if not await self.jobs.start(key, Start.reply(ask, by=by)):
                return False
        batch.taken = True
        if batch.remarks:  # replied to after the push that moves the branch off ``pushed``
            watch.addressing, watch.addressing_from = batch.id, pushed
        await self.store.audit(by, "pr_followup", key, batch.id)
        return True

    async def _reply(self, forge: Forge, key: ThreadKey, watch: Watch, number: int, pushed: str,
                     mine: Sequence[Remark]) -> None:
        """The follow-up on ``watch.addressing`` pushed ``pushed``: one reply per line remark in its
        review thread, one summary comment for the rest; none posted twice (the markers in ``mine``,
        the bot's own comments: a stranger's copy stops nothing)."""
        batch = watch.batch(watch.addressing)
        watch.addressing = ""
        if batch is None:
            return
        link = await permalink(self.pull_requests.client, key.channel, key.thread_ts)
        posted = [r.body for r in mine]
        for remark in batch.remarks:
            if remark.kind == "line" and remark.thread:
                note = forge.markers.make(f"reply:{remark.id}")
                if not any(note in body for body in posted):
                    await forge.reply(number, remark, say.reply_body(sha=pushed, permalink=link, marker=note))
        others = [r.url for r in batch.remarks if r.kind != "line" or not r.thread]
        note = forge.markers.make(f"replied:{batch.id}")
        if others and not any(note in body for body in posted):
            await forge.comment(number, f"{say.replied_line(others)}\n\n{note}")

    # -- Work on this --------------------------------------------------------------------------

    async def work_on(self, key: ThreadKey, user: str, batch_id: str) -> None:
        """``user`` (allowed here: the button's middleware checked) pressed Work on this on ``batch_id``."""
        async with self._lock:
            found = await self._batch(key, batch_id)
            if found is not None and not found[2].taken:
                watched, watch, batch = found
                try:
                    ref = (await self.pull_requests.target(key)).forge.ref(watched.pr.number or 0)
                except (ForgeError, RepoError):  # the channel unbound since: its repository is not this one
                    ref = f"#{watched.pr.number}"
                if await self._follow_up(key, ref, watch, batch, by=user, pushed=watched.pr.pushed):
                    await self._save(key, watched.pr.branch, watch, watched.poll_at)
                    return
                note = texts.PR_WORK_NOT_NOW
            else:  # taken already, or its pull request closed or retired since
                note = texts.PR_WORK_TAKEN if found is not None else texts.PR_WORK_GONE
        await ephemeral(self.pull_requests.client, key.channel, user, note, thread_ts=key.thread_ts)

    async def _batch(self, key: ThreadKey, batch_id: str) -> tuple[WatchedPullRequest, Watch, Batch] | None:
        """The open pull request of ``key`` that posted ``batch_id``, its watch, and the batch."""
        for watched in await self.store.watched_pull_requests():
            if watched.pr.thread == key and batch_id.startswith(f"{watched.pr.number}-"):
                watch = Watch.from_json(watched.state, interval=self.config.pr_poll_s)
                batch = watch.batch(batch_id)
                return (watched, watch, batch) if batch is not None else None
        return None

    async def _save(self, key: ThreadKey, branch: str, watch: Watch, due: float) -> None:
        await self.store.save_pr_watch(key, branch, poll_at=due, state=watch.to_json())

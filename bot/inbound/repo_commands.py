"""Channel repositories from Slack: ``@flower /repo …`` (admins bind), and the Push / Diff buttons.

Git work runs in ``asyncio.to_thread`` (a clone or a push can take a while); a ``RepoError`` is
shown in the thread as it is: its text names what was wrong and the fix. The sentences are in
``bot.render.texts``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey, notice_key, workspace_dir
from bot.errors import RepoError
from bot.outbound.outbox import SLACK_FAILED, Outbox, ephemeral
from bot.outbound.user_groups import UserGroups
from bot.render import messages as render
from bot.render import repo as render_repo
from bot.render import texts
from bot.repos.bindings import Bindings
from bot.repos.thread_worktree import thread_worktree
from bot.repos.worktrees import DIFF_MAX_BYTES, branch_diff, push
from bot.settings.config import Config

log = logging.getLogger(__name__)

class RepoCommands:
    """``/repo`` and the repository buttons of one bot."""

    def __init__(self, *, config: Config, client: AsyncWebClient, outbox: Outbox) -> None:
        self.config, self.client, self.outbox = config, client, outbox
        self.bindings = Bindings(config.home)
        self.groups = UserGroups(client)

    async def command(self, key: ThreadKey, user: str, source: str, base: str | None) -> bool:
        """Show (no source) or set (admins only) the channel's binding; the answer goes in ``key``'s
        thread. True when the channel was bound just now."""
        if not source:
            binding = await asyncio.to_thread(self.bindings.get, key.channel)
            shown = (render_repo.binding_message(binding, changed=False) if binding else
                     render_repo.not_bound_message(can_bind=bool(self.config.for_channel(key.channel).admins)))
            await self.outbox.send(key, "repo", notice_key("repo", key.channel, key.thread_ts), shown["text"], shown.get("blocks"))
            return False
        admins = self.config.for_channel(key.channel).admins
        if not await self.groups.has(admins, user):
            note = texts.NO_ADMINS if not admins else texts.ADMINS_ONLY.format(who=render.mention(user))
            await ephemeral(self.client, key.channel, user, note, thread_ts=key.thread_ts)
            return False
        try:
            binding = await asyncio.to_thread(self.bindings.bind, key.channel, source, base)
        except RepoError as exc:
            await self.outbox.send(key, "repo", notice_key("repo", key.channel, key.thread_ts), texts.NOT_BOUND_ERROR.format(error=exc))
            return False
        shown = render_repo.binding_message(binding, changed=True)
        await self.outbox.send(key, "repo", notice_key("repo", key.channel, key.thread_ts), shown["text"], shown["blocks"])
        return True

    async def click(self, key: ThreadKey, user: str, channel: str, *, action: str, branch: str | None = None) -> None:
        """Push branch or Diff as file, for ``key``'s thread (named by the button, allowed by the gate);
        Push pushes ``branch``, the one its message shows."""
        try:
            wt = await asyncio.to_thread(thread_worktree, workspace_dir(self.config.home, key))
            if wt is None:
                raise RepoError(texts.WORKTREE_GONE)
            if action == render_repo.PUSH_ACTION:
                await self._push(key, user, wt, branch)
            else:
                await self._upload_diff(key, channel, wt)
        except RepoError as exc:
            await self.outbox.send(key, "repo", notice_key("repo-click", action, time.time()),
                                   texts.REPO_ERROR.format(error=exc))

    async def _upload_diff(self, key: ThreadKey, channel: str, wt: Any) -> None:
        diff, cut = await asyncio.to_thread(branch_diff, wt)
        if cut:
            diff += texts.DIFF_CUT.format(mb=DIFF_MAX_BYTES // (1024 * 1024))
        try:
            await self.client.files_upload_v2(
                channel=channel, thread_ts=key.thread_ts, content=diff or texts.NO_CHANGES,
                filename=f"{wt.branch.replace('/', '-')}.diff", title=texts.DIFF_TITLE.format(branch=wt.branch))
        except SLACK_FAILED as exc:  # say so in the thread, not in a log only
            raise RepoError(texts.DIFF_NOT_UPLOADED.format(error=exc)) from exc

    async def _push(self, key: ThreadKey, user: str, wt: Any, branch: str | None) -> None:
        if branch is None:
            raise RepoError(texts.PUSH_NAMES_NO_BRANCH)
        binding = await asyncio.to_thread(self.bindings.get, key.channel)
        if binding is None:
            raise RepoError(texts.NOWHERE_TO_PUSH)
        remote, commit = await asyncio.to_thread(push, binding, wt, branch)
        await self.outbox.send(key, "repo", notice_key("pushed", branch, time.time()),
                               texts.PUSHED.format(who=render.mention(user), branch=branch, remote=remote,
                                                   commit=commit[:12]))

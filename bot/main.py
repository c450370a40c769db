"""``flower-bot``: load the settings, connect (Socket Mode by default, else HTTP), resume runs.

A bad setting prints one line naming it and exits 2. ``start_bot`` is the same wiring for tests
and hosts: it returns a ``RunningBot`` whose ``close()`` stops everything and leaves every run
in progress marked active, so the next start resumes it.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler, AsyncServerErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import workspace_dir
from bot.errors import SlackAuthError, StoreVanished
from bot.forge.webhooks import Poke, webhook_app_routes
from bot.inbound.app import build_app, web_app
from bot.inbound.catchup import catch_up, recent_threads
from bot.inbound.gate import Gate
from bot.inbound.intake import Intake
from bot.inbound.socket import SocketHandler, SocketWatchdog
from bot.inbound.startup import check_bot_token, until_refused
from bot.ops.health import exposed, health_app
from bot.ops.metrics import MeasuredWebClient, Metrics
from bot.ops.reports import report
from bot.outbound.outbox import Outbox
from bot.render import texts
from bot.repos.thread_worktree import REPO_DIR
from bot.repos.worktrees import cleanup
from bot.runs.jobs import BotOptions, Jobs
from bot.runs.pr_watch import PrWatch
from bot.runs.transport import Answers
from bot.settings.config import Config, load_config, load_store_config
from bot.settings.sandbox_check import require_sandbox
from bot.store.factory import AnyBotStore, open_bot_store
from bot.store.housekeeping import EXIT_VANISHED, Housekeeper
from bot.store.replicas import Replicas, Solo
from engine import FlowerError
from engine.host import check_cli

log = logging.getLogger(__name__)

EXIT_CONFIG = 2


@dataclass
class RunningBot:
    """A started bot: its app, store and jobs; ``port`` is the HTTP port in HTTP mode (else 0)."""

    config: Config
    app: AsyncApp
    store: AnyBotStore
    jobs: Jobs
    outbox: Outbox
    socket: AsyncSocketModeHandler | None = None
    web_runner: web.AppRunner | None = None
    port: int = 0
    watchdog: SocketWatchdog | None = None
    catchup: asyncio.Task[int] | None = None  # replies said while stopped, read back at start
    replicas: Solo | Replicas = field(default_factory=Solo)
    metrics: Metrics = field(default_factory=Metrics)
    health_runner: web.AppRunner | None = None  # FLOWER_METRICS_PORT's endpoint
    metrics_port: int = 0
    pr_watch: PrWatch | None = None  # reads open pull requests' reviews and checks back

    async def slack_ready(self) -> bool:
        """Connected to Slack: the Socket Mode link is up, or the HTTP endpoint listens."""
        if self.socket is not None:
            return bool(await self.socket.client.is_connected())
        return self.web_runner is not None

    async def close(self) -> None:
        """Disconnect, cancel the runs (they stay active in the store), stop posting, close the db."""
        if self.catchup is not None:
            self.catchup.cancel()
            await asyncio.gather(self.catchup, return_exceptions=True)
        if self.watchdog is not None:
            await self.watchdog.close()
        if self.socket is not None:
            await self.socket.close_async()
        if self.web_runner is not None:
            await self.web_runner.cleanup()
        if self.health_runner is not None:
            await self.health_runner.cleanup()
        if self.pr_watch is not None:
            await self.pr_watch.close()
        await self.jobs.close()
        await self.outbox.close()
        await self.replicas.close()  # after the runs: the others take them over at once
        await self.store.aclose()


MAX_RATE_LIMIT_RETRIES = 5
MAX_SERVER_ERROR_RETRIES = 4  # slack_sdk's handler retries only 500 and 503; other 5xx: the outbox's retry


def web_client(config: Config, metrics: Metrics | None = None) -> AsyncWebClient:
    """The Web API client: the bot token, ``SLACK_API_URL``, 429s retried as long as Slack's
    Retry-After says and 500/503 retried too: edits and quick calls have no outbox behind them,
    so a short 5xx spell must not lose them. Every call is measured in ``metrics``."""
    return MeasuredWebClient(token=config.bot_token, base_url=config.api_url, metrics=metrics or Metrics(), retry_handlers=[
        AsyncRateLimitErrorRetryHandler(max_retry_count=MAX_RATE_LIMIT_RETRIES),
        AsyncServerErrorRetryHandler(max_retry_count=MAX_SERVER_ERROR_RETRIES)])


def _replicas(config: Config, store: AnyBotStore, options: BotOptions) -> Solo | Replicas:
    """Several replicas on one database when FLOWER_DATABASE_URL is set (or a test asks), else one."""
    clustered = options.replicas if options.replicas is not None else config.database_url is not None
    if not clustered:
        return Solo()
    return Replicas(store, lease_s=options.lease_s, heartbeat_s=options.heartbeat_s)


def freeze_gc() -> None:
    """Move everything alive now (modules, the app, its clients) out of the garbage collector's view.

    A full collection then scans only what runs create since: at 20 waiting runs the longest full
    collection fell from ~106 ms to ~30 ms (bench/bot.py), and each one stops the event loop.
    """
    gc.collect()
    gc.freeze()


async def start_bot(config: Config, *, options: BotOptions | None = None, resume: bool = True,
                    settle_gc: bool = False) -> RunningBot:
    """Wire and connect the bot; with ``resume``, every run in progress starts again by itself.

    ``settle_gc`` freezes what exists once connected (``freeze_gc``), before any run starts: the
    command does it; tests, which start many bots in one process, do not.
    """
    texts.use(config.slack_language)  # before anything posts: every sentence from here on is the team's
    config.home.mkdir(parents=True, exist_ok=True, mode=0o700)
    if config.home.stat().st_mode & 0o077:  # bot.db and every workspace are the bot's alone
        log.warning("FLOWER_HOME %s was readable by others; made it 0700", config.home)
        config.home.chmod(0o700)
    metrics = Metrics()
    client = web_client(config, metrics)
    await check_bot_token(client)  # a refused SLACK_BOT_TOKEN stops the start here (SlackAuthError)
    store = open_bot_store(config)  # bot.db, or FLOWER_DATABASE_URL's tables
    options = options or BotOptions()
    replicas = _replicas(config, store, options)
    outbox = Outbox(store, client, replicas=replicas)
    answers = Answers()
    jobs = Jobs(config=config, store=store, client=client, outbox=outbox, answers=answers, options=options,
                metrics=metrics)
    pr_watch = PrWatch(config=config, store=store, jobs=jobs, outbox=outbox, replicas=replicas,
                       retry=options.forge_retry)
    intake = Intake(config=config, store=store, client=client, outbox=outbox, jobs=jobs, answers=answers,
                    replicas=replicas, pr_watch=pr_watch)
    gate = Gate(config=config, store=store, client=client)
    app = build_app(config, client, intake, gate)
    bot = RunningBot(config, app, store, jobs, outbox, replicas=replicas, metrics=metrics, pr_watch=pr_watch)
    outbox.start()
    missed_in = await recent_threads(store)  # before connecting: a live reply moves last_seen_ts on
    if config.mode == "socket":
        bot.socket = SocketHandler(app, config.app_token)  # must be built inside the loop
        await bot.socket.connect_async()
        if config.socket_idle_s > 0:
            bot.watchdog = SocketWatchdog(bot.socket.client, idle_s=config.socket_idle_s)
            bot.watchdog.start()
    else:
        async def poke(found: Poke) -> None:  # a webhook only makes the pull request's next read due now
            await store.poke_pull_requests(number=found.number, branch=found.branch, sha=found.sha)

        hooks = webhook_app_routes(github_secret=config.forges.github_webhook_secret,
                                   gitlab_token=config.forges.gitlab_webhook_token, on_poke=poke)
        bot.web_runner = web.AppRunner(web_app(app, config.signing_secret, hooks), handle_signals=False)
        await bot.web_runner.setup()
        # PORT=0 (tests) binds a free local port; a real port listens on every interface
        site = web.TCPSite(bot.web_runner, "0.0.0.0" if config.port else "127.0.0.1", config.port)
        await site.start()
        bot.port = bot.web_runner.addresses[0][1]
    if config.metrics_port is not None:  # the operator's endpoint: never on Slack's port, private by default
        bot.health_runner = web.AppRunner(health_app(metrics, store, jobs.queued, bot.slack_ready, token=config.metrics_token),
                                          handle_signals=False)
        await bot.health_runner.setup()
        await web.TCPSite(bot.health_runner, config.metrics_host, config.metrics_port).start()
        bot.metrics_port = bot.health_runner.addresses[0][1]
        if exposed(config.metrics_host, config.metrics_token):
            log.warning("FLOWER_METRICS_HOST=%s with no FLOWER_METRICS_TOKEN: whoever reaches port %d reads the "
                        "spend by channel; set FLOWER_METRICS_TOKEN", config.metrics_host, bot.metrics_port)
    if settle_gc:
        freeze_gc()
    if replicas.clustered:  # the threads of a replica that died (this one's last life too) are taken over
        replicas.start(resume=jobs.resume, dispatch=intake.dispatch, lost=jobs.abandon)
        log.info("replica %s of several on one database", replicas.id)
    elif resume:
        resumed = await jobs.resume_all()
        if resumed:
            log.info("resumed %d run(s) in progress", resumed)
    pr_watch.start()
    bot.catchup = asyncio.create_task(catch_up(missed_in, client=client, gate=gate, intake=intake), name="flower-catchup")
    return bot


async def serve(config: Config, *, options: BotOptions | None = None) -> None:
    """Run the bot until cancelled (Ctrl-C), or until bot.db vanishes (``StoreVanished``)."""
    bot = await start_bot(config, options=options, settle_gc=True)
    where = "Socket Mode" if bot.socket else f"HTTP on port {bot.port} (/slack/events)"
    log.info("flower-bot connected via %s; workspaces in %s", where, config.home)
    try:
        await _first_to_end(Housekeeper(bot.store).run(),  # prunes old rows; raises once bot.db is gone
                            until_refused(bot.socket))  # raises once Slack refuses the app token
    finally:
        await bot.close()


async def cleanup_worktrees(config: Config) -> list[Path]:
    """Remove thread worktrees under ``config.home`` except those of active threads; return them.

    Active = queued, running or waiting in ``bot.db`` (a running bot keeps using those). Branches
    stay; a later reply in a cleaned-up thread opens a new worktree on a new branch.
    """
    config.home.mkdir(parents=True, exist_ok=True)
    store = open_bot_store(config)
    try:
        keep = {str(workspace_dir(config.home, t.key) / REPO_DIR) for t in await store.active_threads()}
    finally:
        await store.aclose()
    return await asyncio.to_thread(cleanup, config.home, keep)


USAGE = ("usage: flower-bot [cleanup | usage [--since DATE] [--by channel|user|thread|model] [--format table|csv|json] "
         "| audit [--since DATE] [--format csv|json]]   (no argument: run the bot; cleanup: remove finished "
         "threads' worktrees; usage, audit: the ledger and the audit trail)")


async def _first_to_end(*watchers: Coroutine[Any, Any, None]) -> None:
    """Run the watchers until one ends (they end only by raising); cancel the rest, re-raise."""
    tasks = [asyncio.ensure_future(w) for w in watchers]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for task in done:
        task.result()


def main(argv: list[str] | None = None) -> int:
    """The ``flower-bot`` command: ``flower-bot`` runs the bot, ``flower-bot cleanup`` removes the
    worktrees of threads that are no longer active (their branches stay), ``flower-bot usage`` and
    ``flower-bot audit`` print the ledger and the audit trail (``bot.ops.reports``)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] in (["usage"], ["audit"]):  # the store alone: an operator reads them while the bot is broken
        try:
            config, policy_problem = load_store_config()
        except FlowerError as exc:
            print(f"flower-bot: {exc}", file=sys.stderr)
            return EXIT_CONFIG
        if policy_problem:
            print(f"flower-bot: warning: {policy_problem} (the report does not need the policy; the bot would not "
                  "start with it)", file=sys.stderr)
        try:
            sys.stdout.write(asyncio.run(report(config, args)))
        except FlowerError as exc:  # the store away (its URL's password masked): one line, as at start
            print(f"flower-bot: {exc}", file=sys.stderr)
            return EXIT_CONFIG
        return 0
    if args not in ([], ["cleanup"]):
        print(f"flower-bot: unknown arguments {' '.join(args)!r}. {USAGE}", file=sys.stderr)
        return EXIT_CONFIG
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        config = load_config()
        config.mode  # noqa: B018 - raises ConfigError when neither token nor secret is set
        if args != ["cleanup"]:
            config.refuse_if_open()
            if config.sandbox:
                require_sandbox()
            check_cli()  # every run needs it: a missing CLI stops the bot here, not each run later
    except FlowerError as exc:  # ConfigError, SandboxUnavailable, a CLI that cannot start
        print(f"flower-bot: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    if args == ["cleanup"]:
        removed = asyncio.run(cleanup_worktrees(config))
        for path in removed:
            print(f"removed {path}")
        print(f"{len(removed)} worktree(s) removed; branches kept.")
        return 0
    if not config.sandbox:
        log.warning("FLOWER_SANDBOX=off: runs are not fenced in; their commands can read and write "
                    "everything this user can, the bot's files included. Each new thread is told so.")
    os.umask(0o077)  # every file the bot and its runs write is 0600, every folder 0700
    try:
        asyncio.run(serve(config))
    except KeyboardInterrupt:
        pass  # Ctrl-C: runs in progress resume at the next start
    except StoreVanished:  # logged by the housekeeper; the service manager starts the bot again
        return EXIT_VANISHED
    except SlackAuthError as exc:  # a refused token: one line, like a bad setting
        print(f"flower-bot: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    return 0



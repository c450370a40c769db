"""What each incoming mention, thread reply or click means, decided once and acted on.

Called by ``bot.inbound.app``'s listeners once bolt's middleware (``bot.inbound.gate``) let the
event through: claimed once, from a person allowed here, naming a thread or question that exists.
The event is acked by then, so a mention or reply that storage refuses from here on (``bot.db``
locked past its busy timeout, full, read-only or vanished; a workspace folder that cannot be
made) is answered in its thread straight away (``bot.inbound.gate``), never dropped unsaid.
A command that meets a link or FIFO a run made (``/new`` archiving through it) says what it could
not do and which file is in the way. Both are said by one error boundary, ``_or_say_why``.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import WORKSPACES, ThreadKey, folder_name, notice_key
from bot.errors import RunFilesRefused, ThreadError
from bot.inbound.commands import Command, LimitCommand, RepoCommand, Said, read
from bot.inbound.gate import unrecorded_for
from bot.inbound.limit_commands import LimitCommands
from bot.inbound.repo_commands import RepoCommands
from bot.outbound.outbox import Outbox, edit, ephemeral, react
from bot.render import controls, failures, texts
from bot.render import messages as render
from bot.runs.jobs import Jobs
from bot.runs.pr_watch import PrWatch
from bot.runs.shared_files import Shared, take_shared
from bot.runs.start import Start
from bot.runs.transport import Answers
from bot.settings.config import Config
from bot.store.bot_store import BotStore, StoreError
from bot.store.bot_store import Question as StoredQuestion
from bot.store.faults import diagnose
from bot.store.replicas import Replicas, Solo
from engine import Image
from engine.authoring import Answer

log = logging.getLogger(__name__)

class Intake:
    """The bot's reactions to people: start, answer, interrupt, wake, /new, Stop, Start over."""

    def __init__(self, *, config: Config, store: BotStore, client: AsyncWebClient, outbox: Outbox,
                 jobs: Jobs, answers: Answers, replicas: Solo | Replicas | None = None,
                 pr_watch: PrWatch | None = None) -> None:
        self.config, self.store, self.client = config, store, client
        self.outbox, self.jobs, self.answers = outbox, jobs, answers
        self.replicas = replicas or Solo()
        self.pr_watch = pr_watch
        self.repo = RepoCommands(config=config, client=client, outbox=outbox)
        self.limits = LimitCommands(config=config, store=store, client=client, outbox=outbox, book=jobs.spend)

    # -- events --------------------------------------------------------------------------------

    async def mention(self, key: ThreadKey, event: dict[str, Any]) -> None:
        """``@bot …`` in ``key``'s thread: a new thread starts a run; in a known thread it is a reply."""
        await self._or_say_why(key, "mention", {"event": event}, lambda: self._mention(key, event), ts=event["ts"])

    async def message(self, key: ThreadKey, event: dict[str, Any]) -> None:
        """A person's reply in ``key``'s thread, one the bot runs: their words, and any files."""
        await self._or_say_why(key, "message", {"event": event}, lambda: self._message(key, event), ts=event["ts"])

    async def dispatch(self, key: ThreadKey, op: str, args: dict[str, Any]) -> None:
        """Handle an event another replica received for a thread this one owns (``Replicas``)."""
        if op in ("mention", "message"):
            await (self.mention if op == "mention" else self.message)(key, args["event"])
        elif op == "answered":
            q = await self.store.get_question(args["question"])
            if q is not None:
                await self._answered(q, args["answer"], args["user"])
        elif op == "control" and args.get("go_on"):
            await self.go_on_click(key, args["user"])
        elif op == "control":
            await self.control_click(key, args["user"], stop=args["stop"])
        elif op == "pr_work":
            await self.pr_work_click(key, args["user"], args["batch"])
        else:
            log.error("a forwarded event for thread %s has an unknown kind %r (a newer replica's?); dropped",
                      key, op)

    async def _elsewhere(self, key: ThreadKey, op: str, args: dict[str, Any]) -> bool:
        """True (and the event forwarded) when another live replica owns ``key``'s thread."""
        if await self.replicas.here(key):
            return False
        await self.replicas.forward(key, op, args)
        return True

    async def _or_say_why(self, key: ThreadKey, op: str, args: dict[str, Any],
                          handle: Callable[[], Awaitable[None]], *, ts: str | None = None) -> None:
        """The error boundary of what people do in a thread: ``handle()`` here, or forward ``op``
        and ``args`` to the replica that owns the thread; what stops it is said in the thread, once.

        A run's file the bot does not follow (``RunFilesRefused``, ``UnsafePath``): what could not
        be done and which file to remove; the thread is left as it was, so the same command works
        once the file is gone. Storage refusing the message ``ts``: nothing more was recorded, say
        it again (what ran before stays done: a reaction, perhaps a notice queued). Other errors
        are raised as before (bolt's error handler logs them).
        """
        try:
            if not await self._elsewhere(key, op, args):
                await handle()
        except (RunFilesRefused, StoreError, OSError) as exc:
            refused = RunFilesRefused.of(exc)
            if refused is not None:
                log.warning("thread %s: %s (%s)", folder_name(key), refused, refused.__cause__ or "")
                await self.outbox.send(key, "refused", notice_key("refused", key, ts or time.time()),
                                       failures.refusal(refused.doing, refused.entry, refused.kind))
                return
            fault = diagnose(exc, workspaces=(self.config.home / WORKSPACES).resolve())
            if fault is None or ts is None:
                raise
            await unrecorded_for(self.client).tell(key.channel, key.thread_ts, ts, fault)

    async def _mention(self, key: ThreadKey, event: dict[str, Any]) -> None:
        user, channel, ts = event.get("user", ""), event["channel"], event["ts"]
        said = read(event.get("text", ""))  # what the message is, decided once
        if not isinstance(said, Said):
            await self._command(key, user, said)
            return
        if await self.store.get_thread(key) is not None:
            ws, shared = await self._shared(key, event)
            await self.words(key, said, user, ts, shared=shared, ws=ws)
            return
        if not said.text and not event.get("files"):
            await self.outbox.send(key, "hint", notice_key("hint", channel, ts), texts.EMPTY_MENTION)
            return
        ws = self._workspace(key)
        if ws is None:
            return
        _, shared = await self._shared(key, event, ws)
        await self.begin(key, said.text + shared.words, user, ts, new=said.new, images=shared.images, ws=ws)

    async def _message(self, key: ThreadKey, event: dict[str, Any]) -> None:
        said = read(event.get("text", ""))  # what the message is, decided once
        ws, shared = await self._shared(key, event)  # a reply's files are taken first, a command's too
        if not isinstance(said, Said):
            await self._command(key, event["user"], said)
            return
        await self.words(key, said, event["user"], event["ts"], shared=shared, ws=ws)

    async def _command(self, key: ThreadKey, user: str, command: Command) -> None:
        """``@flower /repo …`` (the channel's repository), ``@flower /limit …`` (its spend limits) and
        ``@flower /policy`` (its settings), answered in the thread."""
        if isinstance(command, RepoCommand):
            if await self.repo.command(key, user, command.source, command.base):
                await self.store.audit(user, "bind", (key.team, key.channel, key.thread_ts), command.source)
        elif isinstance(command, LimitCommand):
            await self.limits.command(key, user, command.scope, command.amount)
        else:
            await self.limits.policy(key, user)

    def _workspace(self, key: ThreadKey) -> Path | None:
        """The thread's workspace, made once per message that needs it; None (logged) when its folder
        cannot be made: the thread is refused, nothing is taken or started."""
        try:
            return self.jobs.workspace(key)
        except ThreadError as exc:
            log.warning("refusing thread %s: %s", key, exc)
            return None

    async def _shared(self, key: ThreadKey, event: dict[str, Any],
                      ws: Path | None = None) -> tuple[Path | None, Shared]:
        """The files shared with ``event``: into the thread's inbox, named in its words, images for
        the models; what was refused is said in the thread with the reason. With the workspace made
        for them (``ws`` when made already; None when no file came, or the folder cannot be made)."""
        files = event.get("files") or []
        if not files:
            return ws, Shared()
        ws = ws or self._workspace(key)
        if ws is None:  # a thread whose folder cannot be made: a start refuses it too
            return None, Shared()
        shared = await take_shared(self.client, self.config, key, ws, files)
        if shared.note:
            await self.outbox.send(key, "files", notice_key("files", key.channel, event["ts"]), shared.note)
        return ws, shared

    async def begin(self, key: ThreadKey, ask: str, user: str, ts: str, *, new: bool = False,
                    archived: bool = False, images: Sequence[Image] = (), ws: Path | None = None) -> None:
        """Start the thread's first run (or its first after ``/new``, which ``archived`` the last):
        reaction, the acknowledgement (which becomes the run's status line), the run. ``ws``: the
        thread's workspace, when made already."""
        ws = ws or self._workspace(key)
        if ws is None:  # a thread whose folder cannot be made is refused here
            return
        await react(self.client, key.channel, ts)
        accepted = render.started_message(fenced=self.config.sandbox, archived=archived)
        ack = notice_key("accepted", key, ts)  # the run edits it into its status line: one post, not two
        await self.outbox.send(key, "accepted", ack, accepted["text"], accepted["blocks"])
        if not new:  # /new is recorded by start_over
            await self.store.audit(user, "start", key, ask)
        await self.jobs.start(key, Start.request(ask, by=user, images=images, ack_key=ack, new=new), ws=ws)

    async def words(self, key: ThreadKey, said: Said, user: str, ts: str, *, shared: Shared = Shared(),
                    ws: Path | None = None) -> None:
        """A person's words in a known thread (and the files ``shared`` with them, into ``ws``): /new,
        an answer, an interruption, or a start."""
        if said.new:
            await self.start_over(key, said.text + shared.words, user, ts, images=shared.images, ws=ws)
            return
        said_text, images = said.text + shared.words, shared.images
        if not said_text.strip():
            return
        pending = await self.store.pending_questions(key)
        if pending:
            q = pending[-1]  # the newest open question is the one the person sees last
            if await self.store.answer_question(q.id, said_text, user):
                await self._answered(q, said_text, user)
                await react(self.client, key.channel, ts, "white_check_mark")
                return
        if await self.jobs.interrupt(key, said_text, by=user, ts=ts, images=images):
            await react(self.client, key.channel, ts, "eyes")
            return
        await react(self.client, key.channel, ts)
        await self.jobs.start(key, Start.reply(said_text, by=user, images=images), ws=ws)

    async def start_over(self, key: ThreadKey, text: str, user: str, ts: str | None,
                         images: Sequence[Image] = (), ws: Path | None = None) -> None:
        """``/new …`` or the Start over button: stop, archive, then start fresh or ask what to do."""
        await self.store.audit(user, "new", key, text)
        await self.jobs.stop(key)
        for q in await self.store.close_questions(key):  # the old run's questions no longer take answers
            if q.message_ts:
                shown = render.closed_question_message(q.text, texts.CLOSED_STARTED_OVER, asked_by=q.asked_by)
                await edit(self.client, key.channel, q.message_ts, shown["text"], shown["blocks"])
        ws = ws or self.jobs.workspace(key)
        archived = await self.jobs.archive(key, ws)
        if text:
            if ts:  # one reaction and one first reply: it says the last run was archived
                await self.begin(key, text, user, ts, new=True, archived=archived, images=images, ws=ws)
            else:
                await self.jobs.start(key, Start.request(text, by=user, images=images, new=True), ws=ws)
            return
        if ts:
            await react(self.client, key.channel, ts)
        await self.store.set_state(key, "idle")
        await self.outbox.send(key, "ask_what", notice_key("ask_what", key, ts or user, time.time()),
                               texts.ASK_WHAT)

    async def _answered(self, q: StoredQuestion, answer: str, user: str) -> None:
        delivered = self.answers.deliver(q.thread, q.question_key, Answer("answered", answer, by=user))
        # the run records the ts only after the post returns: a quick answer finds it in the outbox
        ts = q.message_ts or await self.store.sent_ts(controls.question_notice_key(q.thread, q.id))
        if ts:
            shown = render.answered_message(q.text, answer, user, asked_by=q.asked_by)
            await edit(self.client, q.thread.channel, ts, shown["text"], shown["blocks"])
        if not delivered:  # nobody waits here: a run parked or stopped on it picks up (and asks it again)
            await self.jobs.take_up(q.thread)

    # -- clicks --------------------------------------------------------------------------------

    async def answer_click(self, q: StoredQuestion, option: int, user: str, channel: str, thread_ts: str | None,
                           ack: Callable[[], Awaitable[Any]]) -> None:
        """Option ``option`` of ``q`` clicked: the first answer wins; a late or second click gets an
        ephemeral note.

        The answer is in ``bot.db`` before the click is acked: Slack never redelivers a click, so
        an acked click must not be lost by a kill. Killed before that, the person sees the click
        fail in Slack and clicks again.
        """
        answer = q.options[option]
        won = await self.store.answer_question(q.id, answer, user)
        await ack()
        if not won:
            now = await self.store.get_question(q.id)
            note = (render.stale_click_note(answer=now.answer, by_user_id=now.answered_by)
                    if now and now.answered else render.stale_click_note())
            await ephemeral(self.client, channel, user, note, thread_ts=thread_ts)
            return
        await self._or_say_why(q.thread, "answered", {"question": q.id, "answer": answer, "user": user},
                               lambda: self._answered(q, answer, user))

    async def go_on_click(self, key: ThreadKey, user: str) -> None:
        """Go on under a spend limit's pause: the run goes on where it stopped (no new request);
        still over the limit, it pauses again and says so."""
        async def go_on() -> None:
            await self.store.audit(user, "go_on", key)
            await self.jobs.take_up(key)

        await self._or_say_why(key, "control", {"user": user, "stop": False, "go_on": True}, go_on)

    async def pr_work_click(self, key: ThreadKey, user: str, batch: str) -> None:
        """Work on this under a pull request's review post: the follow-up starts on its remarks."""
        watch = self.pr_watch
        if watch is not None:
            await self._or_say_why(key, "pr_work", {"user": user, "batch": batch},
                                   lambda: watch.work_on(key, user, batch))

    async def terminal_click(self, key: ThreadKey, user: str) -> None:
        """"Continue in a terminal": the command, shown only to the person who clicked (an allowed
        one: the thread itself never shows host paths)."""
        path = self.jobs.workspace(key)
        await ephemeral(self.client, key.channel, user, texts.TERMINAL.format(host=socket.gethostname(), path=path),
                        thread_ts=key.thread_ts)

    async def session_stopped(self, key: ThreadKey, user: str) -> None:
        """Stop pressed on ``key``'s agent session (Slack's ``agent_session_stopped``): the run stops
        as with our Stop button, and the session leaves ``processing`` even when nothing ran."""
        if await self.store.get_thread(key) is None:
            return  # not a thread of ours

        async def stop() -> None:
            await self.store.audit(user, "stop", key, "Slack's Stop")
            if not await self.jobs.stop(key):
                await self.jobs.sessions.set(key, "active")

        await self._or_say_why(key, "control", {"user": user, "stop": True}, stop)

    async def control_click(self, key: ThreadKey, user: str, *, stop: bool) -> None:
        """Stop or Start over on ``key``'s status message."""
        async def control() -> None:
            if stop:
                await self.store.audit(user, "stop", key)
                await self.jobs.stop(key)
            else:
                await self.start_over(key, "", user, None)

        await self._or_say_why(key, "control", {"user": user, "stop": stop}, control)

"""Which of the bot's files a piece of work passes through.

Every Python call is watched (``sys.setprofile``, and ``threading.setprofile`` for threads started
meanwhile) and the bot's files it lands in are kept, by who made the call: each asyncio task
remembers the task that created it (a task factory copies a mark into the new task's context,
which ``asyncio.to_thread`` carries into its thread too). Three kinds of work are told apart:

- the loops that run whether or not anyone writes (the socket watchdog's timer, the pull-request
  watch, catch-up, replicas, housekeeping), and what they start: never counted;
- a thread's run (``Jobs._run``) and what it starts: counted apart, as ``run``;
- everything else since watching began (the Socket Mode client's tasks, the gate, the bolt app,
  the intake, the outbox that posts): the event's own work.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import bot

BOT_ROOT = str(Path(bot.__file__).parent) + "/"
TESTING = BOT_ROOT + "testing/"
_MARK: contextvars.ContextVar[str | None] = contextvars.ContextVar("reach_mark", default=None)
# The loops that run anyway, by the file their task starts in (and its function, where that file
# serves the event too): what they do, and what they start, is never counted.
_BACKGROUND = {"inbound/socket.py": "_watch", "runs/pr_watch.py": None, "inbound/catchup.py": None,
               "store/replicas.py": None, "store/housekeeping.py": None}


def _mark_of(coro) -> str | None:
    """What a task running ``coro`` is: "background", "run" or None (the event's own)."""
    code = getattr(coro, "cr_code", None) or getattr(coro, "gi_code", None)
    if code is None or not code.co_filename.startswith(BOT_ROOT):
        return None
    where = code.co_filename[len(BOT_ROOT):]
    if where == "runs/jobs.py" and code.co_name == "_run":
        return "run"
    if where in _BACKGROUND and _BACKGROUND[where] in (None, code.co_name):
        return "background"
    return None


def _current_mark() -> str | None:
    mark = _MARK.get()
    if mark is not None:
        return mark
    try:
        task = asyncio.current_task()
    except RuntimeError:  # a thread with no loop: its context said nothing
        return None
    return _mark_of(task.get_coro()) if task is not None else None


class Reach:
    """The bot files seen, by kind of work; paths relative to bot/."""

    def __init__(self) -> None:
        self.event: set[str] = set()
        self.run: set[str] = set()
        self.on = True

    def _profile(self, frame, event, arg):
        if event != "call" or not self.on:
            return
        filename = frame.f_code.co_filename
        if not filename.startswith(BOT_ROOT) or filename.startswith(TESTING):
            return
        mark = _current_mark()
        if mark is None:
            self.event.add(filename[len(BOT_ROOT):])
        elif mark == "run":
            self.run.add(filename[len(BOT_ROOT):])

    def files(self, *, run: bool = False) -> list[str]:
        """The event's own files, and with ``run`` the run's too."""
        return sorted(self.event | self.run if run else self.event)


@contextmanager
def watch(loop: asyncio.AbstractEventLoop):
    """Watch the calls made from here on, in this thread and in threads started meanwhile; tasks
    created on ``loop`` meanwhile carry which kind of work they are."""
    reach = Reach()
    old_factory = loop.get_task_factory()

    def factory(loop, coro, context=None):
        mark = _current_mark() or _mark_of(coro)
        context = (context or contextvars.copy_context()).copy()
        context.run(_MARK.set, mark)
        return asyncio.Task(coro, loop=loop, context=context)

    loop.set_task_factory(factory)
    threading.setprofile(reach._profile)
    sys.setprofile(reach._profile)
    try:
        yield reach
    finally:
        reach.on = False
        sys.setprofile(None)
        threading.setprofile(None)
        loop.set_task_factory(old_factory)

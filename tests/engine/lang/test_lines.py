"""stdin's one reader: each line goes to the newest waiter, none to a stale one, none unseen."""

from __future__ import annotations

import asyncio
import io
import os
import pty

from engine._human.lines import Lines, lines_of
from engine._human.transports import Question, TerminalTransport


async def test_the_newest_waiter_gets_the_next_line_and_the_older_one_the_one_after():
    r, w = os.pipe()
    with os.fdopen(r, "r", encoding="utf-8") as rf, os.fdopen(w, "w", encoding="utf-8") as wf:
        lines = Lines(rf)
        question = asyncio.create_task(lines.line())
        await asyncio.sleep(0)
        prompt = asyncio.create_task(lines.line())  # a Ctrl-C prompt opened over the question
        await asyncio.sleep(0)
        wf.write("use blue\n1\n")
        wf.flush()
        assert await prompt == "use blue\n"
        assert await question == "1\n"


async def test_a_line_nobody_waited_for_is_dropped_and_reported_once():
    r, w = os.pipe()
    with os.fdopen(r, "r", encoding="utf-8") as rf, os.fdopen(w, "w", encoding="utf-8") as wf:
        lines = Lines(rf)
        waiting = asyncio.create_task(lines.line())
        await asyncio.sleep(0)
        waiting.cancel()  # a question timed out; its read stays in flight
        wf.write("late\n")
        wf.flush()
        assert lines.read is not None
        await asyncio.shield(lines.read)
        assert lines.typed_ahead() == ["late"] and lines.typed_ahead() == []
        next_line = asyncio.create_task(lines.line())
        wf.write("fresh\n")
        wf.flush()
        assert await next_line == "fresh\n"
        wf.close()
        assert await lines.line() == "" and await lines.line() == ""  # end of input is final


async def test_lines_queued_in_a_terminal_before_a_question_never_answer_it():
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "r", encoding="utf-8", closefd=False) as tty:
            os.write(master, b"Go\n")  # typed while work ran: waiting in the terminal's queue
            await asyncio.sleep(0.05)
            out = io.StringIO()
            t = TerminalTransport(input=tty, output=out)
            asking = asyncio.create_task(t.ask(Question("用什么语言?", ("Python", "Go"))))
            while "> " not in out.getvalue():
                await asyncio.sleep(0.01)
            assert "not taken as its answer: 'Go'" in out.getvalue()
            os.write(master, b"1\n")
            assert (await asking).text == "Python"
            assert t.lines is lines_of(tty)  # one reader per stream, shared
    finally:
        os.close(master)
        os.close(slave)

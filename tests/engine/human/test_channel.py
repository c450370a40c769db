"""HumanChannel and its transports, without the CLI: keys, the Q&A log, limits, timeouts, amend."""

from __future__ import annotations

import asyncio
import io
import os
import re
from pathlib import Path

import pytest

from engine._human.amend import amend_text
from engine._lang.zh import AMEND_LABEL, LIMIT_TEXT, NOBODY_TEXT, TIMEOUT_DEFAULT_TEXT, TIMEOUT_TEXT
from engine._human.channel import (
    Answer,
    ChannelError,
    HumanChannel,
    Question,
    span,
)
from engine._events import Event
from engine._human.transports import (
    ScriptedTransport,
    TerminalTransport,
    TransportError,
    pick,
    question_key,
)
from engine._errors import FlowerError

# -- keys ------------------------------------------------------------------------------------


def test_key_is_stable_and_ignores_everything_but_text_and_options() -> None:
    a = Question("Which database?", ("PostgreSQL", "SQLite"))
    b = Question("Which database?", ["PostgreSQL", "SQLite"], default="SQLite", timeout_s=5, asked_by="确认需求")
    assert a.key == b.key == question_key("Which database?", ("PostgreSQL", "SQLite"))
    assert re.fullmatch(r"[0-9a-f]{16}", a.key)
    assert b.options == ("PostgreSQL", "SQLite")  # a list becomes a tuple: the value stays hashable
    # a known value: the key must not change between releases (the bot stores it across restarts)
    assert question_key("x") == "9e8f06d7ca39598f"  # sha256('["x", []]')[:16]


@pytest.mark.parametrize(
    ("left", "right", "same"),
    [
        (("Which DB?", ()), ("  Which   DB?\n", ()), True),  # whitespace runs do not count
        (("Which DB?", ("a", "b")), ("Which DB?", (" a ", "b")), True),
        (("用哪个数据库？", ()), ("用哪个数据库?", ()), True),  # full-width forms fold (NFKC)
        (("Which DB?", ()), ("which db?", ()), False),  # case does count
        (("Which DB?", ("a", "b")), ("Which DB?", ("b", "a")), False),  # option order counts
        (("Which DB?", ("a",)), ("Which DB?", ()), False),
        (("Which DB?", ("a b",)), ("Which DB?", ("a", "b")), False),  # options are not joined
    ],
)
def test_key_normalization(left: tuple, right: tuple, same: bool) -> None:
    assert (question_key(*left) == question_key(*right)) is same


def test_explicit_key_is_kept_and_answer_state() -> None:
    assert Question("q", key="k1").key == "k1"
    assert Answer("answered", "x").answered
    assert not Answer("timeout", "default").answered
    assert not Answer("nobody").answered


# -- asking, the log and events ----------------------------------------------------------


async def test_log_file_format_and_append(tmp_path: Path) -> None:
    log = tmp_path / "notes" / "问答记录.md"
    log.parent.mkdir()
    log.write_text("# 问答记录\n\n", encoding="utf-8")
    ch = HumanChannel(transport=ScriptedTransport(["SQLite", "yes"], by="alice"), log_path=log, timeout_s=None)
    a1 = await ch.ask("Which database?", options=["PostgreSQL", "SQLite"], default="SQLite", asked_by="确认需求")
    a2 = await ch.ask("Ship it?")
    assert a1 == Answer("answered", "SQLite", "alice") and a2.text == "yes"
    text = log.read_text(encoding="utf-8")
    assert text.startswith("# 问答记录\n\n### Q1 (")  # append mode: what was there stays
    assert re.search(r"^### Q1 \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d, 确认需求\)$", text, re.M)
    assert re.search(r"^### Q2 \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)$", text, re.M)
    block1 = text.split("### Q1")[1].split("### Q2")[0]
    expected = "\nWhich database?\n\n1. PostgreSQL\n2. SQLite\n\ndefault: SQLite\n\n**A**: SQLite — _answered by alice_\n"
    assert expected in block1
    assert text.endswith("Ship it?\n\n**A**: yes — _answered by alice_\n\n")


async def test_log_parent_created_and_no_log_without_path(tmp_path: Path) -> None:
    log = tmp_path / "deep" / "er" / "qa.md"
    await HumanChannel(log_path=log).ask("anyone?")
    assert "**A**: (no answer) — _nobody; nobody to ask_" in log.read_text(encoding="utf-8")
    ch = HumanChannel(transport=ScriptedTransport(["x"]))
    assert (await ch.ask("q")).answered  # no log_path: nothing written, nothing fails
    assert list(tmp_path.iterdir()) == [tmp_path / "deep"]


async def test_events_asked_then_answered() -> None:
    seen: list[Event] = []
    ch = HumanChannel(transport=ScriptedTransport(["b"], by="bob"), on_event=seen.append)
    await ch.ask("Pick one", options=("a", "b"), asked_by="协调者")
    assert [e.kind for e in seen] == ["ask", "ask"]
    assert all(e.step == "协调者" for e in seen)
    asked, answered = (e.payload for e in seen)
    key = question_key("Pick one", ("a", "b"))
    assert asked == {
        "phase": "asked", "question": "Pick one", "options": ("a", "b"),
        "state": "", "answer": "", "by": "", "key": key, "n": 1,
    }
    assert answered == {**asked, "phase": "answered", "state": "answered", "answer": "b", "by": "bob"}


async def test_a_failing_event_callback_does_not_stop_the_ask() -> None:
    def broken(event: Event) -> None:
        raise RuntimeError("front end down")

    ch = HumanChannel(transport=ScriptedTransport(["fine"]), on_event=broken)
    assert (await ch.ask("q")).text == "fine"


async def test_max_asks_refuses_without_asking(tmp_path: Path) -> None:
    t = ScriptedTransport(["one", "two"])
    ch = HumanChannel(transport=t, max_asks=1, log_path=tmp_path / "qa.md")
    assert (await ch.ask("first?")).text == "one"
    assert ch.exhausted
    refused = await ch.ask("second?")
    assert refused.state == "nobody" and "max_asks=1" in refused.text
    assert [q.text for q in t.asked] == ["first?"] and ch.asks == 1
    assert "second?" not in (tmp_path / "qa.md").read_text(encoding="utf-8")
    zero = HumanChannel(transport=t, max_asks=0)
    assert (await zero.ask("third?")).state == "nobody" and len(t.asked) == 1


async def test_timeout_without_default(tmp_path: Path) -> None:
    t = ScriptedTransport()
    ch = HumanChannel(transport=t, timeout_s=0.05, log_path=tmp_path / "qa.md")
    assert await ch.ask("anyone?") == Answer("timeout", "")
    assert t.waiting == []  # the cancelled wait tidied up after itself
    assert "**A**: (no answer) — _timeout; timeout after 0.05 s_" in (tmp_path / "qa.md").read_text(encoding="utf-8")


async def test_timeout_with_default_gives_the_default(tmp_path: Path) -> None:
    ch = HumanChannel(transport=ScriptedTransport(), timeout_s=None, log_path=tmp_path / "qa.md")
    a = await ch.ask("Which?", options=("a", "b"), default="b", timeout_s=0.05)  # per-ask timeout wins
    assert a == Answer("timeout", "b")
    written = (tmp_path / "qa.md").read_text(encoding="utf-8")
    assert "**A**: b — _timeout; timeout after 0.05 s; default used_" in written


async def test_park_is_called_once_past_the_deadline_and_the_ask_keeps_waiting(tmp_path: Path) -> None:
    parked: list[Question] = []
    t = ScriptedTransport()
    ch = HumanChannel(transport=t, timeout_s=0.05, log_path=tmp_path / "qa.md", park=parked.append)
    pending = asyncio.create_task(ch.ask("Which port?", asked_by="clarify"))
    q = await t.next_question()
    while not parked:
        await asyncio.sleep(0.01)
    assert parked == [q] and not pending.done() and t.waiting == [q]  # the model is told nothing yet
    await asyncio.sleep(0.1)
    assert len(parked) == 1  # once per question, not once per deadline
    assert t.answer(q.key, "8080", by="erin")  # an answer before the front end ends the run is taken
    assert await pending == Answer("answered", "8080", "erin")
    written = (tmp_path / "qa.md").read_text(encoding="utf-8")
    assert "no answer in 0.05 秒: the run is parked" in written
    assert "**A**: 8080 — _answered by erin; answered after the run was parked_" in written


async def test_a_parked_ask_cancelled_by_its_front_end_leaves_nothing_waiting(tmp_path: Path) -> None:
    t = ScriptedTransport()
    tasks: list[asyncio.Task] = []
    ch = HumanChannel(transport=t, timeout_s=0.01, log_path=tmp_path / "qa.md",
                      park=lambda q: tasks[0].cancel())  # the front end parks the run: it ends the task
    tasks.append(asyncio.create_task(ch.ask("anyone?")))
    with pytest.raises(asyncio.CancelledError):
        await tasks[0]
    assert t.waiting == []
    assert (tmp_path / "qa.md").read_text(encoding="utf-8").endswith("**A**: (no answer) — _nobody; cancelled_\n\n")


async def test_park_leaves_questions_with_a_default_and_unlimited_waits_alone() -> None:
    parked: list[Question] = []
    ch = HumanChannel(transport=ScriptedTransport(), timeout_s=0.02, park=parked.append)
    assert await ch.ask("Which?", default="b") == Answer("timeout", "b")
    t = ScriptedTransport()
    ch = HumanChannel(transport=t, timeout_s=None, park=parked.append)
    pending = asyncio.create_task(ch.ask("forever?"))
    q = await t.next_question()
    await asyncio.sleep(0.05)
    t.answer(q.key, "yes")
    assert (await pending).text == "yes" and parked == []


async def test_timeout_zero_never_asks() -> None:
    t = ScriptedTransport(["would answer"])
    ch = HumanChannel(transport=t, timeout_s=0)
    assert await ch.ask("q", default="d") == Answer("nobody")
    assert t.asked == []


async def test_no_transport_means_nobody() -> None:
    ch = HumanChannel()
    assert await ch.ask("q") == Answer("nobody") and ch.asks == 1


async def test_wait_forever_until_answered_from_another_task() -> None:
    t = ScriptedTransport()
    ch = HumanChannel(transport=t, timeout_s=None)
    pending = asyncio.create_task(ch.ask("Which port?", asked_by="clarify"))
    q = await t.next_question()
    assert q.timeout_s is None and q.asked_by == "clarify" and t.waiting == [q]
    assert t.answer(q.key, "8080", by="carol")
    assert await pending == Answer("answered", "8080", "carol")


async def test_a_cancelled_ask_is_closed_in_the_log_and_events(tmp_path: Path) -> None:
    seen: list[Event] = []
    t = ScriptedTransport()
    ch = HumanChannel(transport=t, timeout_s=None, log_path=tmp_path / "qa.md", on_event=seen.append)
    pending = asyncio.create_task(ch.ask("still there?"))
    await t.next_question()
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    assert [e.phase for e in seen] == ["asked", "cancelled"] and t.waiting == []
    assert (tmp_path / "qa.md").read_text(encoding="utf-8").endswith("**A**: (no answer) — _nobody; cancelled_\n\n")


async def test_a_failing_transport_counts_as_nobody(tmp_path: Path) -> None:
    class Broken:
        async def ask(self, q: Question) -> Answer:
            raise ConnectionError("slack unreachable")

    ch = HumanChannel(transport=Broken(), log_path=tmp_path / "qa.md")
    assert await ch.ask("q") == Answer("nobody")
    assert "transport failed: ConnectionError('slack unreachable')" in (tmp_path / "qa.md").read_text(encoding="utf-8")


async def test_blank_question_and_bad_settings_are_errors() -> None:
    with pytest.raises(ChannelError, match="empty"):
        await HumanChannel().ask("   ")
    with pytest.raises(ChannelError, match="timeout_s must be >= 0"):
        HumanChannel(timeout_s=-1)
    with pytest.raises(ChannelError, match="max_asks must be >= 0"):
        HumanChannel(max_asks=-2)


def test_tool_names_and_servers() -> None:
    ch = HumanChannel(server_name="person")
    assert ch.tool_name == "mcp__person__ask" and ch.inbox_tool_name == "mcp__person__inbox"
    servers = ch.mcp_servers()
    assert list(servers) == ["person"] and servers["person"]["type"] == "sdk"


@pytest.mark.parametrize(
    ("answer", "wait", "expected"),
    [
        (Answer("answered", "SQLite", "alice"), 30, "SQLite\n(回答人:alice)"),
        (Answer("answered", "SQLite"), 30, "SQLite"),
        (Answer("answered", "", "bob"), 30, "(空回答)\n(回答人:bob)"),
        (Answer("timeout"), 1800, TIMEOUT_TEXT.format(span="30 分钟")),
        (Answer("timeout", "b"), 45, TIMEOUT_DEFAULT_TEXT.format(span="45 秒", default="b")),
        (Answer("nobody"), 0, NOBODY_TEXT),
        (Answer("nobody"), None, NOBODY_TEXT),
    ],
)
def test_tool_text(answer: Answer, wait: float | None, expected: str) -> None:
    assert HumanChannel().tool_text(answer, wait) == expected


def test_texts_tell_the_model_to_assume_and_record() -> None:
    for t in (TIMEOUT_TEXT, TIMEOUT_DEFAULT_TEXT, NOBODY_TEXT, LIMIT_TEXT):
        assert "未知与假设" in t
    spans = [span(s) for s in (0.05, 45, 90, 1800, 5400)]
    assert spans == ["0.05 秒", "45 秒", "1.5 分钟", "30 分钟", "1.5 小时"]


# -- inbox -------------------------------------------------------------------------------------


def test_inbox_post_and_drain() -> None:
    ch = HumanChannel()
    assert ch.drain() == []
    ch.post("use port 8080", by="bob")
    ch.post("and log to stderr")
    assert ch.drain() == [("use port 8080", "bob"), ("and log to stderr", "")]
    assert ch.drain() == []


# -- amend ----------------------------------------------------------------------------------

BRIEF = "## 目标\n\n做一个 X\n\n## 验收标准\n\n- 能跑\n\n## 边界\n\n无\n\n## 未知与假设\n\n无\n"


def test_amend_needs_a_path() -> None:
    with pytest.raises(ValueError, match="amend_path") as info:
        HumanChannel().amend("more")
    assert isinstance(info.value, FlowerError)


def test_amend_appends_once_and_reuses_the_section(tmp_path: Path) -> None:
    brief = tmp_path / "需求.md"
    brief.write_text(BRIEF, encoding="utf-8")
    ch = HumanChannel(amend_path=brief)
    assert ch.amend("也要支持 CSV 导出")
    assert brief.read_text(encoding="utf-8") == BRIEF + "\n## 唤醒时追加\n\n- 也要支持 CSV 导出\n"
    before = brief.stat().st_mtime_ns, brief.read_text(encoding="utf-8")
    assert not ch.amend("也要支持 CSV 导出")
    assert not ch.amend("  也要支持   CSV 导出 ")  # whitespace does not make it new
    assert (brief.stat().st_mtime_ns, brief.read_text(encoding="utf-8")) == before  # not rewritten
    assert ch.amend("还有 JSON")
    text = brief.read_text(encoding="utf-8")
    assert text.count(f"## {AMEND_LABEL}") == 1
    assert text.endswith("## 唤醒时追加\n\n- 也要支持 CSV 导出\n- 还有 JSON\n")
    assert not ch.amend("做一个 X")  # already in the brief itself
    assert not ch.amend("   ")
    assert ch.amend("another label", label="补充")
    assert brief.read_text(encoding="utf-8").endswith("- 还有 JSON\n\n## 补充\n\n- another label\n")
    assert [p.name for p in tmp_path.iterdir()] == ["需求.md"]  # no temp file left behind


def test_amend_creates_a_missing_brief(tmp_path: Path) -> None:
    brief = tmp_path / "sub" / "需求.md"
    assert HumanChannel(amend_path=brief).amend("start here")
    assert brief.read_text(encoding="utf-8") == "## 唤醒时追加\n\n- start here\n"


@pytest.mark.parametrize(
    ("text", "said", "expected"),
    [
        ("", "a", "## 唤醒时追加\n\n- a\n"),
        ("# B\n", "a", "# B\n\n## 唤醒时追加\n\n- a\n"),
        ("# B\n\n\n\n", "a", "# B\n\n## 唤醒时追加\n\n- a\n"),
        # the section in the middle: the bullet goes at its end, before the next heading
        ("## 唤醒时追加\n\n- a\n\n## 其他\n\nz\n", "b", "## 唤醒时追加\n\n- a\n- b\n\n## 其他\n\nz\n"),
        ("## 唤醒时追加\n- a\n## 其他\n", "b", "## 唤醒时追加\n- a\n- b\n\n## 其他\n"),
        # a deeper heading belongs to the section; a paragraph gets a blank line before the list
        ("## 唤醒时追加\n\npara\n### sub\n\nx\n", "new", "## 唤醒时追加\n\npara\n### sub\n\nx\n\n- new\n"),
        ("## 唤醒时追加\n", "b", "## 唤醒时追加\n\n- b\n"),
        ("## 唤醒时追加 ##\n\n- a\n", "b", "## 唤醒时追加 ##\n\n- a\n- b\n"),
        # a continuation line of the last bullet still counts as inside the list
        ("## 唤醒时追加\n\n- a\n  more\n", "b", "## 唤醒时追加\n\n- a\n  more\n- b\n"),
        # multi-line words: continuation lines are indented under the bullet
        ("", "one\ntwo\n\nthree", "## 唤醒时追加\n\n- one\n  two\n\n  three\n"),
        # a heading inside fenced code is not the section
        ("```\n## 唤醒时追加\n```\n", "a", "```\n## 唤醒时追加\n```\n\n## 唤醒时追加\n\n- a\n"),
        ("x said a thing\n", "said a", None),
        ("", "", None),
    ],
)
def test_amend_text(text: str, said: str, expected: str | None) -> None:
    assert amend_text(text, said) == expected


# -- transports ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "options", "default", "expected"),
    [
        ("2\n", ("a", "b"), None, "b"),
        (" 1 ", ("a", "b"), None, "a"),
        ("3", ("a", "b"), None, "3"),  # out of range: a free answer
        ("0", ("a", "b"), None, "0"),
        ("2", (), None, "2"),
        ("use redis\n", ("a", "b"), None, "use redis"),
        ("\n", ("a", "b"), "b", "b"),
        ("   \n", (), None, None),  # nothing typed and no default: ask again
        ("", (), "", ""),
    ],
)
def test_pick(line: str, options: tuple[str, ...], default: str | None, expected: str | None) -> None:
    assert pick(line, Question("q", options, default)) == expected


@pytest.mark.parametrize(
    ("typed", "default", "expected"),
    [
        ("2\n", None, Answer("answered", "SQLite", "terminal")),
        ("Redis please\n", None, Answer("answered", "Redis please", "terminal")),
        ("\n", "PostgreSQL", Answer("answered", "PostgreSQL", "terminal")),
        ("\n  \nx\n", None, Answer("answered", "x", "terminal")),
        ("", None, Answer("nobody")),
        ("\n", None, Answer("nobody")),  # an empty line, then end of input
    ],
)
async def test_terminal_transport(typed: str, default: str | None, expected: Answer) -> None:
    out = io.StringIO()
    t = TerminalTransport(input=io.StringIO(typed), output=out)
    q = Question("Which database?", ("PostgreSQL", "SQLite"), default, asked_by="确认需求")
    assert await t.ask(q) == expected
    shown = out.getvalue()
    assert "? [确认需求] Which database?\n  1. PostgreSQL\n  2. SQLite\n" in shown and "> " in shown
    assert ("Enter = PostgreSQL" in shown) is (default is not None)


async def test_terminal_eof_answers_nobody_for_good() -> None:
    t = TerminalTransport(input=io.StringIO(""), output=io.StringIO())
    assert await t.ask(Question("a")) == Answer("nobody")
    assert await t.ask(Question("b")) == Answer("nobody")


class _Prompts(io.StringIO):
    """An output stream that tells the test each time a prompt ("> ") is shown."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: asyncio.Queue[str] = asyncio.Queue()

    def write(self, s: str) -> int:
        if s.endswith("> "):
            self.shown.put_nowait(s)
        return super().write(s)


async def test_terminal_reader_left_by_a_timeout_serves_the_next_question() -> None:
    r, w = os.pipe()
    with os.fdopen(r, "r", encoding="utf-8") as rf, os.fdopen(w, "w", encoding="utf-8") as wf:
        out = _Prompts()
        ch = HumanChannel(transport=TerminalTransport(input=rf, output=out), timeout_s=0.05)
        assert (await ch.ask("first?")).state == "timeout"
        await out.shown.get()
        second = asyncio.create_task(ch.ask("second?", timeout_s=120))  # None: the channel's 0.05 s
        await out.shown.get()  # the second question is on screen: now the person types
        wf.write("yes\n")
        wf.flush()
        assert await second == Answer("answered", "yes", "terminal")
        # the leftover reader was reused: a single line answered, nothing else is pending
        third = asyncio.create_task(ch.ask("third?", timeout_s=120))
        await out.shown.get()
        wf.write("2nd line\n")
        wf.flush()
        assert (await third).text == "2nd line"


async def test_terminal_drops_a_line_typed_after_its_question_timed_out() -> None:
    r, w = os.pipe()
    with os.fdopen(r, "r", encoding="utf-8") as rf, os.fdopen(w, "w", encoding="utf-8") as wf:
        t = TerminalTransport(input=rf, output=io.StringIO())
        ch = HumanChannel(transport=t, timeout_s=0.05)
        assert (await ch.ask("first?")).state == "timeout"
        wf.write("late answer to first\n")
        wf.flush()
        assert t._pending is not None
        await asyncio.shield(t._pending)  # the late line has arrived, no question is open
        second = asyncio.create_task(ch.ask("second?", timeout_s=120))  # None: the channel's 0.05 s
        wf.write("fresh\n")
        wf.flush()
        assert (await second).text == "fresh"


async def test_scripted_list_then_waits_for_answer() -> None:
    t = ScriptedTransport(["first"])
    ch = HumanChannel(transport=t, timeout_s=None)
    assert (await ch.ask("one?")).text == "first"
    task = asyncio.create_task(ch.ask("two?"))
    assert (await t.next_question()).text == "one?"  # next_question returns every question, in order
    q = await t.next_question()
    assert q.text == "two?"
    assert t.answer("two?", "by text works too")
    assert (await task).text == "by text works too"


async def test_scripted_callback_forms() -> None:
    async def later(q: Question) -> str:
        return f"async {q.text}"

    def pick_last(q: Question) -> str | Answer | None:
        if q.text == "skip":
            return None
        if q.text == "own":
            return Answer("answered", "own answer", "dave")
        return q.options[-1]

    ch = HumanChannel(transport=ScriptedTransport(later), timeout_s=None)
    assert (await ch.ask("x")).text == "async x"
    t = ScriptedTransport(pick_last)
    ch = HumanChannel(transport=t, timeout_s=None)
    assert await ch.ask("pick", options=("a", "b")) == Answer("answered", "b", "script")
    assert await ch.ask("own") == Answer("answered", "own answer", "dave")
    task = asyncio.create_task(ch.ask("skip"))
    q = [q async for q in _questions(t, 3)][-1]
    t.answer(q.key, "manual")
    assert (await task).text == "manual"


async def _questions(t: ScriptedTransport, n: int):
    for _ in range(n):
        yield await t.next_question()


async def test_scripted_answer_before_the_question_is_kept() -> None:
    t = ScriptedTransport()
    assert not t.answer(question_key("early?"), "ready")
    assert await HumanChannel(transport=t, timeout_s=None).ask("early?") == Answer("answered", "ready", "script")


async def test_scripted_misuse_is_reported() -> None:
    with pytest.raises(TransportError, match="Wrap it in a list"):
        ScriptedTransport("just a string")  # type: ignore[arg-type]
    with pytest.raises(TransportError, match="no question arrived within 0.01s"):
        await ScriptedTransport().next_question(timeout=0.01)


async def test_the_qa_log_numbers_each_question_once_across_a_restart(tmp_path):
    """A run stopped while its question waits, restarted, asks it again: still one Q1, then Q2."""
    log = tmp_path / "qa.md"
    first = HumanChannel(transport=ScriptedTransport([]), log_path=log, timeout_s=None)
    waiting = asyncio.create_task(first.ask("Which language?", options=["Python", "Go"]))
    await asyncio.sleep(0)
    while "### Q1" not in (log.read_text() if log.exists() else ""):
        await asyncio.sleep(0.01)
    waiting.cancel()  # the bot stopped: the question is closed as cancelled in the log
    await asyncio.gather(waiting, return_exceptions=True)
    again = HumanChannel(transport=ScriptedTransport(["Python", "yes"], by="bob"), log_path=log, timeout_s=None)
    assert (await again.ask("Which language?", options=["Python", "Go"])).text == "Python"
    assert (await again.ask("Tests too?")).text == "yes"
    text = log.read_text()
    assert re.findall(r"^### Q(\d+)", text, re.MULTILINE) == ["1", "2"]
    assert text.count("Which language?") == 1 and "**A**: Python" in text

"""bot.render.messages / bot.split / bot.block_kit: every payload within Slack's limits, long text split safely."""

from __future__ import annotations

import re

import pytest

from bot.core.split_text import clip, escape, escaped_len, split_text, utf16_len
from bot.errors import SplitError
from bot.render import messages as render
from bot.render.block_kit import blocks_for
from bot.render.notices import cost, duration, event_notice
from engine import Event
from engine._lang.zh import ACCEPT, AMEND_GOAL, JUDGED_WRONG, UNREACHABLE_QUESTION
from engine.events import (
    AskEvent,
    HandoffEvent,
    Interrupted,
    ResultReported,
    RetryScheduled,
    SessionStarted,
    StepStarted,
    TaskWarning,
    TurnEnded,
    VerdictGiven,
    WaitingOnline,
    WorkflowDone,
)
from tests.bot.helpers.render import assert_slack_ok

FENCE_LINE = re.compile(r"[ \t]*`(\u200b)?`{2,}[^`]*")  # a fence line, or one defused as too long


# -- checkers, written independently of the code under test --------------------------------------


def open_fence_at_end(chunk: str) -> str | None:
    """CommonMark's rule: 3+ backticks open (info without backticks); a bare run as long closes."""
    state: str | None = None
    for line in chunk.split("\n"):
        m = re.fullmatch(r"[ \t]*(`{3,})([^`]*)", line)
        if not m:
            continue
        if state is None:
            state = m.group(1)
        elif not m.group(2).strip() and len(m.group(1)) >= len(state):
            state = None
    return state


def content(text: str) -> str:
    """Everything but whitespace and fence lines: what a split must keep, in order."""
    kept = [line for line in text.split("\n") if not FENCE_LINE.fullmatch(line)]
    return "".join("".join(kept).split())


def assert_chunks_ok(text: str, chunks: list[str], limit: int, measure=utf16_len) -> None:
    for chunk in chunks:
        assert measure(chunk) <= limit, (measure(chunk), chunk[:80])
        assert chunk.strip(), "no blank pieces"
        assert open_fence_at_end(chunk) is None, chunk
    assert content("\n".join(chunks)) == content(text)


# -- split_text: exact cases ---------------------------------------------------------------------

F = "```"


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("hello", 3000, ["hello"]),
        ("", 3000, []),
        ("  \n\n \n", 3000, []),
        ("a" * 3000, 3000, ["a" * 3000]),  # exactly at the limit: untouched
        ("a" * 3001, 3000, ["a" * 3000, "a"]),
        ("x\n" * 8, 16, ["x\n" * 8]),  # 16 characters with the newline: fits as is
        ("alpha beta gamma delta epsilon", 16, ["alpha beta", "gamma delta", "epsilon"]),
        ("para one is here\n\npara two\nmore", 30, ["para one is here", "para two\nmore"]),
        ("one two three\nfour five six\n\nseven eight", 30, ["one two three\nfour five six", "seven eight"]),
        (f"text\n{F}\ncode never closed", 3000, [f"text\n{F}\ncode never closed\n{F}"]),
        (f"{F}py\nopen", 3000, [f"{F}py\nopen\n{F}"]),
        ("inline ```x``` is not a fence", 3000, ["inline ```x``` is not a fence"]),
        (f"{F}py\n" + "line1\nline2\nline3\nline4\n" + F, 30,
         [f"{F}py\nline1\nline2\nline3\n{F}", f"{F}py\nline4\n{F}"]),
        # A ```` block shows ``` lines inside; its pieces close and reopen with ````.
        (f"````md\n{F}py\nx = 1\n{F}\n````", 23, [f"````md\n{F}py\nx = 1\n````", f"````md\n{F}\n````"]),
        ("这是一个很长的句子。" * 4, 25, ["这是一个很长的句子。" * 2, "这是一个很长的句子。" * 2]),
    ],
)
def test_split_text_cases(text: str, limit: int, expected: list[str]) -> None:
    chunks = split_text(text, limit)
    assert chunks == expected
    assert_chunks_ok(text, chunks, limit)


def test_split_prefers_a_cut_before_the_code_block() -> None:
    prose = "Here is the change I made to the parser, with the test:\n\n"
    code = f"{F}python\n" + "".join(f"assert parse({i}) == {i}\n" for i in range(6)) + f"{F}\n"
    chunks = split_text(prose + code, len(code) + 5)
    assert chunks == [prose.strip(), code.strip()]


def test_split_reopens_with_the_info_string_and_keeps_indentation() -> None:
    code = f"{F}python title=x\n" + "".join(f"    line_{i} = {i}\n" for i in range(60)) + F
    chunks = split_text(code, 200)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.startswith(f"{F}python title=x\n    line_") and chunk.endswith(f"\n{F}")
    assert_chunks_ok(code, chunks, 200)


def test_split_refuses_a_tiny_limit() -> None:
    with pytest.raises(SplitError, match="needs a limit of at least 16; got 5"):
        split_text("hello world", 5)


# -- split_text: properties over many texts -------------------------------------------------------

EMOJI = "👨‍👩‍👧‍👦 👍🏽 🇯🇵 1️⃣ "
RTL = "مرحبا بالعالم هذا نص عربي طويل. שלום עולם זה טקסט בעברית. "
CJK = "用中文写一段很长的说明，没有空格。测试：分割，保持完整！"
MIXED = (
    "# Report\n\nThe build passed. Details follow.\n\n"
    + f"{F}bash\n$ pytest -q\n" + "".join(f"tests/test_{i}.py ....... [{i}%]\n" for i in range(40)) + f"{F}\n\n"
    + "Next steps:\n" + "".join(f"- item {i}: do the thing & check <output>\n" for i in range(30))
    + f"\n{F}\nunclosed fence at the end\n" + "more code\n" * 20
)
TEXTS = {
    "prose": ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 80),
    "lines": "".join(f"line number {i} of the log\n" for i in range(400)),
    "mixed": MIXED,
    "cjk": CJK * 120,
    "emoji": EMOJI * 300,
    "rtl": RTL * 100,
    "long word": "x" * 10_000,
    "nested": "````markdown\n" + f"{F}python\nprint('hi')\n{F}\n" * 200 + "````\n",
    "unbalanced": (f"{F}js\nlet a = 1;\n" * 300),
    "only fences": f"{F}\n{F}\n" * 500,
    "crlf": "windows line\r\n" * 500,
}


@pytest.mark.parametrize("limit", [16, 100, 777, 3000])
@pytest.mark.parametrize("name", sorted(TEXTS))
def test_split_properties(name: str, limit: int) -> None:
    text = TEXTS[name]
    chunks = split_text(text, limit)
    assert_chunks_ok(text, chunks, limit)
    for chunk in chunks:  # an emoji sequence is never cut in two
        assert not chunk.startswith(("\u200d", "\ufe0f", "🏽", "\u20e3")) and not chunk.endswith("\u200d")


@pytest.mark.parametrize("name", ["prose", "cjk", "rtl", "lines"])
def test_split_never_cuts_a_word_when_a_space_or_punctuation_is_near(name: str) -> None:
    text = TEXTS[name]
    chunks = split_text(text, 500)
    words = set(text.split())
    for chunk in chunks:
        if name == "cjk":
            assert chunk.endswith(tuple("。，：！")) or chunk == chunks[-1]
        else:
            assert set(chunk.split()) <= words
    assert len(chunks) <= 2 * len(text) // 500 + 1  # pieces are not tiny


def test_forty_thousand_characters() -> None:
    text = (MIXED * 20)[:40_000]
    assert len(text) == 40_000
    chunks = split_text(text, 3000)
    assert 14 <= len(chunks) <= 28
    assert_chunks_ok(text, chunks, 3000)


def test_utf16_measure_counts_emoji_twice() -> None:
    assert utf16_len("a👍") == 3 and utf16_len("中") == 1
    chunks = split_text("👍" * 3000, 3000)
    assert [len(c) for c in chunks] == [1500, 1500]


def test_escaped_measure() -> None:
    text = "a & b < c > d " * 500
    assert escaped_len(text) == utf16_len(escape(text))
    chunks = split_text(text, 3000, measure=escaped_len)
    assert all(len(escape(c)) <= 3000 for c in chunks) and len(chunks) > 2


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short", 10, "short"),
        ("hello world this is long", 12, "hello world…"),
        ("abcdefghijklmnop", 10, "abcdefghi…"),
        ("👨‍👩‍👧" * 4, 9, "👨‍👩‍👧…"),  # never half a family
    ],
)
def test_clip(text: str, limit: int, expected: str) -> None:
    assert clip(text, limit) == expected
    assert utf16_len(clip(text, limit)) <= limit


@pytest.mark.parametrize(("raw", "escaped"), [("a & b", "a &amp; b"), ("<!channel>", "&lt;!channel&gt;"),
                                              ("<@U0BOB>", "&lt;@U0BOB&gt;"), ("plain", "plain")])
def test_escape(raw: str, escaped: str) -> None:
    assert escape(raw) == escaped


# -- blocks_for ---------------------------------------------------------------------------------


def test_blocks_for_long_text() -> None:
    text = (MIXED * 20)[:40_000]
    blocks = blocks_for(text, lead="*Report*\n")
    assert 14 <= len(blocks) <= 28 and blocks[0]["text"]["text"].startswith("*Report*\n")
    assert_slack_ok({"text": "x", "blocks": blocks})
    assert content("\n".join(b["text"]["text"] for b in blocks)) == content("*Report*" + escape(text))


def test_blocks_for_caps_at_fifty_with_a_note() -> None:
    blocks = blocks_for("word " * 60_000)
    assert len(blocks) == 50 and "more characters not shown" in blocks[-1]["text"]["text"]
    assert_slack_ok({"text": "x", "blocks": blocks})
    assert blocks_for("") == [] and blocks_for("  ", lead="*x*\n") == [{"type": "section", "text": {
        "type": "mrkdwn", "text": "*x*"}}]


# -- the bot's messages ------------------------------------------------------------------------------

PAYLOADS = {
    "question": lambda: render.question_message(1, "Which language?", ["Python", "Go"], "确认需求"),
    "question long": lambda: render.question_message(2, "为什么 <b>?\n" * 3000, ["x" * 300] * 30, "a" * 300,
                                                     deadline_note="Closes in 2h & then the default"),
    "question many options": lambda: render.question_message(3, "pick", [f"option {i}" for i in range(200)]),
    "question no options": lambda: render.question_message(4, "Anything else?"),
    "answered": lambda: render.answered_message("Which language?", "Python", "U0BOB"),
    "answered long": lambda: render.answered_message("q " * 5000, "a & b " * 5000, "U0BOB"),
    "answered terminal": lambda: render.answered_message("q", "yes", "<script>"),
    "closed": lambda: render.closed_question_message("q", "No answer in time; went on with: 接受"),
    "status": lambda: render.status_message(doing="Working", round=2, cost_usd=1.234, elapsed_s=3723,
                                            state="running"),
    "status done": lambda: render.status_message(state="done", cost_usd=0.004),
    "wake": lambda: render.wake_banner(follow_up=2, checks=15, said="keep going <now>"),
    "verdict achieved": lambda: render.verdict_message("achieved", "全部通过", [], 3),
    "verdict not yet": lambda: render.verdict_message("not_yet", "还差 <测试>", ["测试通过", "有文档"], 1),
    "verdict unreachable": lambda: render.verdict_message("unreachable", "需要 macOS", [], 2),
    "verdict unclear": lambda: render.verdict_message("unclear", "", [], None),
    "verdict huge": lambda: render.verdict_message("not_yet", "理由" * 30_000, ["check"] * 500, 9),
    "handoff near": lambda: render.handoff_notice("near"),
    "handoff writing": lambda: render.handoff_notice("writing"),
    "handoff done": lambda: render.handoff_notice("done", degraded=False),
    "retry": lambda: render.retry_notice(2, 5, 30, kind="overloaded", error="API Error: 529 <overloaded>\n" * 50),
    "offline": lambda: render.offline_notice("api.anthropic.com", 443, 125),
    "summary ok": lambda: render.summary_message(True, 3.2, 3, elapsed_s=7200),
    "summary failed": lambda: render.summary_message(False, 0.5, 1, "目标判定为达不成 & 停下"),
    "started": lambda: render.started_message(),
    "queued": lambda: render.started_message(queued_position=2),
    "refusal user": lambda: render.refusal("U0EVE"),
    "refusal channel": lambda: render.refusal("U0EVE", reason="channel"),
}


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_every_payload_is_within_slack_limits(name: str) -> None:
    assert_slack_ok(PAYLOADS[name]())


def buttons(payload: dict) -> list[dict]:
    return [e for b in payload["blocks"] if b["type"] == "actions" for e in b["elements"]]


def test_question_buttons() -> None:
    long = "接受" * 60
    payload = render.question_message(42, "Which?", ["Python", long, "a\nb"], "干活")
    got = buttons(payload)
    assert [b["action_id"] for b in got] == ["flower_answer:0", "flower_answer:1", "flower_answer:2"]
    assert [render.parse_answer_value(b["value"]) for b in got] == [(42, 0), (42, 1), (42, 2)]
    assert got[0]["text"]["text"] == "Python" and got[2]["text"]["text"] == "a b"
    assert got[1]["text"]["text"] == long[:74] + "…"
    shown = payload["blocks"][0]["text"]["text"]
    # the starter's own step asking is flower asking: no engine step name; another workflow's is named
    assert shown.startswith("❓ *Question*\nWhich?") and f"2. {long}" in shown  # the full option
    other = render.question_message(42, "Which?", ["Python"], "reviewer")["blocks"][0]["text"]["text"]
    assert other.startswith("❓ *Question* from _reviewer_\nWhich?")
    assert payload["blocks"][-1]["elements"][0]["text"] == "Reply in this thread to answer in your own words"


def test_the_judges_unreachable_question_shows_its_three_choices() -> None:
    payload = render.question_message(9, UNREACHABLE_QUESTION.format(reason="需要 macOS"),
                                      [ACCEPT, AMEND_GOAL, JUDGED_WRONG], "干活·判定")
    assert [b["text"]["text"] for b in buttons(payload)] == [ACCEPT, AMEND_GOAL, JUDGED_WRONG]
    assert "需要 macOS" in payload["blocks"][0]["text"]["text"]


def test_question_options_past_seventy_five_are_listed_not_buttons() -> None:
    payload = render.question_message(5, "pick", [f"o{i}" for i in range(200)])
    assert len(buttons(payload)) == 75 and [b["block_id"] for b in payload["blocks"] if b["type"] == "actions"] == [
        "flower_q:5:0", "flower_q:5:1", "flower_q:5:2"]
    assert "200. o199" in "".join(b.get("text", {}).get("text", "") for b in payload["blocks"])


def test_user_text_is_escaped_but_our_mentions_are_not() -> None:
    payload = render.answered_message("ping <!channel> & <@U0EVE>", "<!here>", "U0BOB")
    shown = str(payload["blocks"])
    assert "&lt;!channel&gt; &amp; &lt;@U0EVE&gt;" in shown and "&lt;!here&gt;" in shown
    assert "✅ &lt;!here&gt; — answered by <@U0BOB>" in shown
    assert "actions" not in shown and "button" not in shown


@pytest.mark.parametrize(
    ("value", "parsed"),
    [("12:0", (12, 0)), ("7:24", (7, 24)), ("", None), ("12", None), ("a:b", None), ("1:2:3", None)],
)
def test_parse_answer_value(value: str, parsed: tuple | None) -> None:
    assert render.parse_answer_value(value) == parsed


@pytest.mark.parametrize(
    ("state", "has_buttons"),
    [("running", True), ("queued", True), ("waiting", True), ("done", False), ("failed", False),
     ("stopped", False), ("idle", False)],
)
def test_status_buttons_only_while_active(state: str, has_buttons: bool) -> None:
    payload = render.status_message(doing=render.doing_words("干活"), round=2, cost_usd=1.5, elapsed_s=65,
                                    state=state)
    ids = [b["action_id"] for b in buttons(payload)]
    assert ids == (["flower_stop", "flower_new"] if has_buttons else []) + ["flower_terminal"]
    # both ask first: a stray click must not stop a run of hours or archive its work
    assert [b["confirm"]["confirm"]["text"] for b in buttons(payload) if "confirm" in b] == \
        (["Stop", "Start over"] if has_buttons else [])
    assert_slack_ok(payload)
    line = payload["blocks"][0]["text"]["text"]
    # live: what it does in a person's words and the round; ended: no step left on the line
    assert ("*Working* · round 2 · $1.50 · 1m 05s" in line) == has_buttons and "$1.50 · 1m 05s" in line


@pytest.mark.parametrize(
    ("state", "failed", "words"),
    [
        ("achieved", [], ["Round 3: goal achieved", "理由"]),
        ("not_yet", ["测试通过", "有文档"], ["Round 3: not yet", "Failed checks:\n• 测试通过\n• 有文档"]),
        ("unreachable", [], ["can't be reached", "Choose below what to do next"]),
        ("", [], ["no clear verdict, counted as not yet"]),
    ],
)
def test_verdicts(state: str, failed: list, words: list[str]) -> None:
    payload = render.verdict_message(state, "理由", failed, 3)
    shown = "\n".join(e.get("text", "") if isinstance(e.get("text"), str) else e["text"]["text"]
                      for b in payload["blocks"] for e in ([b] if "text" in b else b["elements"]))
    for word in words:
        assert word in shown


@pytest.mark.parametrize(
    ("event", "words"),
    [
        (VerdictGiven("w", round=2, state="not_yet", reason="r", failed=("c1",)), ["Round 2: not yet", "c1"]),
        (HandoffEvent("w", phase="near", used=150_000, due_at=170_000, window=200_000),
         ["memory is filling up"]),
        (HandoffEvent("w", phase="writing", used=180_000, window=200_000), ["writing down where the work stands"]),
        (HandoffEvent("w", phase="done", degraded=True, path="/w/h.md"), ["from what is on disk"]),
        (RetryScheduled("w", attempt=1, max_attempts=3, delay_s=90, failure="transient"),
         ["(transient), try 1/3", "in 1m 30s"]),
        (WaitingOnline("w", host="h", port=1, waited_s=5), ["Can't reach h:1", "waited 5s"]),
    ],
)
def test_event_notices(event: Event, words: list[str]) -> None:
    message = event_notice(event)
    assert_slack_ok(message)
    shown = str(message["blocks"])
    for word in words:
        assert word in shown
    assert not re.search(r"\d+(\.\d)?K\b|/w/", shown)  # no token count, no host path


@pytest.mark.parametrize("event", [
    StepStarted("w", index=0, total=1), SessionStarted("w", session_id="s"), TurnEnded("w", context=1),
    ResultReported("w", cost_usd=0.1), AskEvent("w", phase="asked", question="q"), WorkflowDone("w", ok=True),
    Interrupted("w", said="x"), TaskWarning("w", total=3),
])
def test_status_only_events_have_no_notice(event: Event) -> None:
    assert event_notice(event) is None


def test_wake_banner() -> None:
    # a follow-up's words set the goal again: the old goal's 15 checks are not the ones judged next
    shown = str(render.wake_banner(follow_up=1, checks=15, said="go on"))
    assert "requirement confirmed · the goal is set again from what you said · follow-up #1" in shown
    assert "15 checks" not in shown
    assert "&gt; go on" in shown and "/ws" not in shown  # no host path, no token count
    resumed = str(render.wake_banner(checks=15))  # no new words: the goal stays, no follow-up counted
    assert "goal with 15 checks" in resumed and "follow-up" not in resumed


def test_small_texts() -> None:
    assert render.stale_click_note(answer="Python", by_user_id="U0BOB") == (
        "This question was already answered by <@U0BOB>: *Python*")
    assert "closed" in render.stale_click_note()
    assert "FLOWER_ALLOWED_USERS" in render.refusal("U0EVE")["text"]
    assert "FLOWER_ALLOWED_CHANNELS" in render.refusal("U0EVE", reason="channel")["text"]
    assert "number 2 in line" in render.started_message(2)["text"]
    assert render.started_message()["text"].startswith("🌱 Started.")
    assert "Done: the goal is achieved" in render.summary_message(True, 1, 2)["text"]
    assert "目标判定为达不成 &amp; 停下" in render.summary_message(False, 1, 2, "目标判定为达不成 & 停下")["text"]


@pytest.mark.parametrize(
    ("seconds", "shown"), [(0, "0s"), (42.9, "42s"), (65, "1m 05s"), (3723, "1h 02m"), (90_000, "1d 01h"), (-5, "0s")]
)
def test_duration(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


@pytest.mark.parametrize(("usd", "shown"), [(0, "$0.00"), (0.004, "$0.004"), (0.1, "$0.10"), (12.345, "$12.35")])
def test_cost(usd: float, shown: str) -> None:
    assert cost(usd) == shown


def test_deadline_texts_say_what_happens_next() -> None:
    from bot.render import deadline as rd

    assert rd.deadline_note(None, "x") is None and rd.deadline_note(0, None) is None
    assert rd.deadline_note(1800, "8080") == "If nobody answers within 30 minutes, I'll go on with 8080."
    assert rd.deadline_note(3600, None) == "If nobody answers within 1 hour, the run pauses until somebody does."
    assert rd.timed_out(90, "8080") == ("No answer in 1.5 minutes: going on with 8080.",
                                        "⏱️ No answer in 1.5 minutes: going on with *8080*.")
    assert "closed without an answer" in rd.timed_out(None, None)[1]
    parked = rd.parked(1800)
    assert parked.startswith("⏸️ Paused: nobody answered the question above in 30 minutes")
    assert "Answer it" in parked and "`/new`" in parked

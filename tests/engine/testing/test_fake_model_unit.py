"""The fake model without the CLI: request reading, matchers, rule selection, and its HTTP."""

from __future__ import annotations

import json

import aiohttp
import pytest

from engine.testing import (
    FAKE_API_KEY,
    FakeModel,
    FakeModelError,
    compaction,
    cut_stream,
    delay,
    has_tool_result,
    hold,
    last_is_tool_result,
    last_user_contains,
    mentions,
    offers_tool,
    offline_env,
    overloaded,
    prompt_contains,
    prompt_too_long,
    rate_limited,
    reply,
    shown,
    stream_error,
    system_contains,
    text,
    tool_use,
    turn,
    unauthorized,
)
from engine.testing import conversation as conv
from engine.testing.match import COMPACTION_MARKER
from engine.testing.rules import Rule, select, to_match

REMINDER = {"type": "text", "text": "<system-reminder>\nattribution\n</system-reminder>\n"}


def user(*parts):
    return {"role": "user", "content": list(parts)}


def said(t):
    return {"type": "text", "text": t}


def call(id, name, **inp):
    return {"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": inp}]}


def result(id, content, **extra):
    return {"type": "tool_result", "tool_use_id": id, "content": content, **extra}


def body(*messages, system="You are the coordinator.", tools=("Bash", "Write")):
    return {
        "model": "claude-test",
        "system": [{"type": "text", "text": system}],
        "tools": [{"name": t} for t in tools],
        "messages": list(messages),
    }


FIRST = body(user(REMINDER, said("write the report")))
AFTER_WRITE = body(
    user(REMINDER, said("write the report")),
    call("t1", "Write", file_path="r.md"),
    user(result("t1", "File created successfully")),
)
AFTER_BASH = body(
    *AFTER_WRITE["messages"],
    call("t2", "Bash", command="ls"),
    user(result("t2", [said("r.md")]), REMINDER),
)
INTERRUPTED = body(
    *AFTER_WRITE["messages"],
    call("t2", "Bash", command="sleep 30"),
    user(result("t2", "rejected", is_error=True), said("[Request interrupted by user for tool use]\n"), said("go on")),
)
NOTIFIED = body(
    *AFTER_WRITE["messages"],
    {"role": "assistant", "content": [said("waiting for the worker")]},
    user(REMINDER, said("<system-reminder>\n<task-notification>done</task-notification>\n</system-reminder>")),
)


@pytest.mark.parametrize(
    "message, is_prompt",
    [
        ({"role": "user", "content": "plain string prompt"}, True),
        (user(REMINDER, said("do it")), True),
        (user(REMINDER), False),
        (user(result("t", "ok")), False),
        (user(result("t", "ok"), REMINDER), False),
        (user(result("t", "x"), said("[Request interrupted by user for tool use]")), False),
        (user(result("t", "x"), said("[Request interrupted by user for tool use]"), said("go on")), True),
        (user({"type": "image", "source": {}}), True),
        ({"role": "assistant", "content": [said("hi")]}, False),
        ({"role": "system", "content": [said("# Environment")]}, False),
        (user(said("   ")), False),
    ],
)
def test_is_prompt_message(message, is_prompt):
    assert conv.is_prompt_message(message) is is_prompt


@pytest.mark.parametrize(
    "request_body, turns, all_turns, prompt",
    [
        (FIRST, 0, 0, "write the report"),
        (AFTER_WRITE, 1, 1, "write the report"),
        (AFTER_BASH, 2, 2, "write the report"),
        (INTERRUPTED, 0, 2, "go on"),
        (NOTIFIED, 2, 2, "write the report"),
        (body(), 0, 0, ""),
    ],
)
def test_turns_and_prompt(request_body, turns, all_turns, prompt):
    assert conv.assistant_turns(request_body) == turns
    assert conv.assistant_turns(request_body, since_prompt=False) == all_turns
    assert conv.prompt_text(request_body).endswith(prompt)


def test_tool_results_are_named_after_their_calls():
    assert conv.tool_results(AFTER_BASH) == [("Write", "File created successfully"), ("Bash", "r.md")]
    assert conv.tool_results(AFTER_BASH, last_only=True) == [("Bash", "r.md")]


def test_shown_holds_system_text_tool_inputs_and_results():
    text_shown = shown(AFTER_BASH)
    for piece in ("You are the coordinator.", "write the report", '"file_path": "r.md"', "[tool_use Bash]",
                  "File created successfully", "[tool_result] r.md", "[assistant]"):
        assert piece in text_shown
    assert conv.system_text({"system": "plain"}) == "plain"


@pytest.mark.parametrize(
    "matcher, yes, no",
    [
        (system_contains("coordinator"), FIRST, body(user(said("x")), system="You are the judge.")),
        (prompt_contains("report"), AFTER_BASH, INTERRUPTED),
        (last_user_contains("r.md"), AFTER_BASH, FIRST),
        (mentions("sleep 30"), INTERRUPTED, AFTER_BASH),
        (offers_tool("Write"), FIRST, body(user(said("x")), tools=("Bash",))),
        (has_tool_result(), AFTER_WRITE, FIRST),
        (has_tool_result("Write", contains="created"), AFTER_BASH, body(user(said("x")))),
        (last_is_tool_result("Bash"), AFTER_BASH, AFTER_WRITE),
        (last_is_tool_result(contains="created"), AFTER_WRITE, AFTER_BASH),
        (turn(1), AFTER_WRITE, FIRST),
        (system_contains("coordinator") & turn(0), FIRST, AFTER_WRITE),
        (turn(0) | turn(2), AFTER_BASH, AFTER_WRITE),
        (~turn(0), AFTER_WRITE, FIRST),
        (to_match(lambda b: len(b["messages"]) == 1), FIRST, AFTER_WRITE),
        (to_match(["report", offers_tool("Bash")]), FIRST, body(user(said("report")), tools=("Write",))),
        (compaction(), body(user(result("t", "x"), said("Your task is to " + COMPACTION_MARKER))), FIRST),
    ],
)
def test_matchers(matcher, yes, no):
    assert matcher(yes) and not matcher(no), repr(matcher)


def test_turn_sequencing_serves_the_reply_of_the_turn_and_falls_through_when_exhausted():
    script = Rule([text("a"), text("b")], when=prompt_contains("report"), name="script")
    fallback = Rule([text("fb")], name="fb", fallback=True, repeat_last=True)
    later = Rule([text("x"), text("y"), text("later")], name="later")
    rules = [fallback, script, later]  # a fallback is tried last wherever it was added
    assert select(rules, FIRST) == (script, 0)
    assert select(rules, AFTER_WRITE) == (script, 1)
    assert select(rules, AFTER_BASH) == (later, 2)
    assert select([script, fallback], AFTER_BASH) == (fallback, 0)
    assert select([script, Rule([text("one")])], AFTER_BASH) is None
    script.repeat_last = True
    assert select([script], AFTER_BASH) == (script, 1)


def test_conversation_and_call_sequencing():
    whole = Rule([text("a"), text("b"), text("c")], sequence="conversation")
    assert whole.index_for(INTERRUPTED) == 2
    calls = Rule([text("a"), text("b")], sequence="call")
    assert calls.index_for(AFTER_BASH) == 0
    calls.calls = 2
    assert calls.index_for(FIRST) is None
    with pytest.raises(ValueError, match="sequence must be one of"):
        Rule([text("a")], sequence="random")


def test_reply_builders():
    calls = (tool_use("Bash", {"command": "ls"}), tool_use("Read", {"file_path": "a"}))
    r = reply("look", *calls, usage={"input_tokens": 5})
    assert [b["type"] for b in r.blocks] == ["text", "tool_use", "tool_use"]
    assert r.final_stop_reason == "tool_use" and r.usage == {"input_tokens": 5}
    assert text("done").final_stop_reason == "end_turn"
    with pytest.raises(TypeError, match="reply\\(\\) takes"):
        reply(42)


def test_offline_env(tmp_path):
    env = offline_env("http://127.0.0.1:9", tmp_path / "cfg")
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9" and env["ANTHROPIC_API_KEY"] == FAKE_API_KEY
    assert env["CLAUDE_CODE_MAX_RETRIES"] == "0" and env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert (tmp_path / "cfg").is_dir() and env["CLAUDE_CONFIG_DIR"] == str(tmp_path / "cfg")


# -- over HTTP, with aiohttp as the client -------------------------------------------------------


async def post(fm, payload, *, stream=True, path="/v1/messages?beta=true"):
    async with aiohttp.ClientSession() as s:
        async with s.post(fm.base_url + path, json=dict(payload, stream=stream), headers={"x-api-key": "k"}) as r:
            return r.status, r.headers.copy(), await r.read()


def events(raw: bytes) -> list[tuple[str, dict]]:
    out = []
    for frame in raw.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in frame.splitlines() if ": " in line)
        if lines:
            out.append((lines["event"], json.loads(lines["data"])))
    return out


async def test_stream_follows_the_api_event_sequence(fake_model):
    fake_model.rule(reply("Let me look.", tool_use("Bash", {"command": "echo " + "x" * 100})))
    status, headers, raw = await post(fake_model, FIRST)
    evs = events(raw)
    assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
    names = [name for name, _ in evs]
    assert names[:2] == ["message_start", "ping"] and names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == 2 == names.count("content_block_stop")
    start = evs[0][1]["message"]
    assert start["id"].startswith("msg_") and start["model"] == "claude-test" and start["usage"]["input_tokens"] > 0
    partial = "".join(d["delta"]["partial_json"] for n, d in evs if n == "content_block_delta" and d["index"] == 1)
    assert json.loads(partial) == {"command": "echo " + "x" * 100}
    assert sum(1 for n, d in evs if n == "content_block_delta" and d["index"] == 1) > 1
    tool_block = evs[[n for n, _ in evs].index("content_block_start", 3)][1]["content_block"]
    assert tool_block["id"].startswith("toolu_") and tool_block["name"] == "Bash"
    assert evs[-2][1]["delta"]["stop_reason"] == "tool_use"


async def test_non_streaming_other_endpoints_and_recording(fake_model):
    fake_model.rule(text("plain"), when="report")
    status, _, raw = await post(fake_model, FIRST, stream=False)
    message = json.loads(raw)
    assert status == 200 and message["content"] == [{"type": "text", "text": "plain"}]
    assert message["stop_reason"] == "end_turn"
    async with aiohttp.ClientSession() as s:
        async with s.post(fake_model.base_url + "/v1/messages/count_tokens", json=FIRST) as r:
            assert (await r.json())["input_tokens"] > 0
        async with s.head(fake_model.base_url + "/") as r:
            assert r.status == 200
        async with s.post(fake_model.base_url + "/v1/other", json={}) as r:
            assert r.status == 404 and (await r.json())["error"]["type"] == "not_found_error"
    first = fake_model.requests[0]
    assert (first.method, first.path, first.query) == ("POST", "/v1/messages", {"beta": "true"})
    assert first.body["messages"] == FIRST["messages"]
    assert first.headers["x-api-key"] == "k" and first.rule == "rule0" and first.outcome == "reply"
    assert [r.path for r in fake_model.message_requests] == ["/v1/messages"]
    assert fake_model.last_request("rule0") is first and fake_model.last_request() is first


async def test_usage_is_estimated_from_the_request_and_can_be_forced(fake_model):
    fake_model.rule(text("small"), text("big", usage={"input_tokens": 190_000}), repeat_last=True)
    await post(fake_model, FIRST, stream=False)
    await post(fake_model, AFTER_WRITE, stream=False)
    small, big = fake_model.requests
    assert 0 < small.usage["input_tokens"] < 1000 and big.usage["input_tokens"] == 190_000
    bigger = body(user(said("x" * 40_000)))
    await post(fake_model, bigger, stream=False)
    assert fake_model.requests[-1].usage["input_tokens"] > 10_000


@pytest.mark.parametrize(
    "fault, status, error_type, header",
    [
        (overloaded(), 529, "overloaded_error", None),
        (rate_limited(retry_after=7), 429, "rate_limit_error", ("retry-after", "7")),
        (unauthorized(), 401, "authentication_error", None),
        (prompt_too_long(), 400, "invalid_request_error", None),
    ],
)
async def test_http_faults_answer_like_the_api(fake_model, fault, status, error_type, header):
    fake_model.rule(text("never"), fault=fault)
    got, headers, raw = await post(fake_model, FIRST)
    error = json.loads(raw)
    assert got == status and error["type"] == "error" and error["error"]["type"] == error_type
    assert headers["request-id"] == error["request_id"]
    if header:
        assert headers[header[0]] == header[1]
    if status == 400:
        assert error["error"]["message"] == "prompt is too long: 210000 tokens > 200000 maximum"


async def test_fault_once_then_the_normal_reply(fake_model):
    fake_model.rule(text("ok", fault=overloaded(times=1)))
    assert (await post(fake_model, FIRST))[0] == 529
    assert (await post(fake_model, FIRST))[0] == 200
    assert [r.outcome for r in fake_model.requests] == ["http 529", "reply"]


async def test_cut_stream_and_stream_error(fake_model):
    fake_model.rule(text("a long answer " * 10, fault=cut_stream(after_events=3)), when="report")
    fake_model.rule(text("b"), when="judge", fault=stream_error(after_events=2))
    with pytest.raises(aiohttp.ClientPayloadError):
        await post(fake_model, FIRST)
    _, _, raw = await post(fake_model, body(user(said("judge"))))
    assert [n for n, _ in events(raw)] == ["message_start", "ping", "error"]
    assert [r.outcome for r in fake_model.requests] == ["cut_stream", "stream_error"]


async def test_unmatched_request_is_refused_with_a_message(fake_model):
    fake_model.rule(text("x"), when="never present")
    status, _, raw = await post(fake_model, FIRST)
    assert status == 403 and "no rule matched request #0" in json.loads(raw)["error"]["message"]
    assert fake_model.unmatched == fake_model.requests
    fake_model.default = text("default answer")
    status, _, raw = await post(fake_model, FIRST, stream=False)
    assert json.loads(raw)["content"][0]["text"] == "default answer"


async def test_hold_and_delay(fake_model):
    import asyncio

    h = hold()
    fake_model.rule(text("held"), when="report", fault=h)
    fake_model.rule(text("slow", fault=delay(0.01)))
    waiting = asyncio.create_task(post(fake_model, FIRST, stream=False))
    held = await h.arrived()
    assert held.prompt.endswith("write the report") and not waiting.done()
    assert (await post(fake_model, body(user(said("other")))))[0] == 200  # others pass meanwhile
    h.release()
    assert json.loads((await waiting)[2])["content"][0]["text"] == "held"
    assert json.loads((await post(fake_model, FIRST, stream=False))[2])["content"][0]["text"] == "held"
    with pytest.raises(FakeModelError, match="no request was held"):
        await hold().arrived(timeout=0.01)


async def test_offline_then_online_on_the_same_port(fake_model):
    fake_model.rule(text("back"))
    port = fake_model.port
    fake_model.go_offline()
    assert not fake_model.online
    with pytest.raises(aiohttp.ClientConnectorError):
        await post(fake_model, FIRST)
    fake_model.go_online()
    assert fake_model.port == port and (await post(fake_model, FIRST))[0] == 200


async def test_wait_for_counts_past_requests(fake_model):
    fake_model.rule(text("x"))
    await post(fake_model, FIRST)
    got = await fake_model.wait_for(lambda r: r.turn == 0)
    assert got.index == 0
    with pytest.raises(FakeModelError, match="1 arrived"):
        await fake_model.wait_for(count=2, timeout=0.01)


def test_rule_rejects_a_bare_stream_fault():
    with FakeModel() as fm, pytest.raises(FakeModelError, match="cannot stand alone"):
        fm.rule(cut_stream())

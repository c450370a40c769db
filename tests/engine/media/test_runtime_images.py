"""Images reach the model as images, through the real CLI and the offline model: with a step's
prompt, with a person's interruption, once per session (a retry that resumes does not send them
again), and still whole (or as a note naming the file) when a closed session is resumed later."""

from __future__ import annotations

import asyncio

import pytest

from engine import AgentSpec, Resilience, Runtime
from engine.events import Interrupted
from engine.lang import speaking
from engine.authoring import TrimPolicy
from engine.testing import hold, overloaded, prompt_contains, text, tool_use

from tests.helpers.images_kit import any_image, image_blocks, labelled, shared_png

FAST = Resilience(base_delay=0.01, max_delay=0.05, probe_interval=0.05, probe_timeout=0.5)
looker = AgentSpec(name="looker", instructions="Say what the picture shows.", allowed_tools=["Read"],
                   max_turns=4, workbench=False)


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def runtime(ws, **kw) -> Runtime:
    kw.setdefault("resilience", FAST)
    return Runtime(workspace=ws, run_dir=ws / "runs", **kw)


@pytest.fixture(autouse=True)
def english():
    with speaking("en"):
        yield


async def test_a_steps_images_follow_its_prompt_each_named(fake_model, ws):
    shot, chart = shared_png(ws, "1-shot.png", "teal"), shared_png(ws, "2-chart.png", "navy")
    fake_model.rule(text("a teal square and a navy one"), when=prompt_contains("what do you see"))
    rt = runtime(ws)
    try:
        r = await rt.run(looker, "what do you see?", images=[shot, chart])
    finally:
        rt.close()
    assert r.ok, r.error
    [request] = fake_model.message_requests
    messages = request.body["messages"]
    assert len(image_blocks(messages, shot)) == 1 and len(image_blocks(messages, chart)) == 1  # same bytes
    assert labelled(messages, shot) and labelled(messages, chart)  # "Image: .flower/inbox/1-shot.png" first
    assert "what do you see?" in request.prompt


async def test_a_retry_that_resumes_the_session_does_not_send_them_again(fake_model, ws):
    shot = shared_png(ws)
    fake_model.rule(text("teal", fault=overloaded(times=1)), when=prompt_contains("describe it"))
    fake_model.rule(text("still teal"), when=prompt_contains("interrupted before it finished"))
    rt = runtime(ws)
    try:
        r = await rt.run(looker, "describe it", images=[shot])
    finally:
        rt.close()
    assert r.ok and r.attempts == 2 and r.resumed, r.error
    first, last = fake_model.message_requests[0], fake_model.message_requests[-1]
    assert len(image_blocks(first.body["messages"], shot)) == 1
    assert len(image_blocks(last.body["messages"], shot)) == 1  # the session's copy, not a second one
    assert "interrupted before it finished" in last.prompt and "describe it" in last.shown


async def test_an_interruption_brings_its_images_into_the_resumed_session(fake_model, ws):
    first, second = shared_png(ws, "1-shot.png", "teal"), shared_png(ws, "2-better.png", "red")
    held = hold()
    fake_model.rule(text("working", fault=held), when=prompt_contains("long job"))
    fake_model.rule(text("the red one it is"), when=prompt_contains("use this one instead"))
    rt = runtime(ws)
    events = []
    try:
        task = asyncio.create_task(rt.run(looker, "long job", images=[first], on_event=events.append))
        await held.arrived()
        assert rt.interrupt("use this one instead", [second])
        r = await task
    finally:
        held.release()
        rt.close()
    assert r.ok and r.text == "the red one it is", r.error
    last = fake_model.message_requests[-1]
    messages = last.body["messages"]
    assert "use this one instead" in last.prompt and "interrupted" in last.prompt
    assert len(image_blocks(messages, second)) == 1 and labelled(messages, second)
    assert len(image_blocks(messages, first)) == 1  # the step's own, once, from the session
    [said] = [e for e in events if isinstance(e, Interrupted)]
    assert said.images == (".flower/inbox/2-better.png",)


async def test_images_alone_interrupt_too(fake_model, ws):
    shot = shared_png(ws)
    held = hold()
    fake_model.rule(text("working", fault=held), when=prompt_contains("long job"))
    fake_model.rule(text("seen"), when=prompt_contains("go on"))
    rt = runtime(ws)
    try:
        assert not rt.interrupt("", [shot])  # nothing runs: nothing delivered
        task = asyncio.create_task(rt.run(looker, "long job"))
        await held.arrived()
        assert not rt.interrupt("  ")
        assert rt.interrupt("", [shot])
        r = await task
    finally:
        held.release()
        rt.close()
    assert r.ok, r.error
    assert image_blocks(fake_model.message_requests[-1].body["messages"], shot)


@pytest.mark.parametrize("trim", [False, True], ids=["kept whole", "shaped to a note"])
async def test_a_session_with_an_image_resumes_in_a_new_runtime(fake_model, ws, trim):
    """Closed, then resumed by id from ``sessions.db`` in a new runtime: the model is shown the
    image block whole, or (once the trim window has passed it) the note naming its file."""
    shot = shared_png(ws)
    (ws / "a.txt").write_text("alpha\n")
    fake_model.rule(tool_use("Read", {"file_path": str(ws / "a.txt")}), text("read it"), when=prompt_contains("first"))
    fake_model.rule(text("resumed fine"), when=prompt_contains("second"))
    policy = TrimPolicy(keep_recent=0) if trim else False
    rt = runtime(ws, trim=policy)
    try:
        first = await rt.run(looker, "first: look", images=[shot])
    finally:
        rt.close()
    assert first.ok, first.error
    rt = runtime(ws, trim=policy)
    try:
        second = await rt.run(looker, "second: and now?", resume=first.session_id)
    finally:
        rt.close()
    assert second.ok and second.text == "resumed fine", second.error
    messages = fake_model.message_requests[-1].body["messages"]
    if trim:
        assert not any_image(messages)
        note = "[The image .flower/inbox/1-shot.png was here; left out on resume: Read that file to see it again]"
        assert any(b.get("type") == "text" and b["text"].strip() == note  # the CLI ends it with a newline
                   for m in messages if isinstance(m["content"], list) for b in m["content"])
        assert rt.store.last_report.get("images") == 1
    else:
        assert len(image_blocks(messages, shot)) == 1 and labelled(messages, shot)
    assert "first: look" in fake_model.message_requests[-1].shown  # the same session, resumed

"""A request's images in the starter flow, through the real CLI and the offline model: the steps
that read the person's request see them (the clarifier, the coordinator's first round), the goal
setter and the judge do not; what a person shares mid-run reaches the running step, or, while the
judge runs, becomes a note that names the files."""

from __future__ import annotations

import asyncio

import pytest

from engine import Resilience, StarterRun
from engine.testing import hold, prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE

from tests.helpers.images_kit import any_image, image_blocks, labelled, shared_png

BRIEF = ("## Goal\nFix the layout shown in the screenshot\n## Acceptance criteria\nThe button fits\n"
         "## Bounds\nOnly the CSS\n## Unknowns and assumptions\nnone")
GOAL = "## Goal\nThe button fits\n## Checks\n- the button fits its box"
NOT_YET = "## Verdict\nnot achieved\n## Reason\nstill off\n## Failed\n- 1"
ACHIEVED = "## Verdict\nachieved\n## Reason\nfits\n## Failed\nnone"
SET_GOAL = prompt_contains("set the goal and its checks")
VERDICT = prompt_contains("Judge whether this round's work")


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def starter(ws) -> StarterRun:
    return StarterRun(ws, run_dir=ws / "runs", language="en",
                      runtime={"resilience": Resilience(base_delay=0.01)}, flow={"timeout_s": 5})


def requests_of(fake_model, role, *more):
    return [r for r in fake_model.message_requests if role(r.body) and all(m(r.body) for m in more)]


async def test_the_clarifier_and_the_first_round_see_the_requests_images_the_judge_does_not(fake_model, ws):
    shot = shared_png(ws)
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, SET_GOAL])
    fake_model.rule(text(NOT_YET), text(ACHIEVED), when=[JUDGE, VERDICT], sequence="call", repeat_last=True)
    fake_model.rule(text("round 2 done"), when=[COORDINATOR, prompt_contains("not achieved yet")])
    fake_model.rule(text("round 1 done"), when=COORDINATOR)
    result = await starter(ws).run("fix what this screenshot shows", images=[shot])
    assert result.ok, result.failure

    [clarifier] = requests_of(fake_model, CLARIFIER)
    assert len(image_blocks(clarifier.body["messages"], shot)) == 1 and labelled(clarifier.body["messages"], shot)
    coordinator = requests_of(fake_model, COORDINATOR)
    first, second = coordinator[0], coordinator[-1]
    assert "Do what this requirement asks" in first.prompt
    assert len(image_blocks(first.body["messages"], shot)) == 1 and labelled(first.body["messages"], shot)
    assert "not achieved yet" in second.prompt  # round 2 continues the session: the image once, from it
    assert len(image_blocks(second.body["messages"], shot)) == 1
    judges = requests_of(fake_model, JUDGE)
    assert len(judges) == 3 and not any(any_image(j.body["messages"]) for j in judges)
    assert all(".flower/inbox/1-shot.png" not in j.prompt for j in judges)
    # every role is told where the files people share are, and where to leave files for them
    for request in (clarifier, first, *judges):
        assert "are in .flower/inbox/" in request.system and "go in .flower/outbox/" in request.system


async def test_what_is_shared_mid_run_reaches_the_step_or_becomes_a_note_naming_the_files(fake_model, ws):
    shot = shared_png(ws, "1-shot.png")
    better, later = shared_png(ws, "2-better.png", "red"), shared_png(ws, "3-more.png", "blue")
    coordinating, judging = hold(), hold()
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    fake_model.rule(text(GOAL), when=[JUDGE, SET_GOAL])
    fake_model.rule(text(NOT_YET), text(ACHIEVED), when=[JUDGE, VERDICT], sequence="call", repeat_last=True,
                    fault=judging)
    fake_model.rule(text("switched to the red one"), when=[COORDINATOR, prompt_contains("use this one")])
    fake_model.rule(tool_use("mcp__human__inbox", {}), text("read the note"),
                    when=[COORDINATOR, prompt_contains("not achieved yet")])
    fake_model.rule(text("round 1 done", fault=coordinating), when=[COORDINATOR, prompt_contains("Do what this")])
    run = starter(ws)
    task = asyncio.create_task(run.run("fix what this screenshot shows", images=[shot]))
    try:
        await coordinating.arrived()
        assert run.interrupt("use this one", by="ada", images=[better])  # the coordinator runs: it hears them
        coordinating.release()
        await judging.arrived()
        assert run.interrupt("", by="ada", images=[later])  # the judge runs: a note for the coordinator
        judging.release()
        result = await task
    finally:
        coordinating.release()
        judging.release()
    assert result.ok, result.failure
    resumed = requests_of(fake_model, COORDINATOR, prompt_contains("use this one"))[0]
    assert len(image_blocks(resumed.body["messages"], better)) == 1 and labelled(resumed.body["messages"], better)
    assert not any(image_blocks(j.body["messages"], later) for j in requests_of(fake_model, JUDGE))
    inbox = [t for r in requests_of(fake_model, COORDINATOR) for name, t in r.tool_results if name.endswith("inbox")]
    assert inbox and "Shared with these words: .flower/inbox/3-more.png" in inbox[-1]
    assert not run.interrupt("too late", images=[later])  # the run has ended: nothing delivered

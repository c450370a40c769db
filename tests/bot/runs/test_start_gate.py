"""StartGate: at most N runs starting their CLI at once; a place is freed once, by the run or by time."""

from __future__ import annotations

import asyncio

import pytest

from bot.runs.start_gate import StartGate


async def test_places_are_taken_in_turn_and_freed_once() -> None:
    gate = StartGate(2, wait_s=60)
    free_a, free_b = await gate.enter(), await gate.enter()
    third = asyncio.create_task(gate.enter())
    await asyncio.sleep(0.05)
    assert not third.done()  # two starting: the third waits
    free_a()
    free_a()  # freeing twice frees one place, not two
    free_c = await asyncio.wait_for(third, 1)
    fourth = asyncio.create_task(gate.enter())
    await asyncio.sleep(0.05)
    assert not fourth.done()
    free_b()
    free_c()
    (await asyncio.wait_for(fourth, 1))()


async def test_a_start_that_never_reports_frees_its_place_after_wait_s() -> None:
    gate = StartGate(1, wait_s=0.1)
    await gate.enter()  # never freed by its run
    free = await asyncio.wait_for(gate.enter(), 1)
    free()


def test_at_once_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at_once >= 1; got 0"):
        StartGate(0)

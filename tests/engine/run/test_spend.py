"""A front end's spend limit, enforced by the runtime through the real CLI and the offline model:
every message is priced as it arrives, the step stops at the message boundary after the one
that crossed the limit, and nothing starts once it is reached."""

from __future__ import annotations

from claude_agent_sdk import AssistantMessage, TextBlock

from engine import AgentSpec, Runtime
from engine.host import estimate_usd
from engine._run.spend import SPEND_LIMIT, SpendMeter
from engine.testing import text, tool_use

TURN = {"input_tokens": 12_000, "output_tokens": 10}  # $0.06 a call at the CLI's default model's (Opus) price

looper = AgentSpec(name="looper", instructions="Run the command you are asked to, again and again.",
                   allowed_tools=["Bash"], max_turns=40)


def test_a_call_is_priced_once_by_its_model():
    assert abs(estimate_usd("claude-sonnet-4-5", TURN) - (12_000 * 3 + 10 * 15) / 1e6) < 1e-9
    assert estimate_usd("claude-opus-4-1", {"output_tokens": 1_000_000}) == 75.0
    assert estimate_usd("claude-opus-4-5-20251101", {"output_tokens": 1_000_000}) == 25.0
    assert abs(estimate_usd("claude-haiku-4-5", {"cache_read_input_tokens": 1_000_000}) - 0.10) < 1e-9
    assert estimate_usd("some-new-model", {"output_tokens": 1_000_000}) == 15.0  # priced as Sonnet
    meter = SpendMeter()
    block = TextBlock("x" * 4_000)  # about 1,000 tokens written
    for _ in range(3):  # one message per content block, each with the call's usage so far
        meter.message(AssistantMessage([block], "claude-sonnet-4-5", usage=TURN, message_id="msg_1"))
    assert round(meter.total, 6) == round((12_000 * 3 + 3_000 * 15) / 1e6, 6)
    meter.result(0.05)  # the CLI's own figure replaces the estimate
    assert meter.total == 0.05 and meter.pending == 0


async def test_a_step_stops_one_call_past_the_limit_and_the_next_does_not_start(fake_model, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    seen: list[float] = []

    def guard(spent: float) -> str | None:
        seen.append(spent)
        return f"the request's limit of $0.10 is reached (${spent:.2f} spent)" if spent >= 0.10 else None

    fake_model.rule(*[tool_use("Bash", {"command": f"echo {n}"}, usage=TURN) for n in range(30)],
                    text("done"), when=None)
    rt = Runtime(workspace=ws, run_dir=tmp_path / "runs", spend=guard)
    try:
        result = await rt.run(looper, "echo forever")
        assert not result.ok and result.error_kind == SPEND_LIMIT
        assert result.error.startswith("the request's limit of $0.10 is reached")
        calls = len(fake_model.message_requests)
        # $0.06 a call: the second crosses $0.10; at most one more is sent before the CLI stops
        assert 2 <= calls <= 3, calls
        assert max(seen) >= 0.10
        again = await rt.run(looper, "echo again")
        assert not again.ok and again.error_kind == SPEND_LIMIT
        assert len(fake_model.message_requests) == calls  # refused before its CLI started
    finally:
        rt.close()

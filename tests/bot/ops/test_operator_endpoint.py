"""FLOWER_METRICS_PORT: /metrics in Prometheus's format (parsed with prometheus_client's own parser),
/healthz and /readyz, on a real bot with the real CLI; /readyz fails while the store is out of reach."""

from __future__ import annotations

import logging
import socket

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from bot.core.thread import run_dir
from engine.host import MANIFEST_FILE, read_manifest
from engine.testing import PostgresServer
from tests.bot.helpers.app import CHANNEL, CLARIFY_ONLY, answer_first_option, brief_only, posted, script, workspace


async def _get(port: int, path: str, **headers: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{port}{path}", headers=headers) as resp:
            return resp.status, await resp.text()


async def _challenge(port: int, path: str, **headers: str) -> tuple[int, str]:
    """The status and the WWW-Authenticate header of an answer."""
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{port}{path}", headers=headers) as resp:
            return resp.status, resp.headers.get("WWW-Authenticate", "")


def _free_port() -> int:
    """A port no one listens on now: a port of 0 would not show where a real one binds."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


async def test_metrics_show_the_runs_and_the_cost_of_a_finished_thread(make_bot, slack_env, fake_model, tmp_path):
    slack = slack_env
    bot = await make_bot(FLOWER_METRICS_PORT="0")
    script(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    thread = event["ts"]
    await slack.send_event(event)
    await answer_first_option(slack, thread)
    await posted(slack, thread, "Done: the goal is achieved")
    await slack.wait_until(lambda: not bot.jobs.busy(("T0001", CHANNEL, thread)), what="the run over")

    status, text = await _get(bot.metrics_port, "/metrics")
    assert status == 200
    got = _samples(text)
    assert got[("flower_runs", (("state", "done"),))] == 1 and got[("flower_runs", (("state", "running"),))] == 0
    assert got[("flower_queue_length", ())] == 0 and got[("flower_questions_waiting", ())] == 0
    spent = sum(v for (name, labels), v in got.items()
                if name == "flower_cost_usd_total" and ("channel", CHANNEL) in labels)
    manifest = sum(r["cost_usd"] for r in read_manifest(run_dir(workspace(tmp_path, thread)) / MANIFEST_FILE))
    assert spent > 0 and abs(spent - manifest) < 1e-6
    assert got[("flower_slack_api_seconds_count", (("method", "chat.postMessage"),))] >= 3
    assert await _get(bot.metrics_port, "/healthz") == (200, "ok\n")
    assert await _get(bot.metrics_port, "/readyz") == (200, "ready\n")


async def test_readyz_fails_while_the_store_is_out_of_reach(make_bot, slack_env, fake_model, monkeypatch, caplog):
    with PostgresServer() as server:  # its own cluster, stopped below: the session's stays up
        monkeypatch.setenv("FLOWER_DATABASE_URL", server.create_database())
        bot = await make_bot(CLARIFY_ONLY, FLOWER_METRICS_PORT="0")
        brief_only(fake_model)
        event = slack_env.mention(CHANNEL, "写个 hello.txt")
        await slack_env.send_event(event)
        await posted(slack_env, event["ts"], "Done")
        assert (await _get(bot.metrics_port, "/readyz"))[0] == 200
        server.stop()
        # the answer names the dependency, never the exception's text (a host, a user, a driver's words)
        assert await _get(bot.metrics_port, "/readyz") == (503, "not ready: store: not answering\n")
        assert await _get(bot.metrics_port, "/readyz") == (503, "not ready: store: not answering\n")
        said = [r.getMessage() for r in caplog.records if r.name == "bot.ops.health"]
        assert said == ["not ready: store: not answering (StoreError)"], said  # once, and only the type
        assert await _get(bot.metrics_port, "/healthz") == (200, "ok\n")  # the process still serves


ENDPOINTS = ("/metrics", "/healthz", "/readyz")
TOKEN = "SECRETmetrics-0123456789abcdef"


async def test_the_endpoint_listens_on_this_machine_only_unless_told_otherwise(make_bot):
    """Issue 37, finding 6: a real port listened on every interface, with no token."""
    port = _free_port()
    bot = await make_bot(FLOWER_METRICS_PORT=str(port))
    assert bot.health_runner.addresses == [("127.0.0.1", port)]
    assert await _get(port, "/healthz") == (200, "ok\n")


async def test_an_operator_may_open_it_to_every_interface_and_is_warned_without_a_token(make_bot, caplog):
    caplog.set_level(logging.WARNING)
    bot = await make_bot(FLOWER_METRICS_PORT="0", FLOWER_METRICS_HOST="0.0.0.0")
    assert bot.health_runner.addresses[0][0] == "0.0.0.0"
    said = [r.getMessage() for r in caplog.records if "FLOWER_METRICS_HOST=0.0.0.0" in r.getMessage()]
    assert len(said) == 1 and "set FLOWER_METRICS_TOKEN" in said[0], said


async def test_with_a_token_every_endpoint_refuses_a_request_without_it(make_bot, caplog):
    caplog.set_level(logging.DEBUG)
    bot = await make_bot(FLOWER_METRICS_PORT="0", FLOWER_METRICS_TOKEN=TOKEN)
    port = bot.metrics_port
    for path in ENDPOINTS:
        for headers in ({}, {"Authorization": "Bearer " + TOKEN[:-1]}, {"Authorization": "Bearer " + TOKEN + "x"},
                        {"Authorization": TOKEN}, {"Authorization": "Basic " + TOKEN},
                        {"Authorization": "Bearer é" + TOKEN[2:]}):
            assert await _challenge(port, path, **headers) == (401, 'Bearer realm="flower"'), (path, headers)
        status, text = await _get(port, path, Authorization="Bearer " + TOKEN)
        assert status == 200 and text, path
        assert (await _get(port, path, Authorization="bearer " + TOKEN))[0] == 200  # the scheme has no case
    assert TOKEN not in caplog.text and TOKEN not in repr(bot.config)

"""FLOWER_METRICS_PORT: /metrics in Prometheus's format (parsed with prometheus_client's own parser),
/healthz and /readyz, on a real bot with the real CLI; /readyz fails while the store is out of reach."""

from __future__ import annotations

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from bot.folders import run_dir
from engine.host import MANIFEST_FILE, read_manifest
from engine.testing import PostgresServer
from tests.bot.helpers.app import CHANNEL, CLARIFY_ONLY, answer_first_option, brief_only, posted, script, workspace


async def _get(port: int, path: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{port}{path}") as resp:
            return resp.status, await resp.text()


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


async def test_readyz_fails_while_the_store_is_out_of_reach(make_bot, slack_env, fake_model, monkeypatch):
    with PostgresServer() as server:  # its own cluster, stopped below: the session's stays up
        monkeypatch.setenv("FLOWER_DATABASE_URL", server.create_database())
        bot = await make_bot(CLARIFY_ONLY, FLOWER_METRICS_PORT="0")
        brief_only(fake_model)
        event = slack_env.mention(CHANNEL, "写个 hello.txt")
        await slack_env.send_event(event)
        await posted(slack_env, event["ts"], "Done")
        assert (await _get(bot.metrics_port, "/readyz"))[0] == 200
        server.stop()
        status, text = await _get(bot.metrics_port, "/readyz")
        assert status == 503 and "the store does not answer" in text and "not connected to Slack" not in text
        assert await _get(bot.metrics_port, "/healthz") == (200, "ok\n")  # the process still serves

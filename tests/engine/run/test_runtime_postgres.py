"""A runtime with a database URL, through the real CLI and the offline model (issue 17).

The transcript lands in PostgreSQL and nowhere else (no ``sessions.db`` under the test's folder),
a later step resumes it from there, the trim layer shows the model the same on both backends,
and two workspaces in one database stay apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claude_agent_sdk import project_key_for_directory

from engine import AgentSpec, Resilience, Runtime, Step, Workflow, wake_state
from engine.authoring import TrimPolicy
from engine._resume.archive import session_archive
from engine.testing import PostgresServer, prompt_contains, text, tool_use

FAST = Resilience(base_delay=0.01, max_delay=0.05, probe_interval=0.05, probe_timeout=0.5)
BIG = "python3 -c \"print('B' * 5000)\""

terse = AgentSpec(name="terse", instructions="回答极简,一行以内,不解释不寒暄。",
                  allowed_tools=["Read", "Glob"], max_turns=4)
shell = AgentSpec(name="shell", instructions="", allowed_tools=["Bash"], permission_mode="acceptEdits",
                  workbench=False, max_turns=4)


def workspace(root: Path, name: str) -> Path:
    ws = root / name
    ws.mkdir()
    (ws / "seed.txt").write_text("banana\n")
    return ws


def runtime(ws: Path, url: str | None, **kw: Any) -> Runtime:
    return Runtime(workspace=ws, run_dir=ws / "runs", resilience=FAST, database_url=url, **kw)


async def run_flow(ws: Path, url: str | None) -> dict[str, Any]:
    rt = runtime(ws, url)
    try:
        return await Workflow([Step("取词", terse, "读 seed.txt,只回文件里那个词。")]).run(rt)
    finally:
        rt.close()


def rows(server: PostgresServer, url: str, sql: str) -> str:
    return server.sql(sql, url.split("?")[0].rsplit("/", 1)[-1]).strip()


def tool_result_bodies(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for m in messages:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_result":
                body = b["content"]
                out.append(body if isinstance(body, str) else json.dumps(body))
    return out


async def test_steps_keep_their_transcript_in_postgres_and_resume_it_from_there(
    fake_model, tmp_path: Path, postgres_url: str, postgres_server: PostgresServer
) -> None:
    ws = workspace(tmp_path, "ws")
    fake_model.rule(tool_use("Read", {"file_path": str(ws / "seed.txt")}),
                    text("banana", usage={"input_tokens": 4321}), when=prompt_contains("seed.txt"))
    ctx1 = await run_flow(ws, postgres_url)
    ctx2 = await run_flow(ws, postgres_url)
    sid = ctx1["_sessions"]["取词"]
    assert ctx2["_sessions"]["取词"] == sid and ctx2["_woke"] == 2 and ctx2["取词"] == "banana"
    # The second run resumed from PostgreSQL: the model was shown the first run's turn.
    last = fake_model.message_requests[-1]
    assert "banana" in tool_result_bodies(last.messages)[0] and len(last.messages) > 3
    pk = project_key_for_directory(ws)
    assert rows(postgres_server, postgres_url, "SELECT project_key, session_id FROM session_meta "
                "WHERE subpath = ''") == f"{pk}|{sid}"
    assert int(rows(postgres_server, postgres_url, "SELECT count(*) FROM session_entries")) > 4
    # The sync looks read it there too, and a look without the URL finds nothing (and makes nothing).
    assert wake_state(ws, run_dir=ws / "runs", database_url=postgres_url)["steps"] == {"取词": sid}
    assert session_archive(ws / "runs", ws, postgres_url).last_context_tokens(sid) == 4321
    assert wake_state(ws, run_dir=ws / "runs")["steps"] == {}
    assert list(tmp_path.rglob("sessions.db*")) == []


async def test_the_trim_layer_shows_the_model_the_same_on_both_backends(
    fake_model, tmp_path: Path, postgres_url: str
) -> None:
    fake_model.rule(tool_use("Bash", {"command": BIG, "description": "print"}), text("printed"),
                    when=prompt_contains("BIG-OUTPUT"), repeat_last=False)
    resumed = fake_model.rule(text("next"), when=prompt_contains("AFTER-IT"), repeat_last=True)
    shown: dict[str, list[str]] = {}
    for kind, url in (("sqlite", None), ("postgres", postgres_url)):
        ws = workspace(tmp_path, kind)
        rt = runtime(ws, url, trim=TrimPolicy(keep_recent=0), workbench=False)
        try:
            first = await rt.run(shell, "BIG-OUTPUT: print the Bs")
            second = await rt.run(shell, "AFTER-IT: what next?", resume=first.session_id)
        finally:
            rt.close()
        assert first.ok and second.ok and second.session_id == first.session_id, (first.error, second.error)
        request = resumed.requests[-1]
        (body,) = tool_result_bodies(request.messages)
        assert body.startswith("[Tool result trimmed on resume: its 5000 characters are in ")
        spill = Path(body.split(" are in ")[1].split(". Read")[0])
        assert spill.parent == (ws / ".flower" / "spill").resolve() and spill.read_text().strip() == "B" * 5000
        assert "B" * 401 not in request.shown and "BIG-OUTPUT" in request.shown  # the first turn is there
        assert (ws / "runs" / "sessions.db").exists() == (url is None)
        shown[kind] = [b.replace(str(ws.resolve()), "<ws>") for b in tool_result_bodies(request.messages)]
    assert shown["sqlite"] == shown["postgres"]
    assert list((tmp_path / "postgres").rglob("sessions.db*")) == []


async def test_two_workspaces_in_one_database_never_see_each_others_sessions(
    fake_model, tmp_path: Path, postgres_url: str
) -> None:
    fake_model.rule(text("banana"), when=prompt_contains("seed.txt"), repeat_last=True)
    a, b = workspace(tmp_path, "a"), workspace(tmp_path, "b")
    sid_a = (await run_flow(a, postgres_url))["_sessions"]["取词"]
    sid_b = (await run_flow(b, postgres_url))["_sessions"]["取词"]
    assert sid_a != sid_b and project_key_for_directory(a) != project_key_for_directory(b)
    rt_a, rt_b = runtime(a, postgres_url), runtime(b, postgres_url)
    try:
        assert (rt_a.has_session(sid_a), rt_a.has_session(sid_b)) == (True, False)
        assert (rt_b.has_session(sid_b), rt_b.has_session(sid_a)) == (True, False)
        listed = await rt_a.store.list_sessions(project_key_for_directory(a))
        assert [s["session_id"] for s in listed] == [sid_a]
    finally:
        rt_a.close()
        rt_b.close()
    # b's lineage copied into a names a session a cannot resume: the wake drops it and starts fresh
    (a / "runs" / "lineage.json").write_text(json.dumps(
        {"workspace": str(a.resolve()), "woke": 1, "steps": {"取词": sid_b}}))
    assert wake_state(a, run_dir=a / "runs", database_url=postgres_url)["steps"] == {}
    assert list(tmp_path.rglob("sessions.db*")) == []

"""Every role is told where the files people share are (``inbox/``) and where files for them go
(``outbox/``), and the fence lets it reach them: the inbox readable, the outbox writable, nothing
else of an outside workbench opened to a role that has none."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PIL import Image as Pil

from engine import AgentSpec, Runtime, Sandbox
from engine.lang import speaking
from engine.authoring import Workbench, coordinator, judge, shared_files_rules, wants_isolation, worker
from engine._run.options import Setting, attempt_options
from engine.testing import prompt_contains, text, tool_use

sandboxed = pytest.mark.skipif(not (shutil.which("bwrap") and shutil.which("socat")),
                               reason="the sandbox needs bubblewrap and socat (make test installs them)")


def test_the_rule_names_the_workbenchs_folders_in_the_runs_language(tmp_path):
    inside = Workbench(tmp_path / "ws")
    with speaking("en"):
        rule = shared_files_rules(inside)
    assert "Files people shared with you (screenshots, logs, documents) are in .flower/inbox/" in rule
    assert "go in .flower/outbox/: when the request ends" in rule and "at most 10 files, no symbolic links" in rule
    outside = Workbench(tmp_path / "ws", home=tmp_path / ".flower-ws")
    with speaking("zh"):
        rule = shared_files_rules(outside)
    inbox = tmp_path / ".flower-ws" / "inbox"
    assert f"人分享给你的文件(截图、日志、文档)在 {inbox}/" in rule  # absolute: the workbench is outside
    assert f"放进 {tmp_path / '.flower-ws' / 'outbox'}/" in rule


def test_every_session_and_every_worker_is_told(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    wb = Workbench(ws)
    setting = Setting(workspace=ws, store=None, portable=False, workbench=wb,  # type: ignore[arg-type]
                      spill_threshold=None, handoff_on=True, env=None, own_group=False,
                      run_dir=tmp_path / "runs", sandbox=None)
    with speaking("en"):
        rule = shared_files_rules(wb)
        lead = coordinator("lead", "", {"coder": worker("codes", "You code.", isolate=True)})
        for spec in (lead, judge("judge", None)):
            opts = attempt_options(setting, spec, None, False, None)
            assert opts.system_prompt["append"].endswith(rule)  # after the role's own rules
            assert opts.system_prompt["append"].startswith(("## Workbench", "You are"))
        coder = attempt_options(setting, lead, None, False, None).agents["coder"]
    assert coder.prompt.startswith("You code.") and coder.prompt.endswith(rule)
    assert wants_isolation(coder)  # the worktree mark survives the copy
    assert lead.agents["coder"].prompt.count(rule) == 0  # the role itself is left as it was made


looker = AgentSpec(name="looker", instructions="", allowed_tools=["Bash", "Read", "Write"],
                   permission_mode="acceptEdits", workbench=False, max_turns=12)


def _layout(home: Path, *, outside: bool) -> tuple[Path, Workbench]:
    """A thread folder in FLOWER_HOME: the workspace, its workbench (beside it for a bound
    thread, as the bot lays one out) with a shared screenshot, a note and a report in outbox/."""
    thread = home / "workspaces" / "t1"
    ws = thread / "repo" if outside else thread
    ws.mkdir(parents=True)
    wb = Workbench(ws, home=thread / ".flower-repo") if outside else Workbench(ws)
    wb.ensure()
    for folder in (wb.inbox, wb.outbox):
        folder.mkdir(parents=True)
    Pil.new("RGB", (20, 20), "teal").save(wb.inbox / "1-shot.png", "PNG")
    (wb.outbox / "report.md").write_text("REPORT-FOR-PEOPLE")
    (wb.notes / "plan.md").write_text("NOTES-OF-THE-RUN")
    return ws, wb


async def _run(fake_model, ws: Path, wb: Workbench, home: Path, spec: AgentSpec, *calls) -> list[str]:
    fake_model.rule(*(tool_use(name, args) for name, args in calls), text("done"), when=prompt_contains("look"))
    rt = Runtime(workspace=ws, run_dir=ws.parent / "runs", workbench=wb, sandbox=Sandbox(deny_read=(home,)))
    try:
        result = await rt.run(spec, "look")
    finally:
        rt.close()
    assert result.ok, result.error
    return [shown for _, shown in fake_model.requests[-1].tool_results]


@sandboxed
async def test_in_a_plain_thread_the_inbox_is_read_and_the_outbox_written(fake_model, tmp_path):
    home = tmp_path / "home"
    ws, wb = _layout(home, outside=False)
    shown = await _run(
        fake_model, ws, wb, home, looker,
        ("Read", {"file_path": ".flower/inbox/1-shot.png"}),
        ("Bash", {"command": "cp .flower/inbox/1-shot.png .flower/outbox/annotated.png && echo copied"}),
        ("Write", {"file_path": ".flower/outbox/summary.md", "content": "for people"}))
    assert shown[0] == "[image]"  # the Read tool showed the picture itself
    assert "copied" in shown[1]
    assert (wb.outbox / "annotated.png").read_bytes() == (wb.inbox / "1-shot.png").read_bytes()
    assert (wb.outbox / "summary.md").read_text() == "for people"


@sandboxed
async def test_a_role_without_the_outside_workbench_reads_its_inbox_and_outbox_only(fake_model, tmp_path):
    home = tmp_path / "home"
    ws, wb = _layout(home, outside=True)
    shown = await _run(
        fake_model, ws, wb, home, looker,
        ("Read", {"file_path": str(wb.inbox / "1-shot.png")}),
        ("Bash", {"command": f"cat {wb.outbox / 'report.md'}; cat {wb.notes / 'plan.md'}; "
                             f"echo x > {wb.inbox / 'planted.txt'}; true"}),
        ("Read", {"file_path": str(wb.notes / "plan.md")}))
    assert shown[0] == "[image]"
    assert "REPORT-FOR-PEOPLE" in shown[1]  # a judge can check what the run hands back
    assert "NOTES-OF-THE-RUN" not in shown[1] and "NOTES-OF-THE-RUN" not in shown[2]
    assert "refused" in shown[2]
    assert not (wb.inbox / "planted.txt").exists()  # readable, not writable, for this role


@sandboxed
async def test_the_workbench_roles_write_the_outside_outbox(fake_model, tmp_path):
    home = tmp_path / "home"
    ws, wb = _layout(home, outside=True)
    hands = AgentSpec(name="hands", instructions="", allowed_tools=["Bash", "Read"], permission_mode="acceptEdits",
                      max_turns=12)
    shown = await _run(fake_model, ws, wb, home, hands,
                       ("Bash", {"command": f"cp {wb.inbox / '1-shot.png'} {wb.outbox / 'back.png'} && echo copied"}))
    assert "copied" in shown[0] and (wb.outbox / "back.png").is_file()

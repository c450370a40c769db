"""Every refusal is said (issue 37): a command that meets a link, FIFO or file a run put in its
workspace answers in the thread with what it could not do and which entry is in the way (named
from the thread's folder, never a host path), writes nothing outside the workspace, and leaves the
thread so the same command works once the entry is gone. A link or FIFO where the archive folder
goes is archived as it is, so ``/new`` works through it.

Real bot (bolt against the fake Slack), real files, the real CLI against the offline model."""

from __future__ import annotations

import os
import shutil
import stat
import threading
from pathlib import Path

import pytest

from bot.core.thread import ThreadKey
from bot.render import texts as catalogue
from bot.render.failures import refusal
from bot.runs.refused import in_the_way
from engine._flow.starter import starter_paths
from tests.bot.helpers.app import (
    CHANNEL,
    CLARIFY_ONLY,
    asked_thread,
    brief_only,
    posted,
    question,
    texts,
    workspace,
)

TOLD = 120  # a generous cap for a reply that needs no model: a busy shared machine, never a sleep


def outside_the_workspace(home: Path, ws: Path) -> dict[str, tuple[int, int]]:
    """Every entry under FLOWER_HOME but the thread's workspace (links not followed), with its type
    and size; the bot's database files change all the time and are left out."""
    seen = {}
    for top, folders, files in os.walk(home):
        if Path(top) == ws:
            folders[:] = []
            continue
        for name in folders + files:
            path = Path(top, name)
            if path != ws and not name.startswith("bot.db"):
                st = os.lstat(path)
                seen[str(path.relative_to(home))] = (stat.S_IFMT(st.st_mode), st.st_size if stat.S_ISREG(st.st_mode) else 0)
    return seen


async def finished_thread(slack, fake_model) -> str:
    brief_only(fake_model)
    event = slack.mention(CHANNEL, "写个 hello.txt")
    await slack.send_event(event)
    await posted(slack, event["ts"], "Done")
    return event["ts"]


def plant(where: Path, kind: str, target: Path) -> None:
    if kind == "link":
        os.symlink(target, where)
    else:
        os.mkfifo(where)


@pytest.mark.parametrize("kind", ["link", "fifo"])
async def test_new_archives_a_link_or_fifo_at_the_archive_folder_as_it_is(make_bot, slack_env, fake_model,
                                                                         tmp_path, kind):
    slack, home = slack_env, tmp_path / "home"
    await make_bot(CLARIFY_ONLY)
    thread = await finished_thread(slack, fake_model)
    ws = workspace(tmp_path, thread)
    paths = starter_paths(ws)
    plant(paths.archive, kind, home)
    if kind == "fifo":  # and where the archive reads: the brief (the wake state) and moves it
        paths.brief.unlink()
        os.mkfifo(paths.brief)
    before = outside_the_workspace(home, ws)
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "/new 另一件事", thread_ts=thread))
    await posted(slack, thread, "Done", after=mark, timeout=TOLD)
    [archived] = [p for p in paths.archive.iterdir()]
    assert paths.archive.is_dir() and not paths.archive.is_symlink()
    brief = archived / paths.brief.name
    assert brief.is_file() if kind == "link" else stat.S_ISFIFO(os.lstat(brief).st_mode)
    kept = archived / "archive"  # the run's entry, moved as it is
    assert (os.readlink(kept) == str(home)) if kind == "link" else stat.S_ISFIFO(os.lstat(kept).st_mode)
    assert outside_the_workspace(home, ws) == before


@pytest.mark.parametrize(("entry", "kind", "said"), [
    (".flower", "link", "is a link"),
    (".flower/notes", "link", "is a link"),
    (".flower/notes", "fifo", "is a FIFO"),
])
async def test_new_through_a_link_or_fifo_in_the_workbench_says_why_and_works_once_it_is_gone(
        make_bot, slack_env, fake_model, tmp_path, entry, kind, said):
    slack, home = slack_env, tmp_path / "home"
    await make_bot(CLARIFY_ONLY)
    thread = await finished_thread(slack, fake_model)
    ws = workspace(tmp_path, thread)
    real = ws / "kept-aside"
    os.rename(ws / entry, real)  # the run's own folder, put back once the person removed the entry
    plant(ws / entry, kind, home)
    before = outside_the_workspace(home, ws)
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "/new 另一件事", thread_ts=thread))
    told = await posted(slack, thread, "I couldn't archive the last run", after=mark, timeout=TOLD)
    shown = told.body["text"]
    assert said in shown and f"`{entry}`" in shown and "start a new thread" in shown, shown
    assert str(tmp_path) not in shown
    assert outside_the_workspace(home, ws) == before
    assert [t for t in texts(slack, thread) if "I couldn't" in t] == [shown]  # said once

    os.unlink(ws / entry)
    os.rename(real, ws / entry)
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "/new 另一件事", thread_ts=thread))
    await posted(slack, thread, "Done", after=mark, timeout=TOLD)
    assert len(list(starter_paths(ws).archive.iterdir())) == 1


async def test_start_over_through_a_linked_workbench_says_why_and_works_once_it_is_gone(
        make_bot, slack_env, fake_model, tmp_path):
    slack, home = slack_env, tmp_path / "home"
    bot = await make_bot(CLARIFY_ONLY)
    thread, _, _ = await asked_thread(slack, fake_model)  # a run going: its status line has Start over
    ws = workspace(tmp_path, thread)
    notes = ws / ".flower" / "notes"
    os.rename(notes, ws / "kept-aside")
    os.symlink(home, notes)
    before = outside_the_workspace(home, ws)
    status = (await bot.store.get_thread(ThreadKey("T0001", CHANNEL, thread))).status_ts
    await slack.wait_for("chat.update", lambda c: "flower_new" in str(c.arg("blocks")), ts=status)
    mark = slack.mark()
    await slack.click(CHANNEL, status, "flower_new")
    told = await posted(slack, thread, "I couldn't archive the last run", after=mark, timeout=TOLD)
    assert "is a link" in told.body["text"] and "`.flower/notes`" in told.body["text"], told.body["text"]
    assert outside_the_workspace(home, ws) == before

    os.unlink(notes)
    os.rename(ws / "kept-aside", notes)
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "/new 另一件事", thread_ts=thread))
    await question(slack, thread, after=mark)  # the new request's clarifier asks again
    assert len(list(starter_paths(ws).archive.iterdir())) == 1


async def test_a_reply_to_a_thread_whose_workbench_is_a_link_says_why_and_works_once_it_is_gone(
        make_bot, slack_env, fake_model, tmp_path):
    slack, home = slack_env, tmp_path / "home"
    await make_bot(CLARIFY_ONLY)
    thread = await finished_thread(slack, fake_model)
    ws = workspace(tmp_path, thread)
    os.rename(ws / ".flower", ws / "kept-aside")
    os.symlink(home, ws / ".flower")
    before = outside_the_workspace(home, ws)
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "顺便加一个 bye.txt", thread_ts=thread))
    told = await posted(slack, thread, "The run failed", after=mark, timeout=TOLD)
    shown = told.body["text"]
    assert "is a link" in shown and "`.flower`" in shown and "start a new thread" in shown, shown
    assert str(tmp_path) not in str([c.body for c in slack.calls()[mark:]])  # no host path, nor in the status line
    assert outside_the_workspace(home, ws) == before

    os.unlink(ws / ".flower")
    os.rename(ws / "kept-aside", ws / ".flower")
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "顺便加一个 bye.txt", thread_ts=thread))
    await posted(slack, thread, "Done", after=mark, timeout=TOLD)


async def test_new_whose_archive_overruns_its_time_says_so(make_bot, slack_env, fake_model, tmp_path, monkeypatch):
    import engine._file_work
    from bot.runs import jobs

    slack = slack_env
    await make_bot(CLARIFY_ONLY)
    thread = await finished_thread(slack, fake_model)
    ws = workspace(tmp_path, thread)
    release = threading.Event()

    def stalled(where):  # our own step, held until the test lets it go: the archive overruns its time
        release.wait(TOLD)
        return real(where)

    real = jobs.thread_run
    monkeypatch.setattr(jobs, "thread_run", stalled)
    monkeypatch.setattr(engine._file_work, "TIMEOUT_S", 0.5)
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "/new 另一件事", thread_ts=thread))
    told = await posted(slack, thread, "I couldn't archive the last run", after=mark, timeout=TOLD)
    assert "takes too long to read" in told.body["text"] and str(tmp_path) not in told.body["text"]
    release.set()  # the written-off call finishes in its thread; the test waits for it to leave the files
    await slack.wait_until(lambda: starter_paths(ws).archive.is_dir(), what="the written-off archive to end")


def test_the_entry_in_the_way_is_found_without_following_or_opening_it(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".flower" / "notes").mkdir(parents=True)
    assert in_the_way(ws, ws / ".flower" / "notes" / "archive") is None  # all folders, or not there yet
    os.symlink(tmp_path, ws / ".flower" / "notes" / "archive")
    assert in_the_way(ws, ws / ".flower" / "notes" / "archive" / "x") == (".flower/notes/archive", "link")
    shutil.rmtree(ws / ".flower" / "notes")
    os.mkfifo(ws / ".flower" / "notes")  # lstat only: a FIFO is never opened
    assert in_the_way(ws, ws / ".flower" / "notes" / "archive") == (".flower/notes", "fifo")
    os.unlink(ws / ".flower" / "notes")
    (ws / ".flower" / "notes").write_text("")
    assert in_the_way(ws, ws / ".flower" / "notes" / "archive") == (".flower/notes", "other")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_refusal_names_the_entry_on_one_line_with_nothing_of_it_read_as_markup(language):
    catalogue.use(language)
    try:
        said = refusal("archive", "notes/`<!channel>`\n<https://x|here>", "link")
        unnamed = refusal("other", "", "fifo")
    finally:
        catalogue.use("en")
    assert "<!channel>" not in said and "&lt;!channel&gt;" in said and "<https" not in said
    assert said.count("`") == 2 and "\n" not in said  # one code span, one line
    assert ("archive the last run" in said) if language == "en" else ("归档上一次运行" in said)
    assert "`" not in unnamed and ("FIFO" in unnamed)

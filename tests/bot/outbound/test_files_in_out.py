"""Files in and out of a run's thread (bot.outbound.files_in / files_out), against the fake Slack's real
HTTP server with the real aiohttp and slack_sdk: what is saved, what is refused and why, where the
bot token goes, and that no link in the workspace leads a read or a write elsewhere."""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest
from aiohttp import web
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import ConfigError
from bot.outbound import files_out
from bot.outbound.files_in import MAX_FILES, MAX_LINES, refusal_text, take_files
from bot.outbound.files_out import MAX_UPLOADS, skipped_text, upload_outbox
from bot.outbound.outbox import PART_LIMIT
from bot.render import texts
from bot.render.texts import english as en
from bot.settings.config import Config, load_config

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(64))
LOG = b"2026-01-01 12:00:00 ERROR something broke\n" * 20
MIB = 1024 * 1024
CHANNEL = "C0GENERAL"


@pytest.fixture
def client(fake_slack) -> AsyncWebClient:
    return AsyncWebClient(token=fake_slack.bot_token, base_url=fake_slack.api_url)


@pytest.fixture
def config(fake_slack) -> Config:
    return Config(bot_token=fake_slack.bot_token, app_token=fake_slack.app_token, api_url=fake_slack.api_url)


@pytest.fixture
def workspace(tmp_path) -> Path:
    path = tmp_path / "workspaces" / "T0001-C0GENERAL-1_2"
    path.mkdir(parents=True)
    return path


def inbox_of(workspace: Path) -> Path:
    return workspace / ".flower" / "inbox"


def listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder)) if folder.exists() else []


@pytest.fixture
async def evil():
    """A second server standing for any host that is not Slack's: it records every request."""
    seen: list[dict] = []

    async def record(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        return web.Response(body=PNG, content_type="image/png")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", record)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    host, port = runner.addresses[0][:2]
    yield f"http://{host}:{port}", seen
    await runner.cleanup()


# --- files in ----------------------------------------------------------------------------------


async def test_a_png_and_a_log_are_saved_with_their_bytes(fake_slack, client, config, workspace):
    shot = fake_slack.add_file("screen shot.png", PNG, mimetype="image/png", filetype="png")
    log = fake_slack.add_file("build.log", LOG, mimetype="text/plain", filetype="text")
    event = fake_slack.mention(CHANNEL, "why does it fail?", files=[shot, log])

    taken = await take_files(client, config, event["files"], workspace, start=1)

    assert taken.refused == [] and refusal_text(taken.refused) == ""
    png, text = taken.files
    assert (png.path, png.name, png.size, png.mimetype, png.is_image) == (
        Path(".flower/inbox/1-screen shot.png"), "screen shot.png", len(PNG), "image/png", True)
    assert (text.path, text.is_image, text.mimetype) == (Path(".flower/inbox/2-build.log"), False, "text/plain")
    assert png.absolute == workspace / png.path and png.absolute.read_bytes() == PNG
    assert text.absolute.read_bytes() == LOG
    assert taken.next_start == 3
    assert listing(inbox_of(workspace)) == ["1-screen shot.png", "2-build.log"]  # no draft left behind
    for saved in taken.files:
        assert stat.S_IMODE(saved.absolute.stat().st_mode) == 0o600
    assert stat.S_IMODE(inbox_of(workspace).stat().st_mode) == 0o700
    assert [(d.authorization, d.authorized, d.status) for d in fake_slack.downloads] == [(True, True, 200)] * 2
    assert all(d.path.startswith("/files-pri/T0001-F") for d in fake_slack.downloads)

    # a reply's files are numbered on: nothing is replaced, even when the caller's count is behind
    again = await take_files(client, config, [fake_slack.add_file("build.log", b"v2\n", mimetype="text/plain",
                                                                   filetype="text")], workspace, start=1)
    assert [f.path.name for f in again.files] == ["3-build.log"] and text.absolute.read_bytes() == LOG


async def test_too_large_and_unknown_kinds_are_refused_before_any_download(fake_slack, client, config, workspace):
    huge = fake_slack.add_file("dump.csv", b"a,b\n", mimetype="text/csv", filetype="csv", size=50 * MIB)
    program = fake_slack.add_file("setup.exe", b"MZ\x90\x00", mimetype="application/x-msdownload", filetype="binary")
    blob = fake_slack.add_file("data.bin", b"\x00\x01", mimetype="application/octet-stream", filetype="binary")

    taken = await take_files(client, config, [huge, program, blob], workspace, start=1)

    assert taken.files == [] and fake_slack.downloads == []
    assert [(r.name, r.reason) for r in taken.refused] == [
        ("dump.csv", "is 50 MB; the limit is 20 MB (`FLOWER_FILE_MAX_MB`)"),
        ("setup.exe", "is a kind of file flower does not open (application/x-msdownload)"),
        ("data.bin", "is a kind of file flower does not open (application/octet-stream)"),
    ]
    said = refusal_text(taken.refused)
    assert said.splitlines()[0] == en.FILES_NOT_OPENED
    assert "• `setup.exe` is a kind of file flower does not open (application/x-msdownload)" in said
    assert str(workspace) not in said and listing(inbox_of(workspace)) == []


async def test_a_stream_longer_than_it_said_is_cut_and_leaves_nothing(fake_slack, client, config, workspace):
    liar = fake_slack.add_file("small.log", b"x" * (3 * MIB), mimetype="text/plain", filetype="text", size=100)

    taken = await take_files(client, replace(config, file_max_mb=1), [liar], workspace, start=1)

    assert taken.files == []
    assert [(r.name, r.reason) for r in taken.refused] == [
        ("small.log", "is larger than the 1 MB limit (`FLOWER_FILE_MAX_MB`), more than it said")]
    assert [d.status for d in fake_slack.downloads] == [200]  # it was fetched, then cut at the limit
    assert listing(inbox_of(workspace)) == []  # not even the hidden draft


async def test_an_image_whose_bytes_are_no_image_is_refused(fake_slack, client, config, workspace):
    fake = fake_slack.add_file("cat.png", b"#!/bin/sh\nrm -rf ~\n", mimetype="image/png", filetype="png")
    elf = fake_slack.add_file("notes.txt", b"\x7fELF\x02\x01\x01" + bytes(40), mimetype="text/plain", filetype="text")

    taken = await take_files(client, config, [fake, elf], workspace, start=1)

    assert taken.files == [] and listing(inbox_of(workspace)) == []
    assert [r.reason for r in taken.refused] == ["is not an image, though it says it is",
                                                 "is a program, which flower does not open"]


async def test_hostile_names_land_inside_the_inbox(fake_slack, client, config, workspace):
    names = ["../../x", ".env", "..", "a/b\\c\x00\u202e.txt", "é" * 300 + ".md"]
    files = [fake_slack.add_file(n, b"hi\n", mimetype="text/plain", filetype="text") for n in names]

    taken = await take_files(client, config, files, workspace, start=7)

    assert taken.refused == []
    saved = [f.path.name for f in taken.files]
    assert saved[:4] == ["7-x", "8-env", "9-file", "10-c.txt"]
    assert saved[4].startswith("11-éé") and saved[4].endswith(".md") and len(saved[4]) <= 103
    assert all(f.absolute.parent == inbox_of(workspace) for f in taken.files)
    assert sorted(os.listdir(workspace.parent)) == [workspace.name]  # nothing landed next to the workspace
    assert [f.name for f in taken.files] == names  # the person's names are kept for what is said


@pytest.mark.parametrize("planted", [".flower/inbox", ".flower"])
async def test_an_inbox_planted_as_a_link_refuses_the_take(fake_slack, client, config, workspace, tmp_path, planted):
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".flower").mkdir()
    if planted == ".flower":
        (workspace / ".flower").rmdir()
    (workspace / planted).symlink_to(outside)
    shot = fake_slack.add_file("shot.png", PNG, mimetype="image/png", filetype="png")

    taken = await take_files(client, config, [shot], workspace, start=1)

    assert taken.files == [] and listing(outside) == [] and fake_slack.downloads == []
    assert [(r.name, r.reason) for r in taken.refused] == [("shot.png", en.FILE_NOT_SAVED)]
    assert "`.flower/inbox`" in refusal_text(taken.refused) and str(tmp_path) not in refusal_text(taken.refused)


async def test_a_link_planted_in_the_inbox_is_never_written_through(fake_slack, client, config, workspace, tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    inbox_of(workspace).mkdir(parents=True)
    (inbox_of(workspace) / "1-notes.txt").symlink_to(target)
    notes = fake_slack.add_file("notes.txt", b"new words\n", mimetype="text/plain", filetype="text")

    taken = await take_files(client, config, [notes], workspace, start=1)

    assert [f.path.name for f in taken.files] == ["2-notes.txt"]
    assert target.read_text() == "keep me" and (inbox_of(workspace) / "1-notes.txt").is_symlink()


async def test_a_url_off_slacks_file_host_is_never_fetched(fake_slack, client, config, workspace, evil):
    evil_url, seen = evil
    crafted = [
        {"id": "F1", "name": "a.png", "mimetype": "image/png", "filetype": "png", "size": 10,
         "url_private_download": f"{evil_url}/files-pri/T0001-F1/download/a.png"},
        {"id": "F2", "name": "b.png", "mimetype": "image/png", "filetype": "png", "size": 10,
         "url_private": "https://files.slack.com.evil.invalid/b.png"},
        {"id": "F3", "name": "c.png", "mimetype": "image/png", "filetype": "png", "size": 10,
         "url_private_download": "http://files.slack.com/files-pri/T0001-F3/download/c.png"},  # not https
        {"id": "F4", "name": "d.png", "mimetype": "image/png", "filetype": "png", "size": 10,
         "url_private_download": f"https://files.slack.com@{evil_url.removeprefix('http://')}/d.png"},
    ]

    taken = await take_files(client, config, crafted, workspace, start=1)

    assert seen == [] and taken.files == [] and fake_slack.downloads == []
    reasons = [r.reason for r in taken.refused]
    assert reasons[0] == "is not on Slack's file host (127.0.0.1), so flower did not fetch it"
    assert reasons[1] == "is not on Slack's file host (files.slack.com.evil.invalid), so flower did not fetch it"
    assert all(r.startswith("is not on Slack's file host") for r in reasons)


async def test_a_slack_connect_file_is_described_by_files_info(fake_slack, client, config, workspace):
    stub = fake_slack.add_file("trace.json", b'{"ok": true}', mimetype="application/json", filetype="json",
                               file_access="check_file_info")
    assert stub == {"id": stub["id"], "mode": "file_access", "file_access": "check_file_info"}

    program = fake_slack.add_file("setup.exe", b"MZ", mimetype="application/x-msdownload", filetype="binary",
                                  file_access="check_file_info")

    taken = await take_files(client, config, [stub, program], workspace, start=1)

    assert [(f.name, f.absolute.read_bytes()) for f in taken.files] == [("trace.json", b'{"ok": true}')]
    assert [r.name for r in taken.refused] == ["setup.exe"]  # named as files.info names it, not by its id
    assert [(c.body.get("file"), c.token, c.ok) for c in fake_slack.calls("files.info")] == [
        (stub["id"], fake_slack.bot_token, True), (program["id"], fake_slack.bot_token, True)]
    assert len(fake_slack.downloads) == 1


async def test_downloads_slack_refuses_or_cannot_serve_become_reasons(fake_slack, client, config, workspace):
    gone = fake_slack.add_file("gone.txt", b"x", mimetype="text/plain", filetype="text")
    fake_slack.store.uploads.pop(gone["id"])
    kept = fake_slack.add_file("kept.txt", b"y", mimetype="text/plain", filetype="text")
    unknown = {"id": "F0NOPE", "file_access": "check_file_info"}

    gone_or_unknown = await take_files(client, config, [gone, unknown], workspace, start=1)
    wrong_token = await take_files(client, replace(config, bot_token="xoxb-wrong"), [kept], workspace, start=1)
    closed = Config(bot_token="xoxb-test", api_url="http://127.0.0.1:9/api/")  # nothing listens on port 9
    unreachable = await take_files(client, closed, [{**kept, "url_private_download": "http://127.0.0.1:9/f/x.txt"}],
                                   workspace, start=1)

    assert [r.reason for r in gone_or_unknown.refused] == [
        "could not be downloaded: Slack answered HTTP 404",
        "could not be looked up on Slack (`files.info`: file_not_found)"]
    assert [r.reason for r in wrong_token.refused] == [
        "could not be downloaded: Slack answered HTTP 403 (the app may lack the `files:read` scope)"]
    assert fake_slack.downloads[-1].authorization and not fake_slack.downloads[-1].authorized
    assert len(unreachable.refused) == 1 and unreachable.refused[0].reason.startswith("could not be downloaded: ")
    assert listing(inbox_of(workspace)) == []


async def test_past_ten_files_a_message_the_rest_are_refused(fake_slack, client, config, workspace):
    files = [fake_slack.add_file(f"f{n:02}.txt", b"%d\n" % n, mimetype="text/plain", filetype="text")
             for n in range(MAX_FILES + 2)]

    taken = await take_files(client, config, files, workspace, start=1)

    assert len(taken.files) == MAX_FILES and len(fake_slack.downloads) == MAX_FILES
    assert [(r.name, r.reason) for r in taken.refused] == [
        (f"f{n}.txt", "is past the first 10 files of the message; flower opens at most 10 a message")
        for n in (10, 11)]


async def test_refusals_are_said_in_the_teams_language(fake_slack, client, config, workspace):
    texts.use("zh")
    try:
        program = fake_slack.add_file("a<b>.exe", b"MZ", mimetype="application/x-msdownload", filetype="binary")
        taken = await take_files(client, config, [program], workspace, start=1)
        said = refusal_text(taken.refused)
    finally:
        texts.use("en")
    assert said == "📎 没有打开：\n• `a&lt;b&gt;.exe` 是 flower 不打开的文件类型（application/x-msdownload）"


# --- files out ---------------------------------------------------------------------------------


def outbox_of(workspace: Path) -> Path:
    path = workspace / ".flower" / "outbox"
    path.mkdir(parents=True, exist_ok=True)
    return path


async def thread(fake_slack) -> str:
    return fake_slack.mention(CHANNEL, "make me a chart")["ts"]


async def test_a_png_in_the_outbox_is_posted_once_until_it_changes(fake_slack, client, config, workspace):
    ts = await thread(fake_slack)
    (outbox_of(workspace) / "chart.png").write_bytes(PNG)

    first = await upload_outbox(client, config, workspace, CHANNEL, ts, already=set())
    second = await upload_outbox(client, config, workspace, CHANNEL, ts, already=first.keys)

    assert (first.names, first.skipped, len(first.keys)) == (["chart.png"], [], 1)
    assert (second.names, second.skipped, second.keys) == ([], [], first.keys)
    assert fake_slack.uploads(CHANNEL, ts) == [("chart.png", PNG)]
    assert len(fake_slack.calls("files.completeUploadExternal", channel_id=CHANNEL, thread_ts=ts)) == 1
    shown = fake_slack.messages_in(CHANNEL, ts)[-1]["files"][0]
    assert (shown["name"], shown["title"]) == ("chart.png", "chart.png")

    (outbox_of(workspace) / "chart.png").write_bytes(PNG + b"v2")
    third = await upload_outbox(client, config, workspace, CHANNEL, ts, already=second.keys)
    assert third.names == ["chart.png"] and third.keys != first.keys
    assert fake_slack.uploads(CHANNEL, ts) == [("chart.png", PNG), ("chart.png", PNG + b"v2")]


async def test_links_and_folders_in_the_outbox_are_never_posted(fake_slack, client, config, workspace, tmp_path):
    ts = await thread(fake_slack)
    secret = tmp_path / "secret.env"
    secret.write_bytes(b"SLACK_BOT_TOKEN=xoxb-very-secret\n")
    (workspace / "inside.txt").write_bytes(b"fine, but through a link\n")
    outbox = outbox_of(workspace)
    (outbox / "leak.txt").symlink_to(secret)
    (outbox / "inside.txt").symlink_to(workspace / "inside.txt")
    os.link(secret, outbox / "hard.txt")
    (outbox / "sub").mkdir()
    (outbox / "sub" / "deep.txt").write_bytes(b"deep")
    (outbox / "report.md").write_bytes(b"# Report\n")

    done = await upload_outbox(client, config, workspace, CHANNEL, ts, already=set())

    assert done.names == ["report.md"]
    assert [(s.name, s.reason) for s in done.skipped] == [
        ("hard.txt", en.FILE_HARD_LINKED), ("inside.txt", en.FILE_IS_LINK), ("leak.txt", en.FILE_IS_LINK),
        ("sub", en.FILE_IS_FOLDER)]
    assert fake_slack.uploads(CHANNEL) == [("report.md", b"# Report\n")]
    every_upload = b"".join(c or b"" for c in (u.content for u in fake_slack.store.uploads.values()))
    assert b"very-secret" not in every_upload and b"deep" not in every_upload
    assert skipped_text(done.skipped).startswith(en.FILES_NOT_POSTED + "\n• `hard.txt` ")


async def test_a_file_swapped_for_a_link_after_the_listing_is_refused_at_the_open(
    fake_slack, client, config, workspace, tmp_path, monkeypatch,
):
    ts = await thread(fake_slack)
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"do not post")
    outbox = outbox_of(workspace)
    (outbox / "out.txt").write_bytes(b"harmless")
    listed = files_out._listing

    def listing_then_swap(fd: int):  # the agent wins the race between the listing and the open
        seen = listed(fd)
        (outbox / "out.txt").unlink()
        (outbox / "out.txt").symlink_to(secret)
        return seen

    monkeypatch.setattr(files_out, "_listing", listing_then_swap)
    done = await upload_outbox(client, config, workspace, CHANNEL, ts, already=set())

    assert done.names == [] and [(s.name, s.reason) for s in done.skipped] == [("out.txt", en.FILE_IS_LINK)]
    assert fake_slack.uploads(CHANNEL) == [] and fake_slack.calls("files.getUploadURLExternal") == []


async def test_an_outbox_that_is_a_link_posts_nothing(fake_slack, client, config, workspace, tmp_path):
    ts = await thread(fake_slack)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.png").write_bytes(PNG)
    (workspace / ".flower").mkdir()
    (workspace / ".flower" / "outbox").symlink_to(elsewhere)

    done = await upload_outbox(client, config, workspace, CHANNEL, ts, already=set())
    missing = await upload_outbox(client, config, workspace.parent, CHANNEL, ts, already=set())

    assert done.names == [] and [(s.name, s.reason) for s in done.skipped] == [(".flower/outbox",
                                                                                en.FILE_OUTBOX_UNSAFE)]
    assert (missing.names, missing.skipped) == ([], [])  # no outbox at all: nothing to say
    assert fake_slack.uploads(CHANNEL) == []


async def test_past_ten_files_the_rest_wait_for_the_next_post(fake_slack, client, config, workspace):
    ts = await thread(fake_slack)
    for n in range(MAX_UPLOADS + 3):
        (outbox_of(workspace) / f"r{n:02}.csv").write_bytes(b"n,%d\n" % n)
    (outbox_of(workspace) / "big.log").write_bytes(b"x" * (MIB + 1))

    first = await upload_outbox(client, replace(config, file_max_mb=1), workspace, CHANNEL, ts, already=set())
    second = await upload_outbox(client, replace(config, file_max_mb=1), workspace, CHANNEL, ts, already=first.keys)

    assert first.names == [f"r{n:02}.csv" for n in range(MAX_UPLOADS)]
    assert [(s.name, s.reason) for s in first.skipped] == [
        ("big.log", "is 1.1 MB; the limit is 1 MB (`FLOWER_FILE_MAX_MB`)"),  # just over: never "1 MB of 1 MB"
        *[(f"r{n}.csv", "is past the first 10 files; it is posted next time") for n in (10, 11, 12)]]
    assert second.names == ["r10.csv", "r11.csv", "r12.csv"] and len(second.keys) == MAX_UPLOADS + 3
    assert [name for name, _ in fake_slack.uploads(CHANNEL, ts)] == [f"r{n:02}.csv" for n in range(MAX_UPLOADS + 3)]
    assert len(fake_slack.calls("files.completeUploadExternal")) == 2  # one message a call


def test_the_file_limit_is_a_positive_number_of_megabytes():
    base = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "FLOWER_ALLOW_EVERYONE": "1"}
    assert load_config(base).file_max_mb == 20 and load_config(base).file_max_bytes == 20 * MIB
    assert load_config(base | {"FLOWER_FILE_MAX_MB": "2.5"}).file_max_bytes == int(2.5 * MIB)
    for bad in ("0", "-1", "lots", "nan", "inf", "2048"):
        with pytest.raises(ConfigError, match=rf"^FLOWER_FILE_MAX_MB must be a number of megabytes, more than 0 "
                                              rf"and at most 1024; got '{bad}'\. .*\(default 20\)\.$"):
            load_config(base | {"FLOWER_FILE_MAX_MB": bad})


async def test_an_outbox_flooded_with_files_costs_one_short_note_and_a_bounded_read(fake_slack, client, config,
                                                                                   workspace):
    """A run leaves 3,000 long-named files: each one refused used to be a line of the note, posted
    in ~150 parts through the one outbox every thread's notices wait in (Slack lets a bot post
    about once a second), and every file was read and hashed, 100,000 sparse ones for hours."""
    ts = await thread(fake_slack)
    box = outbox_of(workspace)
    for n in range(3000):
        (box / f"r{n:04}-{'x' * 200}.csv").write_bytes(b"%d\n" % n)

    uploaded = await upload_outbox(client, config, workspace, CHANNEL, ts, already=set())

    assert len(uploaded.names) == MAX_UPLOADS and len(uploaded.skipped) == 3000 - MAX_UPLOADS
    said = skipped_text(uploaded.skipped)
    assert len(said) <= PART_LIMIT  # one message
    assert said.splitlines()[-1] == texts.FILES_MORE.format(n=3000 - MAX_UPLOADS - MAX_LINES)
    looked = [s for s in uploaded.skipped if s.reason != texts.FILE_PAST_LOOKED.format(max=files_out.MAX_OPENED)]
    assert len(looked) + MAX_UPLOADS == files_out.MAX_OPENED  # the rest were never opened

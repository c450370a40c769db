"""Files in and out of a thread, end to end: the real bolt app against the fake Slack (which serves
shared files only to the bot token), the real CLI against the offline model, the real sandbox.

What is asserted is what the model was sent (the image's own bytes as an image block, the log's
path in the words), what lands in the thread's inbox, and what Slack received (the refusals, the
outbox's upload, once, and never a file a link points at).
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import zlib

from bot.core.thread import ThreadKey
from engine.testing import hold, prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE, WORKER
from tests.bot.helpers.app import ACHIEVED, BRIEF, CHANNEL, CLARIFY_ONLY, GOAL, OPTIONS, marked_done, posted


def png(width: int = 2, height: int = 2) -> bytes:
    """A real PNG (no library needed): ``width`` × ``height`` grey pixels."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


SCREEN = png()
SECRET = "TOPSECRET-not-for-slack"


def script(fm, *, command: str) -> None:
    fm.rule(text(BRIEF), when=CLARIFIER, repeat_last=True)
    fm.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], repeat_last=True)
    fm.rule(text(ACHIEVED), when=[JUDGE, prompt_contains("判定这一轮")], repeat_last=True)
    fm.rule(tool_use("Agent", {"subagent_type": "coder", "description": "do it", "prompt": "Do the work."}),
            text("done"), when=COORDINATOR, repeat_last=True)
    fm.rule(tool_use("Bash", {"command": command}), text("worked"), when=WORKER, repeat_last=True)


def images_in(request) -> list[bytes]:
    """The image blocks' bytes in a model request's messages."""
    found = []
    for message in request.body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "image" and block.get("source", {}).get("type") == "base64":
                found.append(base64.b64decode(block["source"]["data"]))
    return found


def inbox(tmp_path, thread_ts: str):
    return tmp_path / "home" / "workspaces" / f"T0001-{CHANNEL}-{thread_ts.replace('.', '_')}" / ".flower" / "inbox"


async def test_a_screenshot_and_a_log_reach_the_work_and_the_outbox_comes_back_once(make_bot, slack_env, fake_model,
                                                                                    tmp_path):
    slack = slack_env
    bot = await make_bot(OPTIONS)
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    script(fake_model, command=f"mkdir -p .flower/outbox && cp .flower/inbox/1-screen.png .flower/outbox/chart.png "
                               f"&& ln -sf {secret} .flower/outbox/leak.txt; ls .flower/outbox")
    shot = slack.add_file("screen.png", SCREEN, mimetype="image/png", filetype="png")
    log = slack.add_file("build.log", b"error: boom at line 3\n", mimetype="text/plain", filetype="text")
    event = slack.mention(CHANNEL, "fix what the screenshot shows", files=[shot, log])
    await slack.send_event(event)
    done = await posted(slack, event["ts"], "Done")
    key = ThreadKey("T0001", CHANNEL, event["ts"])
    await marked_done(bot, key)

    # the request's words reach the clarifier, which confirms them into the brief; both see the picture,
    # and the coordinator's rules say where the person's files are
    clarifier = next(r for r in fake_model.message_requests if CLARIFIER(r.body))
    coordinator = next(r for r in fake_model.message_requests if COORDINATOR(r.body))
    assert SCREEN in images_in(clarifier) and SCREEN in images_in(coordinator)  # the same bytes, as image blocks
    words = json.dumps(clarifier.body, ensure_ascii=False)
    assert ".flower/inbox/2-build.log" in words and ".flower/inbox/1-screen.png" in words
    assert ".flower/inbox/" in json.dumps(coordinator.body, ensure_ascii=False)
    assert (inbox(tmp_path, event["ts"]) / "1-screen.png").read_bytes() == SCREEN
    assert (inbox(tmp_path, event["ts"]) / "2-build.log").read_bytes() == b"error: boom at line 3\n"
    assert not [r for r in fake_model.message_requests if JUDGE(r.body) and images_in(r)]  # the judge reads files

    assert slack.uploads(CHANNEL, event["ts"]) == [("chart.png", SCREEN)]  # the link to the secret is not posted
    assert SECRET not in json.dumps([c.body for c in slack.calls()])
    assert "chart.png" in json.dumps(done.body)

    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "once more", thread_ts=event["ts"]))
    await posted(slack, event["ts"], "Done", after=mark)
    await marked_done(bot, key)
    assert slack.uploads(CHANNEL, event["ts"]) == [("chart.png", SCREEN)]  # unchanged: not posted again


async def test_what_is_refused_is_said_and_a_hostile_name_stays_in_the_inbox(make_bot, slack_env, fake_model,
                                                                           tmp_path):
    slack = slack_env
    bot = await make_bot(CLARIFY_ONLY)
    fake_model.rule(text(BRIEF), when=CLARIFIER)
    huge = slack.add_file("dump.tar", b"x" * 1024, mimetype="application/x-tar", filetype="tar", size=50 * 2**20)
    program = slack.add_file("setup.exe", b"MZ\x90\x00" + b"\x00" * 100, mimetype="application/x-msdownload",
                             filetype="binary")
    sneaky = slack.add_file("../../x.txt", b"inside\n", mimetype="text/plain", filetype="text")
    event = slack.mention(CHANNEL, "look at these", files=[huge, program, sneaky])
    await slack.send_event(event)
    said = await posted(slack, event["ts"], "dump.tar")
    assert "setup.exe" in said.body["text"] and "50" in said.body["text"] and "20 MB" in said.body["text"]
    await posted(slack, event["ts"], "Done")
    await marked_done(bot, ThreadKey("T0001", CHANNEL, event["ts"]))
    assert sorted(p.name for p in inbox(tmp_path, event["ts"]).iterdir()) == ["1-x.txt"]
    assert not (tmp_path / "home" / "x.txt").exists() and not (tmp_path / "x.txt").exists()
    clarified = json.dumps([r.body for r in fake_model.message_requests if CLARIFIER(r.body)], ensure_ascii=False)
    assert ".flower/inbox/1-x.txt" in clarified and "dump.tar" not in clarified


async def test_a_screenshot_said_mid_run_reaches_the_running_session(make_bot, slack_env, fake_model):
    slack = slack_env
    await make_bot(OPTIONS)
    held = hold()
    fake_model.rule(tool_use("Bash", {"command": "echo working"}), text("worked", fault=held), when=WORKER)
    script(fake_model, command="echo again")
    event = slack.mention(CHANNEL, "make the page look right")
    await slack.send_event(event)
    await held.arrived()
    later = png(3, 1)
    shot = slack.add_file("after.png", later, mimetype="image/png", filetype="png")
    await slack.send_event(slack.user_message(CHANNEL, "it should look like this", thread_ts=event["ts"],
                                              files=[shot]))
    async with asyncio.timeout(240):
        while not slack.calls("reactions.add", name="eyes"):  # the words reached the run
            await asyncio.sleep(0.1)
    held.release()
    done = await posted(slack, event["ts"], "Done")
    heard = [r for r in fake_model.message_requests if later in images_in(r)]
    assert heard and all(not JUDGE(r.body) for r in heard)
    # the thread quotes the person's own words, not the file list the bot added for the model
    assert "“it should look like this”" in json.dumps(done.body, ensure_ascii=False)
    assert ".flower/inbox" not in json.dumps([c.body for c in slack.calls("chat.postMessage")], ensure_ascii=False)


async def test_a_session_with_an_image_resumes_through_the_real_cli_after_a_restart(make_bot, slack_env, fake_model):
    slack = slack_env
    bot = await make_bot(OPTIONS)
    held = hold()
    fake_model.rule(tool_use("Bash", {"command": "echo working"}), text("worked", fault=held), when=WORKER)
    script(fake_model, command="echo resumed")
    shot = slack.add_file("screen.png", SCREEN, mimetype="image/png", filetype="png")
    event = slack.mention(CHANNEL, "fix the screen", files=[shot])
    await slack.send_event(event)
    await held.arrived()
    await bot.close()  # the coordinator's session, image and all, is in its transcript
    held.release()
    asked = len(fake_model.message_requests)
    await make_bot(OPTIONS)
    await posted(slack, event["ts"], "Done")
    after = [r for r in fake_model.message_requests[asked:] if COORDINATOR(r.body)]
    assert after, "the resumed coordinator never reached the model"
    shown = json.dumps(after[0].body, ensure_ascii=False)
    assert SCREEN in images_in(after[0]) or ".flower/inbox/1-screen.png" in shown  # whole, or named: never cut


async def test_outbox_names_that_are_no_utf8_or_break_lines_are_posted_once_and_said(make_bot, slack_env, fake_model):
    """A name with a byte that is no UTF-8 is a lone surrogate in Python, which no UTF-8 file or
    database takes: the record of what was posted could not be written, so the summary named no
    file, the refusals were never said and the file was posted again at every ending; a line break
    in a name wrote a line of its own in the note."""
    slack = slack_env
    bot = await make_bot(OPTIONS)
    chart, empty, forged = (f"\"$(printf '.flower/outbox/{name}')\""  # printf makes the bytes: \377 is no UTF-8
                            for name in ("chart\\377.csv", "empty\\377.csv", "x\\n• `secret.env` was posted.csv"))
    script(fake_model, command=f"mkdir -p .flower/outbox && printf 'a,b\\n' > {chart} && : > {empty} && : > {forged}")
    event = slack.mention(CHANNEL, "make me a chart")
    await slack.send_event(event)
    done = await posted(slack, event["ts"], "Done")
    await marked_done(bot, ThreadKey("T0001", CHANNEL, event["ts"]))
    assert slack.uploads(CHANNEL, event["ts"]) == [("chart.csv", b"a,b\n")]
    assert "chart.csv" in json.dumps(done.body, ensure_ascii=False)
    note = (await posted(slack, event["ts"], "Not posted from the outbox")).body["text"]
    assert "empty.csv" in note and "\n• `secret.env`" not in note
    mark = slack.mark()
    await slack.send_event(slack.user_message(CHANNEL, "once more", thread_ts=event["ts"]))
    await posted(slack, event["ts"], "Done", after=mark)
    await marked_done(bot, ThreadKey("T0001", CHANNEL, event["ts"]))
    assert slack.uploads(CHANNEL, event["ts"]) == [("chart.csv", b"a,b\n")]  # unchanged: not posted again

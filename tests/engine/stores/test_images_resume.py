"""Images in a transcript on resume: stored like any entry, and every shaping pass keeps an image
block whole (valid base64, the same bytes) or replaces the whole block by a note naming its file;
none ever cuts one in half.

The transcript is built so that every pass has something to do around the images: a person's
prompt with a labelled and an unlabelled image, a Read of an image file with long text beside it
(the spill), stale glances (the expiry), a command run twice, a written file read back, todo
lists, thinking, an API error, denied calls and an interrupted call that had shown an image.
"""

from __future__ import annotations

import base64
import copy
import os
from pathlib import Path
from typing import Any

import pytest

from engine.lang import speaking
from engine.authoring import EphemeralPolicy, PrunePolicy, TrimPolicy
from engine._resume.old_images import drop_old_images, image_label_name
from engine._resume.passes import PRUNING
from engine._resume.shaped import ShapedStore
from engine._stores.sqlite import SqliteSessionStore

from tests.engine.stores.shapes import Transcript, bash

BIG = 3 * 1024 * 1024  # bytes: a 4 MB base64 string, far over every text threshold


def _image(seed: int, size: int = BIG) -> dict[str, Any]:
    data = bytes([seed]) * 16 + os.urandom(size)
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                        "data": base64.b64encode(data).decode("ascii")}}


def transcript() -> tuple[list[dict[str, Any]], list[str]]:
    """The entries, and the base64 of every image in them."""
    shot, bare, read, interrupted = _image(1), _image(2), _image(3), _image(4, 4096)
    t = Transcript("placeholder")
    t.entries[0]["message"]["content"] = [
        {"type": "text", "text": "fix what these show"},
        {"type": "text", "text": "Image: .flower/inbox/1-shot.png"}, shot,
        bare,  # an image with no label before it
    ]
    t.think("let me look " * 50)
    t.turn(("Read", {"file_path": "/ws/diagram.png"}, [{"type": "text", "text": "diagram " * 800}, read]))
    t.turn(bash("git status", "On branch main\nnothing to commit"))
    t.turn(bash("pytest -q", "F" * 3000))
    t.turn(("Write", {"file_path": "/ws/a.py", "content": "x = 1\n" * 200}, "File created"))
    t.turn(("Read", {"file_path": "/ws/a.py"}, "x = 1\n" * 200))
    t.turn(("TodoWrite", {"todos": [{"content": "one", "status": "pending"}]}, "ok"))
    t.turn(("TodoWrite", {"todos": [{"content": "one", "status": "completed"}]}, "ok"))
    denied = {"toolDenialKind": "permission-rule"}
    t.turn(bash("rm -rf /", "PreToolUse:Bash hook error: no"), is_error=True, extra=denied)
    t.turn(bash("rm -rf /x", "PreToolUse:Bash hook error: no"), is_error=True, extra=denied)
    t.turn(("Read", {"file_path": "/ws/live.png"}, [interrupted]), is_error=True,
           extra={"toolDenialKind": "interrupted"})
    t.turn(bash("pytest -q", "." * 3000))
    error = t.say("API Error: overloaded")
    error.update(isApiErrorMessage=True, error="overloaded")
    error["message"]["model"] = "<synthetic>"
    t.user("go on")
    t.say("done")
    datas = [b["source"]["data"] for b in (shot, bare, read, interrupted)]
    return t.entries, datas


def _strings(value: Any, path: tuple = ()):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, (*path, value, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, (*path, value, i))


def assert_whole_or_gone(entries: list[dict[str, Any]], datas: list[str]) -> list[str]:
    """Every string that holds a piece of an image's base64 is that whole base64, in an image
    block's source, and decodes to the same bytes; returns the datas still present."""
    present = []
    for path, s in _strings(entries):
        for data in datas:
            if data[:64] in s or data[-64:] in s:
                assert s == data, f"an image's base64 was cut: {len(s)} of {len(data)} characters kept"
                source, block = path[-2], path[-4]
                assert path[-1] == "data" and source.get("type") == "base64" and block.get("type") == "image"
                assert base64.b64decode(s, validate=True) == base64.b64decode(data)
                present.append(data)
    return present


def _store(tmp_path: Path, passes, **policy: Any) -> ShapedStore:
    trim = TrimPolicy(keep_recent=policy.pop("keep_recent", 1), min_chars=200)
    return ShapedStore(SqliteSessionStore(tmp_path / "s.db"), passes, tmp_path,
                       trim, EphemeralPolicy(keep_recent=0), PrunePolicy(keep_denials=1))


def _by_name(name: str):
    return next(p for p in PRUNING if p.name == name)


@pytest.mark.parametrize("name", [p.name for p in PRUNING])
def test_each_pass_keeps_an_image_whole_or_replaces_the_whole_block(tmp_path, name):
    entries, datas = transcript()
    passes = [_by_name("spill_folder"), _by_name(name)] if name.startswith("spill_") else [_by_name(name)]
    store = _store(tmp_path, passes)
    shaped = store.shape(copy.deepcopy(entries))
    present = assert_whole_or_gone(shaped, datas)
    if name == "images":
        assert present == []  # all four were before the window
    elif name == "prune":
        assert present == datas[:3]  # the interrupted result's whole content became the neutral note
    else:
        assert present == datas  # a pass about text leaves images exactly as they were
    store.close()


def test_all_passes_together_leave_notes_that_name_the_files(tmp_path):
    entries, datas = transcript()
    store = _store(tmp_path, PRUNING)
    with speaking("en"):
        shaped = store.shape(copy.deepcopy(entries))
    assert assert_whole_or_gone(shaped, datas) == []
    texts = [s for _, s in _strings(shaped)]
    assert "[The image .flower/inbox/1-shot.png was here; left out on resume: Read that file to see it again]" in texts
    assert "[The image /ws/diagram.png was here; left out on resume: Read that file to see it again]" in texts
    assert any(s.startswith("[An image was here; left out on resume.") and ".flower/inbox/" in s for s in texts)
    assert "Image: .flower/inbox/1-shot.png" in texts  # the label stays beside its note
    assert store.last_report["images"] == 4 and store.last_report["image_chars"] > 3 * 4_000_000
    assert "old images left out" in store.trim_report()
    store.close()


def test_images_inside_the_window_stay(tmp_path):
    entries, datas = transcript()
    store = _store(tmp_path, [_by_name("images")], keep_recent=100)
    assert assert_whole_or_gone(store.shape(copy.deepcopy(entries)), datas) == datas
    store.close()


def test_the_label_is_read_in_either_language():
    assert image_label_name("Image: .flower/inbox/1-shot.png") == ".flower/inbox/1-shot.png"
    assert image_label_name("图片:.flower/inbox/1-截图.png") == ".flower/inbox/1-截图.png"
    assert image_label_name("Image: ") is None and image_label_name("look at this") is None
    assert image_label_name(None) is None


def test_a_zh_run_leaves_zh_notes():
    t = Transcript("x")
    t.entries[0]["message"]["content"] = [{"type": "text", "text": "图片:.flower/inbox/1-截图.png"}, _image(9, 64)]
    with speaking("zh"):
        report = drop_old_images(t.entries, 0)
    assert report["images"] == 1
    note = "[这里原有图片 .flower/inbox/1-截图.png,恢复会话时省略了:需要时用 Read 重新打开这个文件]"
    assert t.entries[0]["message"]["content"][1] == {"type": "text", "text": note}


async def test_a_transcript_with_a_big_image_is_stored_byte_for_byte(backend, tmp_path):
    entries, datas = transcript()
    store = backend.raw()
    key = {"project_key": "p", "session_id": "s-images"}
    try:
        await store.append(key, copy.deepcopy(entries))
        loaded = await store.load(key)
    finally:
        close = getattr(store, "aclose", None)
        if close is not None:
            await close()
        else:
            store.close()
    assert loaded == entries
    assert assert_whole_or_gone(loaded, datas) == datas

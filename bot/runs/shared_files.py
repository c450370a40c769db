"""Files with a request: what people share goes into the thread's inbox, what its run leaves in
the outbox comes back to the thread.

Both live in the thread's workbench (``.flower``, or ``.flower-repo`` beside a bound thread's
worktree: outside any branch). A shared image reaches the models as an image (``engine.Image``,
fitted to the API's limits); every file is named in the request's words with the path the run
opens it by, so the agent reads logs and data with its tools. What is refused is said in the
thread with the reason. The outbox is uploaded when a request ends, each file once (the keys of
what was posted are kept in the run folder, which no run can reach).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.thread import ThreadKey, run_dir
from bot.outbound.files_in import Refused, TakenFile, refusal_text, take_files
from bot.outbound.files_out import skipped_text, upload_outbox
from bot.repos.bindings import Bindings
from bot.repos.thread_worktree import seen_from_the_run, thread_workbench
from bot.settings.config import Config
from engine import Image, ImageRefused, load_image
from engine.host import file_work, write_json_atomic

__all__ = ["Shared", "own_words", "post_outbox", "take_shared"]

UPLOADED_FILE = "uploaded.json"  # in run_dir: the keys of the outbox files already posted

_WORDS = {  # the models' language: the request's words name the files
    "en": {"head": "Files shared with this message (open them with your tools):",
           "line": "- {path} ({size})", "image": "- {path} ({size}, an image: you see it here too)",
           "resized": "- {path} ({size}, an image: you see it here too, made smaller to fit; the file is whole)"},
    "zh": {"head": "这条消息附带的文件（用工具打开）：",
           "line": "- {path}（{size}）", "image": "- {path}（{size}，图片：这里也能看到）",
           "resized": "- {path}（{size}，图片：这里也能看到，已缩小以适应限制；文件本身完整）"},
}


@dataclass(frozen=True)
class Shared:
    """A message's files once taken: ``words`` to add to its text, ``images`` for the models,
    ``refused`` to say in the thread."""

    words: str = ""
    images: tuple[Image, ...] = ()
    refused: tuple[Refused, ...] = ()

    @property
    def note(self) -> str:
        """What the thread is told about the refused files ("" when none was)."""
        return refusal_text(list(self.refused))


def own_words(said: str) -> str:
    """``said`` as the thread quotes it: without the file list ``take_shared`` added (the files'
    names alone when the person wrote nothing with them)."""
    for words in _WORDS.values():
        before, head, listing = said.partition(words["head"])
        if head:
            names = [line.split(" ", 2)[1].rsplit("/", 1)[-1] for line in listing.strip().splitlines()
                     if line.startswith("- ") and " " in line[2:]]
            return before.strip() or ", ".join(names)
    return said


def _size(n: int) -> str:
    return f"{n / 1024:.0f} KB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MB"


def _workbench(config: Config, key: ThreadKey, ws: Path) -> Path:
    bound = Bindings(config.home).get(key.channel) is not None
    return thread_workbench(ws, channel_bound=bound)


async def take_shared(client: AsyncWebClient, config: Config, key: ThreadKey, ws: Path,
                      files: Sequence[dict]) -> Shared:
    """Save ``files`` (a message event's) into the thread's inbox and say how the run sees them."""
    if not files:
        return Shared()
    workbench = await file_work(_workbench, config, key, ws, what="finding the thread's workbench")
    taken = await take_files(client, config, list(files), ws, start=1, workbench=workbench.name)
    refused, images, lines = list(taken.refused), [], []
    words = _WORDS.get(config.language, _WORDS["en"])
    for file in taken.files:
        path = seen_from_the_run(ws, file.absolute)
        image = await _image(file, path, ws, refused) if file.is_image else None
        if image is not None:
            images.append(image)
        shown = "line" if image is None else "image" if len(image.data) == file.size else "resized"
        lines.append(words[shown].format(path=path, size=_size(file.size)))
    said = "\n\n" + "\n".join([words["head"], *lines]) if lines else ""
    return Shared(said, tuple(images), tuple(refused))


async def _image(file: TakenFile, path: str, ws: Path, refused: list[Refused]) -> Image | None:
    """The image the models see, or None (said as refused: the file stays for the agent's tools).
    Read beneath the thread's folder: a running agent may have swapped the inbox for a link since."""
    try:
        return await file_work(load_image, file.absolute, name=path, anchor=ws, what=f"reading the shared image {path}")
    except ImageRefused as exc:
        refused.append(Refused(file.name, str(exc)))
        return None


async def post_outbox(client: AsyncWebClient, config: Config, key: ThreadKey, ws: Path) -> tuple[list[str], str]:
    """Upload the run's new outbox files to the thread: their names (for the final answer), and
    what the thread is told about the files not posted ("" when none)."""
    workbench = await file_work(_workbench, config, key, ws, what="finding the thread's workbench")
    kept = run_dir(ws) / UPLOADED_FILE
    try:
        already = set(json.loads(kept.read_text(encoding="utf-8")))
    except (FileNotFoundError, ValueError):  # none posted yet (or a record from a bad write: post again)
        already = set()
    uploaded = await upload_outbox(client, config, ws, key.channel, key.thread_ts, already=already,
                                   workbench=workbench.name)
    if uploaded.keys != already:
        await asyncio.to_thread(write_json_atomic, kept, sorted(uploaded.keys))
    return list(uploaded.names), skipped_text(uploaded.skipped) if uploaded.skipped else ""

"""The fake's memory of conversations: messages, threads, reactions, uploads and DMs."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from urllib.parse import quote

from bot.testing.workspace import Channel, Workspace


@dataclass
class Message:
    """One message as Slack stores it; `to_api()` is what the Web API and events show."""

    channel: str
    ts: str
    text: str = ""
    user: str | None = None
    bot_id: str | None = None
    app_id: str | None = None
    blocks: list | None = None
    thread_ts: str | None = None
    subtype: str | None = None
    files: list | None = None
    metadata: dict | None = None
    edited: dict | None = None
    deleted: bool = False
    reactions: dict[str, list[str]] = field(default_factory=dict)
    reply_broadcast: bool = False

    @property
    def is_reply(self) -> bool:
        """True for a reply inside a thread (not the thread's parent)."""
        return self.thread_ts is not None and self.thread_ts != self.ts

    def to_api(self, *, replies: list[Message] | None = None) -> dict:
        """The message object; a thread parent given its `replies` carries reply_count etc."""
        data: dict = {"type": "message", "ts": self.ts, "text": self.text}
        for key in ("user", "bot_id", "app_id", "subtype", "thread_ts", "blocks", "files", "metadata", "edited"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        if self.reactions:
            data["reactions"] = [
                {"name": name, "users": list(users), "count": len(users)} for name, users in self.reactions.items()
            ]
        if replies:
            data["thread_ts"] = self.ts
            data["reply_count"] = len(replies)
            data["reply_users"] = sorted({r.user or r.bot_id or "" for r in replies})
            data["reply_users_count"] = len(data["reply_users"])
            data["latest_reply"] = replies[-1].ts
        return data


NO_FILE_HOST = "https://files.fake-slack.invalid"  # where file URLs point before the fake listens


@dataclass
class Upload:
    """A file the fake holds: uploaded by the app (files.getUploadURLExternal flow, `by_bot`) or
    shared by a person (`add_file`, `file_share`), downloadable from `url_base` with the bot token.

    `declared_size` is the size Slack states when it differs from the bytes (a client that lied);
    `file_access` "check_file_info" makes events carry only a stub (Slack Connect)."""

    id: str
    filename: str
    length: int
    content: bytes | None = None
    title: str | None = None
    channel: str | None = None
    thread_ts: str | None = None
    mimetype: str = "text/plain"
    filetype: str = "text"
    declared_size: int | None = None
    file_access: str | None = None
    by_bot: bool = False
    url_base: str = NO_FILE_HOST
    team: str = "T0001"

    @property
    def path(self) -> str:
        """The URL path of its download: `/files-pri/<team>-<id>/download/<name>`, as Slack's."""
        return f"/files-pri/{self.team}-{self.id}/download/{quote(self.filename, safe='')}"

    def to_api(self) -> dict:
        """The full `file` object (files.info, files.completeUploadExternal, file_share messages)."""
        size = self.declared_size if self.declared_size is not None else (
            len(self.content) if self.content is not None else self.length)
        return {
            "id": self.id,
            "name": self.filename,
            "title": self.title or self.filename,
            "mimetype": self.mimetype,
            "filetype": self.filetype,
            "size": size,
            "mode": "hosted",
            "url_private": f"{self.url_base}/files-pri/{self.team}-{self.id}/{quote(self.filename, safe='')}",
            "url_private_download": f"{self.url_base}{self.path}",
        }

    def to_event(self) -> dict:
        """The object a message event carries: the full one, or Slack Connect's stub without a URL."""
        if self.file_access == "check_file_info":
            return {"id": self.id, "mode": "file_access", "file_access": "check_file_info"}
        return self.to_api()


class MessageStore:
    """Every message the fake knows of, by channel, in ts order (ts strings sort like numbers)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._messages: dict[tuple[str, str], Message] = {}
        self._dms: dict[str, Channel] = {}
        self.uploads: dict[str, Upload] = {}
        self.home_views: dict[str, dict] = {}  # user -> the App Home view last published for them
        self.files_origin = NO_FILE_HOST  # where file downloads are served: the fake's own origin once started
        self._last_us = 0
        self._ids = 0

    def next_ts(self) -> str:
        """A fresh message ts: wall-clock microseconds, strictly increasing, "1700000000.000100" style."""
        self._last_us = max(int(time.time() * 1_000_000), self._last_us + 100)
        return f"{self._last_us // 1_000_000}.{self._last_us % 1_000_000:06d}"

    def next_id(self, prefix: str) -> str:
        """A fresh Slack-style id (`F`..., `V`..., `Ev`...) unique within this fake."""
        self._ids += 1
        return f"{prefix}0{self._ids:08d}"

    def new_file(self, filename: str, length: int, content: bytes | None = None, **fields: object) -> Upload:
        """A new file (id `F…`) kept in `uploads`, downloadable from the fake once it listens."""
        upload = Upload(self.next_id("F"), filename, length, content, url_base=self.files_origin,
                        team=self.workspace.team_id, **fields)  # type: ignore[arg-type]
        self.uploads[upload.id] = upload
        return upload

    def channel(self, ref: str) -> Channel | None:
        """A channel by id or name; a user id means the DM with that user (opened on demand)."""
        found = self.workspace.channel(ref)
        if found is not None:
            return found
        dm = next((c for c in self._dms.values() if c.id == ref), None)
        if dm is not None:
            return dm
        return self.open_dm(ref) if self.workspace.user(ref) is not None else None

    def open_dm(self, user_id: str) -> Channel:
        """The direct-message channel between the bot and `user_id`."""
        if user_id not in self._dms:
            self._dms[user_id] = Channel(f"D{user_id.removeprefix('U')}", user=user_id)
        return self._dms[user_id]

    def add(self, message: Message) -> Message:
        """Store a new message; a thread_ts naming a reply is moved to that reply's parent, as Slack does."""
        if message.thread_ts is not None:
            parent = self.get(message.channel, message.thread_ts)
            if parent is not None and parent.is_reply:
                message.thread_ts = parent.thread_ts
        self._messages[(message.channel, message.ts)] = message
        return message

    def get(self, channel: str, ts: str) -> Message | None:
        """The live (not deleted) message at `ts` in `channel`, or None."""
        found = self._messages.get((channel, ts))
        return None if found is None or found.deleted else found

    def in_channel(self, channel: str) -> list[Message]:
        """Live messages of a channel, oldest first."""
        return sorted(
            (m for (c, _), m in self._messages.items() if c == channel and not m.deleted), key=lambda m: float(m.ts)
        )

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        """The parent (if known and live) followed by its live replies, oldest first."""
        return [m for m in self.in_channel(channel) if m.ts == thread_ts or m.thread_ts == thread_ts]

    def replies(self, channel: str, parent_ts: str) -> list[Message]:
        """Live replies of a thread parent, oldest first."""
        return [m for m in self.in_channel(channel) if m.is_reply and m.thread_ts == parent_ts]

    def top_level(self, channel: str) -> list[Message]:
        """What conversations.history shows: parents and plain messages, plus broadcast replies."""
        return [m for m in self.in_channel(channel) if not m.is_reply or m.reply_broadcast]

    def to_api(self, message: Message) -> dict:
        """The message object, with thread metadata when it is a parent with replies."""
        replies = None if message.is_reply else self.replies(message.channel, message.ts)
        return message.to_api(replies=replies)

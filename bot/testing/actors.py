"""What people and other apps do in the fake workspace: each builder stores the message and returns its event."""

from __future__ import annotations

from bot.testing import payloads
from bot.testing.errors import FakeSlackError
from bot.testing.messages import Message, MessageStore
from bot.testing.workspace import Channel


class Actors:
    """Builders of realistic events; the messages they describe become part of the fake's history.

    So `conversations.replies` shows a thread as Slack would: the bot's posts and the people's messages.
    """

    def __init__(self, store: MessageStore) -> None:
        self.store = store
        self.workspace = store.workspace

    def _channel(self, ref: str) -> Channel:
        found = self.store.channel(ref)
        if found is None:
            known = ", ".join(f"{c.id} (#{c.name})" for c in self.workspace.channels)
            raise FakeSlackError(f"unknown channel {ref!r}; use one of {known} or configure Workspace(channels=...)")
        return found

    def _user(self, user: str | None) -> str:
        user_id = user or self.workspace.default_user
        if self.workspace.user(user_id) is None:
            known = ", ".join(u.id for u in self.workspace.users)
            raise FakeSlackError(f"unknown user {user_id!r}; use one of {known} or configure Workspace(users=...)")
        return user_id

    def _existing(self, channel: Channel, ts: str) -> Message:
        found = self.store.get(channel.id, ts)
        if found is None:
            raise FakeSlackError(f"no message at ts {ts!r} in {channel.id}; post or inject it first")
        return found

    def _event(self, message: Message, channel: Channel, event_type: str = "message") -> dict:
        kind = "im" if channel.user else "group" if channel.is_private else "channel"
        return payloads.message_event(
            self.workspace, channel=channel.id, ts=message.ts, text=message.text, user=message.user,
            event_type=event_type, thread_ts=message.thread_ts, subtype=message.subtype, bot_id=message.bot_id,
            files=message.files, channel_type=kind,
        )  # fmt: skip

    def _new(
        self, channel: str, text: str, *, user: str | None, thread_ts: str | None, **extra: object
    ) -> tuple[Message, Channel]:
        where = self._channel(channel)
        message = Message(where.id, self.store.next_ts(), text, user, thread_ts=thread_ts, **extra)
        return self.store.add(message), where

    def mention(
        self, channel: str, text: str, *, user: str | None = None, thread_ts: str | None = None,
        files: list[dict] | None = None,
    ) -> dict:  # fmt: skip
        """A person's `app_mention` (top level, or in `thread_ts`); `<@BOT>` is prefixed unless present.

        `files` are file objects from `add_file`, attached to the message as Slack attaches them."""
        tag = f"<@{self.workspace.bot_user_id}>"
        text = text if tag in text else f"{tag} {text}"
        message, where = self._new(channel, text, user=self._user(user), thread_ts=thread_ts, files=files)
        return self._event(message, where, "app_mention")

    def user_message(
        self, channel: str, text: str, *, user: str | None = None, thread_ts: str | None = None,
        files: list[dict] | None = None,
    ) -> dict:  # fmt: skip
        """A person's plain `message` (no subtype), top level or as a reply in `thread_ts`; with
        `files` (from `add_file`) it is a `file_share` message, as Slack sends one."""
        message, where = self._new(channel, text, user=self._user(user), thread_ts=thread_ts, files=files,
                                   subtype="file_share" if files else None)
        return self._event(message, where)

    def thread_mention(self, channel: str, thread_ts: str, text: str, *, user: str | None = None) -> tuple[dict, dict]:
        """A mention inside a thread as Slack delivers it: an `app_mention` AND a `message`, same ts."""
        mention = self.mention(channel, text, user=user, thread_ts=thread_ts)
        where = self._channel(channel)
        return mention, self._event(self._existing(where, mention["ts"]), where)

    def message_changed(self, channel: str, ts: str, text: str) -> dict:
        """An edit of the message at `ts` (a person's or the bot's): `message_changed`, hidden."""
        where = self._channel(channel)
        message = self._existing(where, ts)
        previous = self.store.to_api(message)
        message.text = text
        message.edited = {"user": message.user or message.bot_id, "ts": self.store.next_ts()}
        return self._hidden(where, "message_changed", message=self.store.to_api(message), previous_message=previous)

    def message_deleted(self, channel: str, ts: str) -> dict:
        """A deletion of the message at `ts`: `message_deleted`, hidden, with `deleted_ts`."""
        where = self._channel(channel)
        message = self._existing(where, ts)
        previous = self.store.to_api(message)
        message.deleted = True
        return self._hidden(where, "message_deleted", deleted_ts=ts, previous_message=previous)

    def _hidden(self, where: Channel, subtype: str, **fields) -> dict:
        ts = self.store.next_ts()
        kind = "im" if where.user else "group" if where.is_private else "channel"
        event = {"type": "message", "subtype": subtype, "hidden": True, "channel": where.id, "ts": ts, "event_ts": ts}
        return event | fields | {"channel_type": kind}

    def session_stopped(self, channel: str, thread_ts: str, *, user: str | None = None) -> dict:
        """A person pressing Stop on the thread's agent session: Slack's `agent_session_stopped`
        (Slack changes no status itself; the app stops its work and moves the session on)."""
        where = self._channel(channel)
        self._existing(where, thread_ts)
        return {"type": "agent_session_stopped", "channel": where.id, "thread_ts": thread_ts,
                "user": self._user(user), "event_ts": self.store.next_ts(), "streaming_message_ts": []}

    def home_opened(self, user: str | None = None) -> dict:
        """A person opening the app's Home tab: Slack's `app_home_opened`."""
        return {"type": "app_home_opened", "user": self._user(user), "channel": "D0HOME", "tab": "home",
                "event_ts": self.store.next_ts()}

    def bot_message(self, channel: str, text: str, *, bot_id: str = "B0OTHER", thread_ts: str | None = None) -> dict:
        """Another app's message: `subtype: bot_message` with its `bot_id` and no user."""
        message, where = self._new(channel, text, user=None, thread_ts=thread_ts, bot_id=bot_id, subtype="bot_message")
        return self._event(message, where)

    def bot_mention(self, channel: str, text: str, *, bot_id: str = "B0OTHER", thread_ts: str | None = None) -> dict:
        """Another app mentioning the bot: an `app_mention` with its `bot_id`, `subtype: bot_message`, no user."""
        tag = f"<@{self.workspace.bot_user_id}>"
        message, where = self._new(channel, text if tag in text else f"{tag} {text}", user=None,
                                   thread_ts=thread_ts, bot_id=bot_id, subtype="bot_message")
        return self._event(message, where, "app_mention")

    def own_message(self, channel: str, ts: str) -> dict:
        """The `message` event Slack echoes for the bot's own post at `ts` (user and bot_id are the bot's)."""
        where = self._channel(channel)
        message = self._existing(where, ts)
        if message.bot_id != self.workspace.bot_id:
            raise FakeSlackError(f"the message at {ts} in {where.id} was not posted by the bot; use user_message()")
        return self._event(message, where)

    def file_share(
        self, channel: str, *, user: str | None = None, text: str = "", thread_ts: str | None = None,
        filename: str = "notes.txt", content: bytes = b"hello\n",
    ) -> dict:  # fmt: skip
        """A person's file upload: `subtype: file_share` with a `files` list (the bytes stay in the fake)."""
        upload = self.store.new_file(filename, len(content), content)
        message, where = self._new(
            channel, text, user=self._user(user), thread_ts=thread_ts, subtype="file_share", files=[upload.to_api()]
        )
        upload.channel, upload.thread_ts = where.id, message.thread_ts
        return self._event(message, where)

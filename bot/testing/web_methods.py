"""What each Web API method does to the fake's state, and what it answers (errors raise ApiError)."""

from __future__ import annotations

from typing import Any, Callable

from bot.testing.limits import ApiError, check_message, parse_json_field
from bot.testing.messages import Message, MessageStore
from bot.testing.workspace import Channel

APP_TOKEN_METHODS = {"apps.connections.open"}  # an xapp- token may call only these


class WebMethods:
    """The fake's Web API methods: `call()` returns the response dict or raises ApiError."""

    def __init__(self, store: MessageStore, *, origin: Callable[[], str], socket_url: Callable[[], str]) -> None:
        self.store = store
        self.ws = store.workspace
        self.origin = origin
        self._socket_url = socket_url
        self.ephemerals: list[dict] = []  # chat.postEphemeral messages: seen by one person, never in history
        self.refused_tokens: dict[str, str] = {}  # token -> the error every call with it answers (revoked...)
        self.refused_posts: dict[str, str] = {}  # channel id -> the error chat.postMessage there answers
        self.refused_blocks: set[str] = set()  # block types this workspace's Slack does not take (invalid_blocks)
        self.statuses: dict[tuple[str, str], str] = {}  # (channel, thread_ts) -> the status line shown ("" cleared)
        self.sessions: dict[tuple[str, str], dict] = {}  # (channel, thread_ts) -> {"title", "statuses": [...]}
        self._handlers: dict[str, Callable[[dict], dict]] = {
            "auth.test": self._auth_test,
            "apps.connections.open": lambda a: {"ok": True, "url": self._socket_url()},
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "chat.delete": self._delete,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.getPermalink": self._permalink,
            "reactions.add": self._reaction_add,
            "reactions.remove": self._reaction_remove,
            "assistant.threads.setStatus": self._set_status,
            "agents.sessions.setStatus": self._set_session_status,
            "conversations.replies": self._replies,
            "conversations.history": self._history,
            "conversations.info": lambda a: {"ok": True, "channel": self._channel(a, "channel").to_api()},
            "conversations.open": self._open,
            "users.info": self._user_info,
            "usergroups.users.list": self._usergroup_users,
            "files.getUploadURLExternal": self._upload_url,
            "files.completeUploadExternal": self._complete_upload,
            "files.info": self._file_info,
            "views.open": self._view,
            "views.publish": self._publish,
            "views.update": self._view,
            "views.push": self._view,
        }

    def call(self, method: str, args: dict[str, Any], token: str | None) -> dict:
        """Authenticate `token`, run `method` with `args`; raise ApiError for any refusal."""
        if method not in self._handlers:
            raise ApiError("unknown_method")
        if not token:
            raise ApiError("not_authed")
        if token in self.refused_tokens:
            raise ApiError(self.refused_tokens[token])
        if token not in (self.ws.bot_token, self.ws.app_token):
            raise ApiError("invalid_auth")
        if (token == self.ws.app_token) != (method in APP_TOKEN_METHODS):
            raise ApiError("not_allowed_token_type")
        return self._handlers[method](args)

    # --- lookups -------------------------------------------------------------------------

    def _channel(self, args: dict, key: str) -> Channel:
        found = self.store.channel(str(args.get(key) or ""))
        if found is None:
            raise ApiError("channel_not_found")
        return found

    def _message(self, channel: Channel, ts: object) -> Message:
        found = self.store.get(channel.id, str(ts or ""))
        if found is None:
            raise ApiError("message_not_found")
        return found

    # --- methods ---------------------------------------------------------------------------

    def _auth_test(self, args: dict) -> dict:
        return {
            "ok": True,
            "url": f"https://{self.ws.team_domain}.slack.com/",
            "team": self.ws.team_name,
            "user": self.ws.bot_name,
            "team_id": self.ws.team_id,
            "user_id": self.ws.bot_user_id,
            "bot_id": self.ws.bot_id,
            "is_enterprise_install": False,
        }

    def blocks_arg(self, args: dict) -> list | None:
        """The blocks argument, parsed; blocks without a block_id get one, as Slack assigns them.
        A block of a refused type is ``invalid_blocks``, with Slack's pointer to it."""
        blocks = parse_json_field(args.get("blocks"), name="blocks")
        for n, block in enumerate(blocks if isinstance(blocks, list) else []):
            if isinstance(block, dict) and block.get("type") in self.refused_blocks:
                raise ApiError("invalid_blocks", _said(f"unsupported type: {block['type']} [json-pointer:/blocks/{n}]"))
        if isinstance(blocks, list):
            blocks = [
                b | {"block_id": self.store.next_id("b")} if isinstance(b, dict) and "block_id" not in b else b
                for b in blocks
            ]
        return blocks

    def _post_message(self, args: dict) -> dict:
        channel = self._channel(args, "channel")
        if channel.id in self.refused_posts:
            raise ApiError(self.refused_posts[channel.id])
        blocks = self.blocks_arg(args)
        check_message(args.get("text"), blocks, attachments=args.get("attachments"))
        message = self.store.add(
            Message(
                channel=channel.id,
                ts=self.store.next_ts(),
                text=str(args.get("text") or ""),
                user=self.ws.bot_user_id,
                bot_id=self.ws.bot_id,
                app_id=self.ws.app_id,
                blocks=blocks,
                thread_ts=str(args["thread_ts"]) if args.get("thread_ts") else None,
                metadata=parse_json_field(args.get("metadata"), name="metadata"),
                reply_broadcast=str(args.get("reply_broadcast")).lower() in ("true", "1"),
            )
        )
        if message.thread_ts and (channel.id, message.thread_ts) in self.statuses:
            self.statuses[(channel.id, message.thread_ts)] = ""  # Slack clears the status when the app replies
        return {"ok": True, "channel": channel.id, "ts": message.ts, "message": self.store.to_api(message)}

    def _update(self, args: dict) -> dict:
        channel = self._channel(args, "channel")
        message = self._message(channel, args.get("ts"))
        if message.bot_id != self.ws.bot_id:
            raise ApiError("cant_update_message")
        blocks = self.blocks_arg(args)
        check_message(args.get("text"), blocks if blocks is not None else message.blocks)
        if args.get("text") is not None:
            message.text = str(args["text"])
        if blocks is not None:  # Slack keeps the old blocks unless blocks is given ([] clears them)
            message.blocks = blocks or None
        message.edited = {"user": self.ws.bot_user_id, "ts": self.store.next_ts()}
        return {
            "ok": True,
            "channel": channel.id,
            "ts": message.ts,
            "text": message.text,
            "message": self.store.to_api(message),
        }

    def _delete(self, args: dict) -> dict:
        channel = self._channel(args, "channel")
        message = self._message(channel, args.get("ts"))
        if message.bot_id != self.ws.bot_id:
            raise ApiError("cant_delete_message")
        message.deleted = True
        return {"ok": True, "channel": channel.id, "ts": message.ts}

    def _post_ephemeral(self, args: dict) -> dict:
        channel = self._channel(args, "channel")
        if self.ws.user(str(args.get("user") or "")) is None:
            raise ApiError("user_not_found")
        blocks = parse_json_field(args.get("blocks"), name="blocks")
        check_message(args.get("text"), blocks)
        ts = self.store.next_ts()
        self.ephemerals.append(
            {"channel": channel.id, "user": args["user"], "ts": ts, "text": args.get("text"), "blocks": blocks}
            | ({"thread_ts": args["thread_ts"]} if args.get("thread_ts") else {})
        )
        return {"ok": True, "message_ts": ts}

    def _permalink(self, args: dict) -> dict:
        channel = self._channel(args, "channel")
        message = self._message(channel, args.get("message_ts"))
        link = f"https://{self.ws.team_domain}.slack.com/archives/{channel.id}/p{message.ts.replace('.', '')}"
        if message.is_reply:
            link += f"?thread_ts={message.thread_ts}&cid={channel.id}"
        return {"ok": True, "channel": channel.id, "permalink": link}

    def _reaction_add(self, args: dict) -> dict:
        message = self._message(self._channel(args, "channel"), args.get("timestamp"))
        users = message.reactions.setdefault(str(args.get("name") or ""), [])
        if self.ws.bot_user_id in users:
            raise ApiError("already_reacted")
        users.append(self.ws.bot_user_id)
        return {"ok": True}

    def _reaction_remove(self, args: dict) -> dict:
        message = self._message(self._channel(args, "channel"), args.get("timestamp"))
        users = message.reactions.get(str(args.get("name") or ""), [])
        if self.ws.bot_user_id not in users:
            raise ApiError("no_reaction")
        users.remove(self.ws.bot_user_id)
        message.reactions = {name: who for name, who in message.reactions.items() if who}
        return {"ok": True}

    def _set_status(self, args: dict) -> dict:
        """assistant.threads.setStatus: the "<app> is working…" line under a thread (Slack clears it
        when the app replies there, or after ~2 minutes; the fake keeps the last one set)."""
        channel = self._channel(args, "channel_id")
        thread_ts = str(args.get("thread_ts") or "")
        if self.store.get(channel.id, thread_ts) is None:
            raise ApiError("invalid_thread_ts")
        status, loading = args.get("status"), parse_json_field(args.get("loading_messages"), name="loading_messages")
        if not isinstance(status, str):
            raise ApiError("invalid_arguments", _said("missing required field: status"))
        if loading is not None and (not isinstance(loading, list) or len(loading) > 10):
            raise ApiError("invalid_arguments", _said("loading_messages: no more than 10 items allowed"))
        self.statuses[(channel.id, thread_ts)] = status
        return {"ok": True}

    def _set_session_status(self, args: dict) -> dict:
        """agents.sessions.setStatus: a thread's agent session, created by its first status (with
        its title, 200 characters at most); the fake keeps every status set, in order."""
        channel = self._channel(args, "channel_id")
        thread_ts = str(args.get("thread_ts") or "")
        if not thread_ts:
            raise ApiError("thread_ts_required")
        status, title = args.get("status"), args.get("title")
        if status not in ("processing", "active", "suspended", "closed"):
            raise ApiError("invalid_status")
        if title is not None and (not isinstance(title, str) or len(title) > 200):
            raise ApiError("invalid_arguments", _said("title: no more than 200 characters"))
        session = self.sessions.setdefault((channel.id, thread_ts), {"title": title or "", "statuses": []})
        session["statuses"].append(status)
        return {"ok": True}

    def _replies(self, args: dict) -> dict:
        channel = self._channel(args, "channel")
        thread = self.store.thread(channel.id, str(args.get("ts") or ""))
        if not thread:
            raise ApiError("thread_not_found")
        return _page([self.store.to_api(m) for m in thread], args, default_limit=1000)

    def _history(self, args: dict) -> dict:
        channel = self._channel(args, "channel")
        newest_first = [self.store.to_api(m) for m in reversed(self.store.top_level(channel.id))]
        return _page(newest_first, args, default_limit=100)

    def _open(self, args: dict) -> dict:
        users = [u for u in str(args.get("users") or "").split(",") if u]
        if len(users) != 1 or self.ws.user(users[0]) is None:
            raise ApiError("user_not_found")
        return {"ok": True, "channel": self.store.open_dm(users[0]).to_api()}

    def _user_info(self, args: dict) -> dict:
        user = self.ws.user(str(args.get("user") or ""))
        if user is None:
            raise ApiError("user_not_found")
        return {"ok": True, "user": user.to_api(self.ws.team_id)}

    def _usergroup_users(self, args: dict) -> dict:
        group = next((g for g in self.ws.usergroups if g.id == args.get("usergroup")), None)
        if group is None:
            raise ApiError("no_such_subteam")
        return {"ok": True, "users": list(group.users)}

    def _upload_url(self, args: dict) -> dict:
        if not args.get("filename") or not str(args.get("length") or "").isdigit():
            raise ApiError("invalid_arguments")
        upload = self.store.new_file(str(args["filename"]), int(args["length"]), by_bot=True)
        return {"ok": True, "upload_url": f"{self.origin()}/upload/{upload.id}", "file_id": upload.id}

    def _complete_upload(self, args: dict) -> dict:
        wanted = parse_json_field(args.get("files"), name="files")
        if not isinstance(wanted, list) or not wanted:
            raise ApiError("invalid_arguments")
        uploads = []
        for item in wanted:
            upload = self.store.uploads.get(str(item.get("id")))
            if upload is None or upload.content is None:
                raise ApiError("file_not_found")
            upload.title = item.get("title") or upload.filename
            uploads.append(upload)
        if args.get("channel_id"):
            channel = self._channel(args, "channel_id")
            message = self.store.add(
                Message(
                    channel=channel.id,
                    ts=self.store.next_ts(),
                    text=str(args.get("initial_comment") or ""),
                    user=self.ws.bot_user_id,
                    bot_id=self.ws.bot_id,
                    app_id=self.ws.app_id,
                    thread_ts=str(args["thread_ts"]) if args.get("thread_ts") else None,
                    files=[u.to_api() for u in uploads],
                )
            )
            for upload in uploads:
                upload.channel, upload.thread_ts = channel.id, message.thread_ts
        return {"ok": True, "files": [u.to_api() for u in uploads]}

    def _file_info(self, args: dict) -> dict:
        """files.info: the full file object (how an app resolves Slack Connect's `check_file_info`)."""
        upload = self.store.uploads.get(str(args.get("file") or ""))
        if upload is None or (upload.by_bot and upload.content is None):
            raise ApiError("file_not_found")
        return {"ok": True, "file": upload.to_api(), "comments": [], "response_metadata": {"next_cursor": ""}}

    def _publish(self, args: dict) -> dict:
        """views.publish: the user's App Home tab, kept so a test can read and click it."""
        if not self.ws.user(str(args.get("user_id") or "")):
            raise ApiError("user_not_found")
        got = self._view(args)
        self.store.home_views[str(args["user_id"])] = got["view"]
        return got

    def _view(self, args: dict) -> dict:
        view = parse_json_field(args.get("view"), name="view")
        if not isinstance(view, dict) or len(view.get("blocks") or []) > 100:
            raise ApiError("invalid_arguments")
        return {"ok": True, "view": {"id": self.store.next_id("V"), "team_id": self.ws.team_id, **view}}


def _said(message: str) -> dict:
    """The ``response_metadata`` Slack adds to an ``invalid_arguments`` answer."""
    return {"response_metadata": {"messages": [f"[ERROR] {message}"]}}


def _page(items: list[dict], args: dict, *, default_limit: int) -> dict:
    """One page of `items` by Slack's cursor pagination (`limit`, `cursor` -> `next_cursor`)."""
    cursor = str(args.get("cursor") or "next:0").removeprefix("next:")
    if not cursor.isdigit() or not str(args.get("limit") or default_limit).isdigit():
        raise ApiError("invalid_cursor" if not cursor.isdigit() else "invalid_limit")
    start, limit = int(cursor), int(args.get("limit") or default_limit)
    page = items[start : start + limit]
    more = start + limit < len(items)
    return {
        "ok": True,
        "messages": page,
        "has_more": more,
        "response_metadata": {"next_cursor": f"next:{start + limit}" if more else ""},
    }

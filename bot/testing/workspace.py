"""Who and what the fake Slack knows: the team, the bot, people and channels (configurable)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class User:
    """A workspace member as `users.info` describes it."""

    id: str
    name: str
    real_name: str = ""
    is_bot: bool = False
    bot_id: str | None = None
    tz: str = "UTC"

    def to_api(self, team_id: str) -> dict:
        """The `user` object of `users.info`."""
        real = self.real_name or self.name
        data = {
            "id": self.id,
            "team_id": team_id,
            "name": self.name,
            "real_name": real,
            "deleted": False,
            "is_bot": self.is_bot,
            "is_app_user": False,
            "tz": self.tz,
            "profile": {"real_name": real, "display_name": self.name, "team": team_id},
        }
        if self.bot_id:
            data["profile"]["bot_id"] = self.bot_id
        return data


@dataclass(frozen=True)
class UserGroup:
    """A user group (``S…``, a handle like @devs) and its members, as ``usergroups.users.list`` lists them."""

    id: str
    handle: str
    users: tuple[str, ...] = ()


@dataclass(frozen=True)
class Channel:
    """A conversation: a public or private channel, or a direct message with `user`."""

    id: str
    name: str = ""
    is_private: bool = False
    user: str | None = None  # set for a direct message (an "im")

    def to_api(self) -> dict:
        """The `channel` object of `conversations.info`."""
        if self.user is not None:
            return {"id": self.id, "is_im": True, "user": self.user, "is_open": True}
        return {
            "id": self.id,
            "name": self.name,
            "is_channel": not self.is_private,
            "is_group": self.is_private,
            "is_im": False,
            "is_private": self.is_private,
            "is_archived": False,
            "is_member": True,
        }


def _default_users() -> tuple[User, ...]:
    return (
        User("U0ALICE", "alice", "Alice Example"),
        User("U0BOB", "bob", "Bob Example"),
        User("U0CAROL", "carol", "Carol Example"),
    )


def _default_channels() -> tuple[Channel, ...]:
    return (
        Channel("C0GENERAL", "general"),
        Channel("C0RANDOM", "random"),
        Channel("G0SECRET", "secret", is_private=True),
    )


@dataclass(frozen=True)
class Workspace:
    """The fake's team configuration; every field has a test-friendly default.

    `users` and `channels` exclude the bot itself, which is described by the `bot_*` fields.
    """

    team_id: str = "T0001"
    team_domain: str = "fake-team"
    team_name: str = "Fake Team"
    app_id: str = "A0FLOWER"
    bot_user_id: str = "U0BOT"
    bot_id: str = "B0BOT"
    bot_name: str = "flower"
    bot_token: str = "xoxb-test"
    app_token: str = "xapp-test"
    bot_scopes: str = (
        "app_mentions:read,channels:history,chat:write,files:read,files:write,groups:history,im:history,reactions:write,users:read"
    )
    users: tuple[User, ...] = field(default_factory=_default_users)
    channels: tuple[Channel, ...] = field(default_factory=_default_channels)
    usergroups: tuple[UserGroup, ...] = (UserGroup("S0DEVS", "devs", ("U0BOB", "U0CAROL")),)

    @property
    def bot_user(self) -> User:
        """The bot as a workspace member."""
        return User(self.bot_user_id, self.bot_name, self.bot_name, is_bot=True, bot_id=self.bot_id)

    @property
    def default_user(self) -> str:
        """The person tests speak as when they name nobody: the first configured user."""
        return self.users[0].id

    def user(self, user_id: str) -> User | None:
        """The member with this id (the bot included), or None."""
        if user_id == self.bot_user_id:
            return self.bot_user
        return next((u for u in self.users if u.id == user_id), None)

    def channel(self, ref: str) -> Channel | None:
        """The channel with this id, or this name (with or without `#`), or None."""
        name = ref.removeprefix("#")
        return next((c for c in self.channels if c.id == ref or (c.name and c.name == name)), None)

    def authorizations(self) -> list[dict]:
        """The `authorizations` list Slack puts in every event_callback."""
        return [
            {
                "enterprise_id": None,
                "team_id": self.team_id,
                "user_id": self.bot_user_id,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ]

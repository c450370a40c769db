"""The bot's errors, in one tree under the engine's ``FlowerError``: each message names what was
wrong, the value (masked if secret) and the fix.

    FlowerError (engine)
    ├── ConfigError: a setting at start
    │   └── SlackAuthError: Slack refused a token
    ├── AgentEnvError (also a ValueError): FLOWER_AGENT_ENV
    ├── SandboxUnavailable: bubblewrap or socat missing or unusable
    ├── ThreadError (also a ValueError): an id that cannot name a folder
    ├── SplitError (also a ValueError): text that cannot be split for Slack
    ├── RepoError: git, a binding, a worktree
    │   └── WorktreeChangedError: a worktree's .git no longer leads home
    ├── ForgeError: GitHub or GitLab refused, or is unreachable
    ├── Refusal: a shared file not taken, or an outbox file not posted
    ├── RunFilesRefused: a command stopped by a link or FIFO a run made
    └── StoreError (engine)
        └── StoreVanished: bot.db was removed under the bot
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from engine import FileWorkOverran, FlowerError, StoreError, UnsafePath

__all__ = ["AgentEnvError", "ConfigError", "Doing", "ForgeError", "ForgeErrorKind", "Kind", "Refusal", "RepoError",
           "RunFilesRefused", "SandboxUnavailable", "SlackAuthError", "SplitError", "StoreVanished", "ThreadError",
           "WorktreeChangedError"]


class ConfigError(FlowerError):
    """A setting is missing or malformed; the message is one line: variable, value, fix."""


_TOKEN_FIX = {
    "SLACK_BOT_TOKEN": ("Copy the Bot User OAuth Token (xoxb-…) from your app's \"OAuth & Permissions\" "
                        "page (reinstall the app to the workspace if it was revoked) into SLACK_BOT_TOKEN."),
    "SLACK_APP_TOKEN": ("Generate an app-level token (xapp-…) with the connections:write scope under your "
                        "app's \"Basic Information\" -> \"App-Level Tokens\" and put it in SLACK_APP_TOKEN."),
}


class SlackAuthError(ConfigError):
    """Slack refused one of the bot's tokens: nothing works until a person replaces it.

    A ``ConfigError``: ``flower-bot`` stops with its one-line message and the config exit code.
    """

    def __init__(self, variable: Literal["SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"], code: str) -> None:
        self.variable, self.code = variable, code
        super().__init__(f"Slack refused {variable} ({code}): the token is wrong, revoked or its app was "
                         f"uninstalled. {_TOKEN_FIX[variable]}")


class AgentEnvError(FlowerError, ValueError):
    """``FLOWER_AGENT_ENV`` names something that is not a variable name, or a secret of the bot."""


class SandboxUnavailable(FlowerError):
    """The sandbox cannot run on this machine; the message names the fix."""


class ThreadError(FlowerError, ValueError):
    """A thread id that cannot name a workspace folder safely."""


class SplitError(FlowerError, ValueError):
    """A split was asked for with a limit too small to hold even a fence and one character."""


class RepoError(FlowerError):
    """A repository, URL, branch or worktree that cannot be used; the message names the fix."""


class WorktreeChangedError(RepoError):
    """A thread worktree whose ``.git`` (or folder) no longer leads to its repository.

    ``path`` is the worktree folder, ``repo`` the repository it belongs to.
    """

    def __init__(self, path: Path, repo: Path, detail: str) -> None:
        self.path, self.repo = path, repo
        super().__init__(f"the worktree's .git was changed: {detail}, where it should lead to a worktree "
                         f"of {repo}. The bot runs no git in {path}. Start the thread over with /new: "
                         f"it gets a fresh worktree (this thread's branch stays in {repo}).")


ForgeErrorKind = Literal["no_token", "auth", "forbidden", "not_found", "base_missing", "exists", "refused",
                         "unreachable"]


class ForgeError(FlowerError):
    """A forge call that failed; ``kind`` says which way, the message says what was wrong and the fix.

    The message never holds the token (it is replaced with ``***``), so it may go to Slack and the log.
    """

    def __init__(self, kind: ForgeErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ForgeErrorKind = kind


class Refusal(FlowerError):
    """A file is refused (or left in the outbox) for ``reason``; caught per file by its caller,
    so it never leaves ``files_in`` / ``files_out``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


Doing = Literal["archive", "other"]  # what could not be done (texts.REFUSED)


Kind = Literal["link", "fifo", "slow", "other"]  # what is in the way (texts.REFUSED_WHY)


class RunFilesRefused(FlowerError):
    """``doing`` could not be done: ``entry`` (relative to the thread's folder, "" when unknown) is
    a ``kind`` the bot does not follow."""

    def __init__(self, doing: Doing, entry: str, kind: Kind) -> None:
        self.doing, self.entry, self.kind = doing, entry, kind
        where = repr(entry) if entry else "an entry"
        super().__init__(f"could not {doing}: {where} in the thread's folder is a {kind} a run made, which the "
                         "bot does not follow; remove it, or start a new thread")

    @classmethod
    def of(cls, exc: BaseException) -> RunFilesRefused | None:
        """``exc`` as a refusal to say, when it is one (``UnsafePath`` met outside ``refusing``:
        which entry is unknown); else None."""
        if isinstance(exc, RunFilesRefused):
            return exc
        if isinstance(exc, FileWorkOverran):  # reading the run's files took too long: which file is unknown
            return cls("other", "", "slow")
        return cls("other", "", "other") if isinstance(exc, UnsafePath) else None


class StoreVanished(StoreError):
    """``bot.db`` was deleted, or replaced by another file, after this store opened it.

    Nothing more can be recorded where the next start would find it: the bot must stop.
    """

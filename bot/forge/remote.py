"""Which forge a git remote URL is: GitHub or GitLab (hosted or self-hosted), its host and project path.

``recognise`` is a pure function of the URL and the forge settings: no network, no git. A URL it
does not recognise (another host, a local path, a path it cannot trust) gives None, and the bot
then offers only "Push branch".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

ForgeKind = Literal["github", "gitlab"]
DEFAULT_GITHUB_API = "https://api.github.com"
DEFAULT_GITLAB_URL = "https://gitlab.com"

_NAMES: dict[ForgeKind, str] = {"github": "GitHub", "gitlab": "GitLab"}
_TOKEN_ENVS: dict[ForgeKind, str] = {"github": "GITHUB_TOKEN", "gitlab": "GITLAB_TOKEN"}
_GITHUB_HOSTS = frozenset({"github.com", "www.github.com"})
_GITLAB_HOSTS = frozenset({"gitlab.com"})
# owner, group and project names on both forges: letters, digits, '.', '_', '-'; anything else
# (a '%', a space, a '~') is not a project path we would dare put into an API URL
_PART = re.compile(r"[A-Za-z0-9._-]+")
# scp-like `[user@]host:path`: git reads it so only when no '/' comes before the ':'
_SCP = re.compile(r"(?:[^@/:\s]+@)?(?P<host>[^@/:\s\[\]]+):(?P<path>[^\s]+)")
_SCHEMES = frozenset({"http", "https", "ssh"})


def _mask(secret: str) -> str:
    """``secret`` safe to print: '' when empty, else its first 4 characters (only if long) then '…'."""
    if not secret:
        return "''"
    return repr((secret[:4] if len(secret) >= 16 else "") + "…")


@dataclass(frozen=True)
class ForgeSettings:
    """The forge part of the bot's config: GITHUB_TOKEN, GITHUB_API_URL, GITLAB_TOKEN, GITLAB_URL,
    and the webhooks' secrets (GITHUB_WEBHOOK_SECRET, GITLAB_WEBHOOK_TOKEN; unset: no webhook route).

    ``repr()`` masks the tokens and secrets, so a logged settings object never leaks one.
    """

    github_token: str = ""
    github_api_url: str = DEFAULT_GITHUB_API
    gitlab_token: str = ""
    gitlab_url: str = DEFAULT_GITLAB_URL
    github_webhook_secret: str = ""
    gitlab_webhook_token: str = ""

    def token(self, kind: ForgeKind) -> str:
        """The token for forges of ``kind`` ('' when unset)."""
        return self.github_token if kind == "github" else self.gitlab_token

    def __repr__(self) -> str:
        return (f"ForgeSettings(github_token={_mask(self.github_token)}, github_api_url={self.github_api_url!r}, "
                f"gitlab_token={_mask(self.gitlab_token)}, gitlab_url={self.gitlab_url!r}, "
                f"github_webhook_secret={_mask(self.github_webhook_secret)}, "
                f"gitlab_webhook_token={_mask(self.gitlab_webhook_token)})")


@dataclass(frozen=True)
class ForgeRepo:
    """One project on a forge, as a remote URL names it.

    ``host`` is lower-case without port or user; ``path`` is ``owner/name`` (GitLab: ``group[/sub...]/name``)
    without ``.git``; ``api_url`` is the REST base without a trailing '/' (GitLab: ``<GITLAB_URL>/api/v4``).
    """

    kind: ForgeKind
    host: str
    path: str
    api_url: str

    @property
    def name(self) -> str:
        """'GitHub' or 'GitLab', for messages."""
        return _NAMES[self.kind]

    @property
    def token_env(self) -> str:
        """The setting that holds this forge's token: 'GITHUB_TOKEN' or 'GITLAB_TOKEN'."""
        return _TOKEN_ENVS[self.kind]

    @property
    def web_url(self) -> str:
        """The project's page: ``https://<host>/<path>``."""
        return f"https://{self.host}/{self.path}"

    @property
    def noun(self) -> str:
        """What the forge calls it: 'pull request' (GitHub) or 'merge request' (GitLab)."""
        return "merge request" if self.kind == "gitlab" else "pull request"

    def ref(self, number: int) -> str:
        """How the forge writes a pull request's number: ``#12`` on GitHub, ``!12`` on GitLab."""
        return f"{'!' if self.kind == 'gitlab' else '#'}{number}"


def _host_of(url: str) -> str:
    """The lower-case host of a settings URL ('' when it has none)."""
    try:
        return (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return ""


def _split(url: str) -> tuple[str, str] | None:
    """(host, raw path) of a remote URL in one of the forms git accepts, or None."""
    url = url.strip()
    if "://" in url:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError on a port that is not a number
        except ValueError:
            return None
        if parts.scheme.lower() not in _SCHEMES or parts.query or parts.fragment or not parts.hostname:
            return None
        return parts.hostname.lower(), parts.path
    m = _SCP.fullmatch(url)
    return (m["host"].lower(), m["path"]) if m else None


def _clean_path(raw: str) -> str | None:
    """``raw`` without its leading '/', trailing '/' and '.git'; None when a part is empty, '.', '..' or odd."""
    path = raw.removeprefix("/").removesuffix("/").removesuffix(".git")
    parts = path.split("/")
    if any(not _PART.fullmatch(p) or p in (".", "..") for p in parts):
        return None
    return path


def recognise(url: str, settings: ForgeSettings) -> ForgeRepo | None:
    """The GitHub or GitLab project ``url`` names, or None when it names neither.

    Accepts ``http(s)://[user[:secret]@]host[:port]/path[.git][/]``, ``ssh://[user@]host[:port]/path[.git]``
    and scp-like ``[user@]host:path[.git]``. GitHub is github.com (or www.github.com) and the host of a
    non-default GITHUB_API_URL (GitHub Enterprise), with paths of exactly two parts; GitLab is gitlab.com
    and the host of GITLAB_URL, with paths of two parts or more.
    """
    split = _split(url)
    if split is None:
        return None
    host, raw = split
    path = _clean_path(raw)
    if path is None:
        return None
    depth = path.count("/") + 1
    github_hosts = set(_GITHUB_HOSTS)
    if settings.github_api_url.rstrip("/") != DEFAULT_GITHUB_API:
        github_hosts.add(_host_of(settings.github_api_url))  # GitHub Enterprise: https://ghe.example.com/api/v3
    if host in github_hosts:
        return ForgeRepo("github", host, path, settings.github_api_url.rstrip("/")) if depth == 2 else None
    if host in _GITLAB_HOSTS | {_host_of(settings.gitlab_url)}:
        api = settings.gitlab_url.strip().rstrip("/") + "/api/v4"
        return ForgeRepo("gitlab", host, path, api) if depth >= 2 else None
    return None

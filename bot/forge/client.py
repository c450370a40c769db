"""Pull requests on GitHub and merge requests on GitLab: the client the bot uses, one per repository.

Plain REST on aiohttp (already a dependency through slack-bolt), not githubkit/gidgethub/python-gitlab:
we call six endpoints per forge, want one HTTP stack with our own retry and error wording, and one fake
server for both forges.

``forge_for(repo, token)`` gives a ``Forge`` (``GitHub`` or ``GitLab``); every call on it raises
``ForgeError`` with a ``kind`` the bot can act on and a message a person can act on. The token is
never in a message or a log line.
"""

from __future__ import annotations

from typing import Any

from bot.forge.api import Forge, PullRequest, Retry
from bot.forge.github import GitHub
from bot.forge.gitlab import GitLab
from bot.forge.remote import ForgeRepo

__all__ = ["Forge", "GitHub", "GitLab", "PullRequest", "Retry", "forge_for"]


def forge_for(repo: ForgeRepo, token: str, **options: Any) -> Forge:
    """The client for ``repo``'s forge (``GitHub`` or ``GitLab`` by ``repo.kind``).

    ``options`` go to the constructor (``retry``, ``timeout_s``). An empty token raises
    ``ForgeError("no_token")`` naming the setting and the permissions it needs.
    """
    cls = GitHub if repo.kind == "github" else GitLab
    return cls(repo, token, **options)

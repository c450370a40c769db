"""Forge webhooks: a wake-up for the poll of one pull request, never a source of content.

The bot polls its open pull requests for reviews and CI. A host with a public URL (HTTP mode) may
also have GitHub or GitLab send it webhooks; each one only tells the bot *which* pull request to
poll now rather than at its next turn (a ``Poke``). Nothing in a payload is used beyond that: the
poll reads everything back through the API, so a forged or stale payload can at most cause one
early poll, and even that only past the check below.

Routes (``webhook_app_routes``), each off (404) while its secret is unset:

- ``POST /forge/github``: ``X-Hub-Signature-256`` must be ``sha256=`` and the hex HMAC-SHA256 of
  the raw body with GITHUB_WEBHOOK_SECRET; ``X-GitHub-Event`` names the event.
- ``POST /forge/gitlab``: ``X-Gitlab-Token`` must equal GITLAB_WEBHOOK_TOKEN; ``X-Gitlab-Event``
  names the event.

Answers: 401 "bad signature", 413 over 1 MiB, 400 not JSON, 200 "pong" (GitHub's ping), 202
"ignored" (nothing to poke) or 202 "accepted" (``on_poke`` awaited). ``on_poke`` should only
schedule the poll: the forges give up on a delivery that takes more than about ten seconds.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from bot.forge.remote import ForgeKind

log = logging.getLogger(__name__)

MAX_BODY = 1024 * 1024  # real review/CI payloads are a few KiB; GitHub caps its own at 25 MB
GITHUB_PATH = "/forge/github"
GITLAB_PATH = "/forge/gitlab"
_PR_EVENTS = frozenset({"pull_request", "pull_request_review", "pull_request_review_comment"})


@dataclass(frozen=True)
class Poke:
    """Which pull request to poll now: ``number`` when the event names one, else ``sha``/``branch``."""

    kind: ForgeKind
    path: str  # GitHub `owner/name`, GitLab `group[/sub...]/name`
    number: int | None  # the PR number (GitHub) or MR iid (GitLab)
    sha: str = ""  # the head commit, for check/pipeline events that may name no PR
    branch: str = ""  # the head branch when the payload says it


def verify_github(secret: str, body: bytes, signature: str | None) -> bool:
    """Whether ``signature`` (X-Hub-Signature-256) is ``sha256=<hex HMAC of body with secret>``."""
    if not secret or not signature or not signature.startswith("sha256="):
        return False
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    # compared as bytes: compare_digest raises TypeError on a str that is not ASCII
    return hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace"))


def verify_gitlab(token: str, header: str | None) -> bool:
    """Whether ``header`` (X-Gitlab-Token) is the configured ``token``."""
    if not token or header is None:
        return False
    return hmac.compare_digest(token.encode(), header.encode("utf-8", "replace"))


# The payload is authenticated but its shape is not ours: a field of the wrong type gives no poke,
# never an exception (so never a 500: GitLab turns off a hook that keeps failing).
def _get(payload: Any, *keys: str) -> Any:
    for key in keys:
        payload = payload.get(key) if isinstance(payload, dict) else None
    return payload


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _first_number(pulls: Any) -> int | None:
    """The first pull request's number in a check's ``pull_requests`` (the sha covers any others)."""
    return _int(_get(pulls[0], "number")) if isinstance(pulls, list) and pulls else None


def _poke(kind: ForgeKind, path: Any, number: int | None, sha: Any = "", branch: Any = "") -> Poke | None:
    poke = Poke(kind, _str(path), number, _str(sha), _str(branch))
    return poke if poke.path and (poke.number or poke.sha or poke.branch) else None


def github_poke(event: str, payload: dict) -> Poke | None:
    """The pull request a GitHub event (``X-GitHub-Event``) is about, or None (ping included)."""
    path = _get(payload, "repository", "full_name")
    if event in _PR_EVENTS:
        pr = _get(payload, "pull_request")
        return _poke("github", path, _int(_get(pr, "number")), branch=_get(pr, "head", "ref"))
    if event == "issue_comment":
        if not _get(payload, "issue", "pull_request"):  # a comment on a plain issue
            return None
        return _poke("github", path, _int(_get(payload, "issue", "number")))
    if event == "check_run":
        run = _get(payload, "check_run")
        return _poke("github", path, _first_number(_get(run, "pull_requests")), _get(run, "head_sha"),
                     _get(run, "check_suite", "head_branch"))
    if event == "check_suite":
        suite = _get(payload, "check_suite")
        return _poke("github", path, _first_number(_get(suite, "pull_requests")), _get(suite, "head_sha"),
                     _get(suite, "head_branch"))
    if event == "status":
        branches = _get(payload, "branches")
        branch = _get(branches[0], "name") if isinstance(branches, list) and branches else ""
        return _poke("github", path, None, _get(payload, "sha"), branch)
    return None


def gitlab_poke(event: str, payload: dict) -> Poke | None:
    """The merge request a GitLab event (``X-Gitlab-Event``) is about, or None."""
    path = _get(payload, "project", "path_with_namespace")
    attrs = _get(payload, "object_attributes")
    if event == "Note Hook":
        if _get(attrs, "noteable_type") != "MergeRequest":  # a note on an issue, a commit, a snippet
            return None
        mr = _get(payload, "merge_request")
        return _poke("gitlab", path, _int(_get(mr, "iid")), branch=_get(mr, "source_branch"))
    if event == "Merge Request Hook":
        return _poke("gitlab", path, _int(_get(attrs, "iid")), branch=_get(attrs, "source_branch"))
    if event == "Pipeline Hook":
        return _poke("gitlab", path, _int(_get(payload, "merge_request", "iid")), _get(attrs, "sha"),
                     _get(attrs, "ref"))
    return None


def _text(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=text)


async def _read_capped(request: web.Request) -> bytes | None:
    """The body, or None when it is over MAX_BODY: refused on Content-Length before reading, and
    cut off by the app's client_max_size (1 MiB by default) or by the length check after it."""
    if request.content_length is not None and request.content_length > MAX_BODY:
        return None
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        return None
    return body if len(body) <= MAX_BODY else None


def _refuse(forge: str, request: web.Request) -> web.Response:
    # the remote address only: the secret and the header sent are never logged
    log.warning("forge webhook: bad signature on a %s delivery from %s", forge, request.remote)
    return _text(401, "bad signature")


async def _answer(body: bytes, event: str, poke_of: Callable[[str, dict], Poke | None],
                  on_poke: Callable[[Poke], Awaitable[None]]) -> web.Response:
    """Parse the (already verified) body and poke what it names."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):  # not UTF-8, not JSON, nested past the parser's depth
        payload = None
    if not isinstance(payload, dict):
        return _text(400, "bad json")
    poke = poke_of(event, payload)
    if poke is None:
        return _text(202, "ignored")
    await on_poke(poke)
    return _text(202, "accepted")


def webhook_app_routes(*, github_secret: str, gitlab_token: str,
                       on_poke: Callable[[Poke], Awaitable[None]]) -> list[web.RouteDef]:
    """``POST /forge/github`` and ``POST /forge/gitlab``, calling ``on_poke`` for each verified event
    that names a pull request. A forge whose secret is '' answers 404."""

    async def github(request: web.Request) -> web.Response:
        if not github_secret:
            return _text(404, "not found")
        body = await _read_capped(request)  # the signature covers the body, so read it first
        if body is None:
            return _text(413, "too large")
        if not verify_github(github_secret, body, request.headers.get("X-Hub-Signature-256")):
            return _refuse("GitHub", request)
        event = request.headers.get("X-GitHub-Event", "")
        if event == "ping":  # sent once when the hook is made, to see that it answers
            return _text(200, "pong")
        return await _answer(body, event, github_poke, on_poke)

    async def gitlab(request: web.Request) -> web.Response:
        if not gitlab_token:
            return _text(404, "not found")
        # the token is a header: refuse a stranger before reading any of the body
        if not verify_gitlab(gitlab_token, request.headers.get("X-Gitlab-Token")):
            return _refuse("GitLab", request)
        body = await _read_capped(request)
        if body is None:
            return _text(413, "too large")
        return await _answer(body, request.headers.get("X-Gitlab-Event", ""), gitlab_poke, on_poke)

    return [web.post(GITHUB_PATH, github), web.post(GITLAB_PATH, gitlab)]

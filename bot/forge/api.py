"""What every forge client shares: its values and errors, one aiohttp session, retries, and the wording
of the failures every call can meet (401, 403, 404, unreachable).

``github.py`` and ``gitlab.py`` subclass ``Forge``; ``client.py`` is where the bot imports them from.
"""

from __future__ import annotations

import asyncio
import json as jsonlib
import logging
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Literal, Mapping, TypeVar
from urllib.parse import quote, urlencode

import aiohttp
from multidict import CIMultiDict
from yarl import URL

from bot.errors import ForgeError, ForgeErrorKind
from bot.forge import costs
from bot.forge.markers import Markers
from bot.forge.pages import PER_PAGE, Page, Where, clipped, read_pages
from bot.forge.remote import ForgeRepo
from bot.forge.reviews import Check, Conditional, Remark

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_RETRY_AFTER_S = 30.0
MESSAGE_CHARS = 300  # a forge's own message, as quoted in ours: enough for a validation error, not a page


@dataclass(frozen=True)
class PullRequest:
    """A GitHub pull request or a GitLab merge request, as the bot needs it.

    ``number`` is the PR number (GitLab: the MR's iid); ``url`` its web page; ``head``/``base`` the
    source and target branches; ``sha`` the commit ``head`` is at ("" when the forge did not say).
    """

    number: int
    url: str
    state: Literal["open", "closed", "merged"]
    head: str
    base: str
    draft: bool
    # not compared: a pull request is the same one whichever commit its head is at
    sha: str = field(default="", compare=False)


@dataclass(frozen=True)
class Retry:
    """How often a call that met a connection error, a timeout, a 429 or a 5xx is tried again.

    ``tries`` counts every attempt; the wait starts at ``first_delay_s`` and doubles, except that a
    Retry-After header (seconds) is honoured, capped at 30 s.
    """

    tries: int = 3
    first_delay_s: float = 1.0


@dataclass(frozen=True)
class Reply:
    """One HTTP answer that was not retried: status, JSON body (None when not JSON), headers, and the
    body as text (what a job's log is; "" for an answer from a ``Conditional``)."""

    status: int
    body: Any
    headers: Mapping[str, str]
    reason: str = ""
    text: str = ""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def flatten(value: Any) -> str:
    """A forge's message field as one line: a dict becomes 'key: value; ...', a list 'a; b'."""
    if isinstance(value, dict):
        return "; ".join(f"{k}: {flatten(v)}" if k else flatten(v) for k, v in value.items())
    if isinstance(value, list):
        return "; ".join(flatten(v) for v in value)
    return "" if value is None else str(value).strip()


def _a_list(data: Any) -> list[Any]:
    """A page of a list: a JSON array, else a TypeError (``Forge.read`` words it)."""
    if not isinstance(data, list):
        raise TypeError(f"a page of a list is a JSON array, not {type(data).__name__}")
    return data


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """The Retry-After header in seconds (capped), or None when absent or not a number of seconds."""
    try:
        return min(max(float(headers.get("Retry-After", "")), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        return None


class Forge:
    """One repository on one forge, reached over REST; use ``async with`` or ``await close()``.

    Every call raises ``ForgeError`` on failure (never an aiohttp error). An empty token raises
    ``ForgeError("no_token")`` here, before anything is sent.
    """

    permissions = "{path}"  # what a token needs on {path}, as a person sets it up; set by each forge

    def __init__(self, repo: ForgeRepo, token: str, *, retry: Retry = Retry(), timeout_s: float = 30.0) -> None:
        self.repo = repo
        self.retry = retry
        self.timeout_s = timeout_s
        self._token = token
        self._session: aiohttp.ClientSession | None = None
        self.markers = Markers(token)  # what the bot's comments end with; see bot.forge.markers
        self.budget: tuple[int, int] | None = None  # (requests left, the limit) as the forge last said
        if not token:
            raise ForgeError("no_token", (
                f"{repo.token_env} is not set, so flower cannot open {repo.noun}s on {repo.name}. Set it to "
                f"{self.needs()} in flower's .env and restart flower; Push branch works without it."))

    def needs(self) -> str:
        """The token this forge needs on this repository, for a message's fix."""
        return self.permissions.format(path=self.repo.path)

    # --- the calls, one per forge ---------------------------------------------------------------

    async def check_access(self) -> None:
        """The token works and may push and open pull requests on the repository."""
        raise NotImplementedError

    branches = "{base}/branches"  # where the forge lists a repository's branches, under its API base

    @property
    def _base(self) -> str:
        """The repository's path under the forge's API."""
        raise NotImplementedError

    async def check_base(self, base: str) -> None:
        """``base`` is a branch on the forge, else ``ForgeError("base_missing")``."""
        where = self.branches.format(base=self._base)
        reply = await self.send("check_base", "GET", f"{where}/{quote(base, safe='')}")
        if reply.status == 404:
            raise self.error("base_missing", f"base branch {base!r} does not exist on {self.repo.name} "
                                             f"{self.repo.path}. Bind the channel again with a branch that exists there.")
        if not reply.ok:
            raise self.fail(reply, "read the branches of")

    async def find(self, head: str) -> PullRequest | None:
        """The newest pull request whose source branch is ``head``, in any state, or None."""
        raise NotImplementedError

    async def create(self, *, head: str, base: str, title: str, body: str, draft: bool) -> PullRequest:
        """Open a pull request from ``head`` into ``base``; one already open for ``head`` is kind "exists"."""
        raise NotImplementedError

    async def comment(self, number: int, body: str) -> None:
        """Add ``body`` as a comment on pull request ``number``."""
        raise NotImplementedError

    async def get(self, number: int, cache: Conditional | None = None) -> PullRequest:
        """Pull request ``number`` as it is now."""
        raise NotImplementedError

    # Reading back: every read takes a ``Conditional`` so a poll that finds nothing new is a 304.

    async def remarks(self, number: int, cache: Conditional | None = None) -> list[Remark]:
        """The remarks on pull request ``number`` (the bot's own included), oldest first: every one
        said since the last read with ``cache``, and the newest pages of each kind (``bot.forge.pages``)."""
        raise NotImplementedError

    async def checks(self, number: int, sha: str, cache: Conditional | None = None) -> list[Check]:
        """The checks of commit ``sha``, the head of pull request ``number``; [] when it has none."""
        raise NotImplementedError

    async def may_steer(self, remark: Remark) -> bool:
        """Whether ``remark``'s author has write access to the repository (may steer the bot from there)."""
        raise NotImplementedError

    async def me(self) -> str:
        """The login of the token's own user, or "" when the forge will not say (a GitHub App's token)."""
        raise NotImplementedError

    async def reply(self, number: int, remark: Remark, body: str) -> None:
        """Answer ``remark`` with ``body``: a line remark in its thread, anything else as a comment."""
        raise NotImplementedError

    # --- lifecycle ------------------------------------------------------------------------------

    async def close(self) -> None:
        """Close the HTTP session; idempotent."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> Forge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- HTTP -----------------------------------------------------------------------------------

    def headers(self) -> dict[str, str]:
        """The headers every request carries, the token's included."""
        raise NotImplementedError

    def links(self, headers: Mapping[str, str]) -> tuple[bool, int | None]:
        """(a page after this one is named, the last page's number or None) from a page's headers."""
        raise NotImplementedError

    def order(self, item: Any) -> int:
        """The key a list of remarks is in, of one of its items (the forge's id, which grows)."""
        return int(item["id"])

    async def pages(self, call: str, path: str, number: int, cache: Conditional | None, *, doing: str) -> list[Any]:
        """The items of the list at ``path`` (on pull request ``number``) that one read takes
        (``bot.forge.pages.read_pages``), each page conditional; a page that fails raises as ``fail``."""
        resume = cache.resume if cache is not None else {}

        async def fetch(page: int) -> Page:
            reply = await self.send(call, "GET", path, params={"per_page": str(PER_PAGE), "page": str(page)},
                                    cache=cache, shrink=clipped)
            if not reply.ok:
                raise self.fail(reply, doing, missing=self._missing(number, reply))
            items = self.read(_a_list, reply.body, call)
            keys = self.read(lambda found: (self.order(found[0]), max(map(self.order, found))), items,
                             call) if items else None
            return Page(items, *self.links(reply.headers), keys=keys)

        items, resume[path] = await read_pages(fetch, resume.get(path, Where()))
        return items

    def short_of_requests(self) -> bool:
        """Whether the forge last said the token has less than ``costs.RESERVE`` of its rate limit left."""
        return costs.short(self.budget)

    def scrub(self, text: str) -> str:
        """``text`` with the token replaced by ``***``: every message and log line goes through here."""
        return text.replace(self._token, "***") if self._token else text

    def error(self, kind: ForgeErrorKind, message: str) -> ForgeError:
        """A ``ForgeError`` whose message cannot hold the token."""
        return ForgeError(kind, self.scrub(message))

    def read(self, parse: Callable[[Any], T], data: Any, call: str) -> T:
        """``parse(data)``, or ``ForgeError("refused")`` when the forge's JSON lacks what it needs."""
        try:
            return parse(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            why = self.scrub(f"{type(exc).__name__}: {exc}")[:MESSAGE_CHARS]
            raise self.error("refused", (
                f"{self.repo.name} answered {call} on {self.repo.path} with JSON flower cannot read ({why}). "
                f"Check that {self.repo.api_url} is the {self.repo.name} API.")) from None

    def message_of(self, reply: Reply) -> str:
        """The forge's own words for a failed reply: its JSON ``message``, cut to 300 characters."""
        body = reply.body
        text = flatten(body.get("message")) if isinstance(body, dict) else ""
        return self.scrub(text or reply.reason or "no message")[:MESSAGE_CHARS]

    async def send(self, call: str, method: str, path: str, *, params: Mapping[str, str] | None = None,
                   json: Any = None, cache: Conditional | None = None,
                   shrink: Callable[[Any], Any] | None = None) -> Reply:
        """The reply to ``method path`` (``path`` already URL-quoted), retried per ``self.retry``.

        Connection errors, timeouts, 429, 5xx and rate-limited 403s are retried; when the tries run out
        this raises ``ForgeError("unreachable")``. Any other reply is returned for the caller to read.

        A GET with a ``cache`` sends the ETag it holds for the URL (query included); a 304 comes back as
        a 200 with the JSON and headers kept from before, and a new 200 is kept and sets ``cache.changed``.
        ``shrink`` makes a 200's JSON what is returned and kept (a page of remarks: ``clipped``).
        """
        url = self.repo.api_url + path + (f"?{urlencode(params)}" if params else "")
        kept = cache.answers.get(url) if cache is not None else None
        reply = await self._retried(call, method, url, json, {"If-None-Match": kept[0]} if kept else {})
        if cache is None:
            return reply
        if reply.status == 304 and kept is not None:
            headers = CIMultiDict(kept[2])
            headers.update(reply.headers)  # a 304 need not repeat them all (a Link, say): the kept ones stand in
            return Reply(200, kept[1], headers, reply.reason)
        if reply.status == 200:
            if shrink is not None:
                reply = replace(reply, body=shrink(reply.body), text="")
            cache.changed = True
            etag = reply.headers.get("ETag")
            if etag:
                cache.answers[url] = (etag, reply.body, CIMultiDict(reply.headers))
            else:
                cache.answers.pop(url, None)  # nothing to send back next time
        return reply

    async def _retried(self, call: str, method: str, url: str, json: Any, headers: dict[str, str]) -> Reply:
        """``send``'s tries: the first reply not worth trying again, else ``ForgeError("unreachable")``."""
        if self._session is None:
            self._session = aiohttp.ClientSession(headers=self.headers())
        delay, last = self.retry.first_delay_s, "no attempt made"
        tries = max(1, self.retry.tries)
        for attempt in range(1, tries + 1):
            wait = delay
            try:
                reply = await self._once(method, url, json, headers)
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                last = self.scrub(f"{type(exc).__name__}: {exc}".rstrip(": "))[:MESSAGE_CHARS]
            else:
                if not self._retryable(reply):
                    return reply
                last = f"{reply.status}: {self.message_of(reply)}"
                wait = _retry_after(reply.headers) or delay
            if attempt < tries:
                log.warning("%s %s on %s %s: %s; trying again in %.2f s (attempt %d of %d)",
                            self.repo.name, call, self.repo.path, method, last, wait, attempt + 1, tries)
                await asyncio.sleep(wait)
            delay *= 2
        raise self.error("unreachable", f"could not reach {self.repo.name} at {self.repo.api_url} ({last}) "
                                        f"after {tries} tries. Try again when it answers.")

    async def _once(self, method: str, url: str, json: Any, headers: dict[str, str]) -> Reply:
        assert self._session is not None
        timeout = aiohttp.ClientTimeout(total=self.timeout_s)
        # encoded=True: the path is quoted already, and a branch's '/' must reach the forge as %2F.
        # No redirects: aiohttp would carry PRIVATE-TOKEN to wherever a Location points
        async with self._session.request(method, URL(url, encoded=True), json=json, headers=headers,
                                         timeout=timeout, allow_redirects=False) as resp:
            self.budget = costs.requests_left(resp.headers) or self.budget
            kept, cut = await costs.read_capped(resp.content.iter_chunked(1 << 16), costs.MAX_REPLY_BYTES)
            if cut and resp.content_type != "text/plain":  # a list's page: what is missing is its start
                raise self.error("refused", (
                    f"{self.repo.name} answered {method} {url.removeprefix(self.repo.api_url)} on {self.repo.path} "
                    f"with more than {costs.MAX_REPLY_BYTES / 2 ** 20:.3g} MB, more than flower reads of one answer. "
                    "Remove the flood of comments that makes it so large (someone posted very long ones)."))
            try:
                text = kept.decode(resp.charset or "utf-8", errors="replace")
            except LookupError:  # a charset Python does not know
                text = kept.decode("utf-8", errors="replace")
            try:
                body = jsonlib.loads(text) if text.strip() else None
            except ValueError:
                body = None  # not JSON (a job's log): ``text`` holds it
            return Reply(resp.status, body, resp.headers, resp.reason or "", text)

    @staticmethod
    def _retryable(reply: Reply) -> bool:
        rate_limited = reply.status == 403 and (reply.headers.get("X-RateLimit-Remaining") == "0"
                                                or "Retry-After" in reply.headers)
        return reply.status == 429 or reply.status >= 500 or rate_limited

    def _missing(self, number: int, reply: Reply) -> str:
        """A pull request ``number`` the forge says is not there (for ``fail``'s ``missing``)."""
        return (f"{self.repo.noun} {self.repo.ref(number)} was not found on {self.repo.name} {self.repo.path} "
                f"({reply.status}: {self.message_of(reply)}). Check the number, and that {self.repo.token_env} "
                "can see it.")

    def fail(self, reply: Reply, doing: str, *, missing: str | None = None) -> ForgeError:
        """The error for a reply no call-specific rule took: 401, 403, 404 and the rest.

        ``doing`` completes "<TOKEN> may not <doing> <path>"; ``missing`` is the 404 message when the
        call names something inside the repository (a pull request number), else the repository's.
        """
        said, env, where = self.message_of(reply), self.repo.token_env, self.repo.path
        if reply.status == 401:
            return self.error("auth", f"{self.repo.name} refused {env} ({reply.status}: {said}). "
                                      "Replace it with a valid token and restart flower.")
        if reply.status == 403:
            return self.error("forbidden", f"{env} may not {doing} {where} ({reply.status}: {said}). "
                                           f"Give it {self.needs()}.")
        if reply.status == 404:
            return self.error("not_found", missing or (
                f"{where} was not found on {self.repo.name} with {env}: it does not exist or the token "
                "cannot see it. Give the token access to it."))
        if 300 <= reply.status < 400:
            return self.error("refused", (
                f"{self.repo.name} answered {reply.status} (moved to {self.scrub(reply.headers.get('Location', '?'))}) "
                f"when asked to {doing} {where}. Point the channel at the repository's current URL."))
        return self.error("refused", f"{self.repo.name} refused to {doing} {where} ({reply.status}: {said}). "
                                     "Check the request and the repository's settings there.")

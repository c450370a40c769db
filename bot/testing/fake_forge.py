"""FakeForge: a local GitHub or GitLab REST API for tests, whose branches are real bare repositories."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

from aiohttp import web

from bot.forge.remote import ForgeKind
from bot.testing.forge_github import GitHubApi
from bot.testing.forge_gitlab import GitLabApi, discussion_id
from bot.testing.forge_hosted import Hosted, Paged, Pipeline, Pull, Run, Status, Text
from engine import FlowerError

State = Literal["open", "closed", "merged"]
Access = Literal["write", "read", "none"]
ReviewState = Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED"]
_GITLAB_VERDICTS = {"APPROVED": "approved this merge request", "CHANGES_REQUESTED": "requested changes"}


class FakeForgeError(FlowerError):
    """A test asked the fake forge for something it does not hold (an unknown pull request number)."""


@dataclass(frozen=True)
class Recorded:
    """One request as the fake received it: ``path`` percent-decoded, ``json`` None when the body was not
    JSON; ``status`` is what the fake answered (304 when the client's ETag was current)."""

    method: str
    path: str
    query: dict[str, str]
    json: Any
    headers: dict[str, str]
    status: int


@dataclass
class Fault:
    """A planned answer for the next ``times`` requests matching ``method`` and ``pattern`` (the decoded path)."""

    method: str
    pattern: re.Pattern[str]
    status: int
    times: int
    body: dict | list | None
    headers: dict[str, str] = field(default_factory=dict)


class FakeForge:
    """A fake GitHub (``kind="github"``) or GitLab (``kind="gitlab"``) API on 127.0.0.1 (port 0).

    Use as ``async with FakeForge("github", bare_dir=tmp_path / "bare") as forge:``. Point the bot at
    ``forge.url`` (GitHub: GITHUB_API_URL; GitLab: GITLAB_URL, the fake serves ``/api/v4``). Repositories
    are added with ``add_repo``; their branches are read from ``<bare_dir>/<path>.git`` with real git, so
    a pull request can only be created for a branch that was really pushed there. Every request is in
    ``requests``; ``fail`` plans error answers.

    People's remarks (``review_comment``, ``review``, ``conversation_comment``), checks (``check``,
    ``commit_status``) and who may write (``set_access``) are set up by the test; the token's own user
    is ``flower-bot`` (GitLab id 1), who writes whatever comes in through the API. Every 200 to a GET
    with JSON carries an ETag (a planned ``fail`` answer has none), and a request whose If-None-Match
    is that ETag gets 304 with no body. Lists of remarks come in pages as each forge cuts them
    (``per_page``, ``page``; GitHub's Link header, GitLab's x-next-page and x-total-pages).
    """

    def __init__(self, kind: ForgeKind, *, bare_dir: Path, token: str = "test-forge-token") -> None:
        self.kind: ForgeKind = kind
        self.token = token
        self.url = ""
        self.requests: list[Recorded] = []
        self._faults: list[Fault] = []
        self._hosted = Hosted(Path(bare_dir))
        self._api = GitHubApi(self._hosted) if kind == "github" else GitLabApi(self._hosted)
        self._runner: web.AppRunner | None = None
        self.rate_limit: tuple[int, int] | None = None  # (left, limit): sent on every answer, in the forge's headers

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> FakeForge:
        """Listen on 127.0.0.1 on a free port; idempotent."""
        if self._runner is None:
            app = web.Application()
            app.add_routes([web.route("*", "/{tail:.*}", self._handle)])
            self._runner = web.AppRunner(app, handle_signals=False)
            await self._runner.setup()
            await web.TCPSite(self._runner, "127.0.0.1", 0).start()
            host, port = self._runner.addresses[0][:2]
            self.url = f"http://{host}:{port}"
        return self

    async def close(self) -> None:
        """Stop the server; idempotent."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeForge:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def env(self) -> dict[str, str]:
        """The bot's settings pointing at this fake: the token and the API (GitHub) or base (GitLab) URL."""
        if self.kind == "github":
            return {"GITHUB_TOKEN": self.token, "GITHUB_API_URL": self.url}
        return {"GITLAB_TOKEN": self.token, "GITLAB_URL": self.url}

    # --- what the test sets up ---------------------------------------------------------------

    def add_repo(self, path: str, *, push: bool = True, access_level: int = 40,
                 protected: tuple[str, ...] = ()) -> None:
        """Serve the project ``path`` (``acme/app``); ``push`` (GitHub) / ``access_level`` (GitLab) shape
        its ``permissions``, ``protected`` names branches reported as protected."""
        self._hosted.add(path, push=push, access_level=access_level, protected=protected)

    def fail(self, method: str, path_pattern: str, status: int, *, times: int = 1,
             body: dict | list | None = None, headers: dict | None = None) -> None:
        """The next ``times`` requests of ``method`` whose decoded path fully matches ``path_pattern`` get
        ``status`` with ``body`` (default: the forge's usual shape for that status) and ``headers``."""
        self._faults.append(Fault(method.upper(), re.compile(path_pattern), status, times, body,
                                  {k: str(v) for k, v in (headers or {}).items()}))

    def open_by_hand(self, repo: str, *, head: str, base: str, title: str) -> int:
        """A pull request someone opened on the forge themselves (not through the API); its number."""
        return self._hosted.open_pull(repo, head, base, title, "", False).number

    def set_state(self, number: int, state: State) -> None:
        """Change pull request ``number`` to ``state``, as someone on the forge would."""
        self._pull(number).state = state

    def set_access(self, user: str, access: Access) -> None:
        """What ``user`` may do on every repository: GitHub's permission (a user never set is 404 there),
        GitLab's membership (Developer for write, Reporter for read, none or never set is 404)."""
        if access not in ("write", "read", "none"):
            raise FakeForgeError(f"access {access!r} is not one of 'write', 'read', 'none'")
        self._hosted.access[user] = access

    def user_id(self, login: str) -> int:
        """``login``'s GitLab user id (GitHub's user id), the same every time; flower-bot is 1."""
        return self._hosted.user_id(login)

    def review_comment(self, number: int, author: str, body: str, *, path: str, line: int,
                       reply_to: int | None = None) -> int:
        """``author`` comments on ``path`` line ``line`` (GitLab: a DiffNote), in a new thread or in the
        thread of comment ``reply_to``; the comment's id."""
        pull = self._pull(number)
        opened = pull.note(reply_to) if reply_to is not None else None
        if reply_to is not None and (opened is None or opened.kind != "line"):
            raise FakeForgeError(f"pull request #{number} has no review comment {reply_to} to reply to")
        thread = opened.thread if opened else None
        return self._hosted.add_note(pull, "line", author, body, path=path, line=line, reply_to=thread).id

    def review(self, number: int, author: str, state: ReviewState, body: str = "") -> int:
        """``author`` submits a review; its id. GitLab has no reviews: an approval or a request for
        changes is a system note, and the body a note of its own (a COMMENTED review is only that note)."""
        pull = self._pull(number)
        if self.kind == "github":
            return self._hosted.add_note(pull, "review", author, body, state=state).id
        made = []
        if state in _GITLAB_VERDICTS:
            made.append(self._hosted.add_note(pull, "review", author, _GITLAB_VERDICTS[state]).id)
        if body or not made:
            made.append(self._hosted.add_note(pull, "comment", author, body).id)
        return made[0]

    def conversation_comment(self, number: int, author: str, body: str) -> int:
        """``author`` comments on the pull request's conversation; the comment's id."""
        return self._hosted.add_note(self._pull(number), "comment", author, body).id

    def delete(self, number: int, *notes: int) -> None:
        """Delete ``notes`` (comment or note ids) from pull request ``number``, as their author may: every
        later one moves up the lists."""
        pull = self._pull(number)
        pull.notes = [n for n in pull.notes if n.id not in notes]

    def check(self, sha: str, name: str, conclusion: str | None, *, summary: str = "", text: str = "",
              number: int | None = None) -> None:
        """Check ``name`` of commit ``sha`` (replacing one of that name): ``conclusion`` None while it runs,
        else "success", "failure", "neutral", ...; ``text`` is its log. On GitLab a commit's checks are
        the jobs of one pipeline of merge request ``number`` (by default the one whose head is at ``sha``)."""
        self._hosted.runs.setdefault(sha, {})[name] = Run(self._hosted.next_id(), name, conclusion, summary, text)
        if self.kind == "gitlab" and sha not in self._hosted.pipelines:
            owner = number if number is not None else self._pull_at(sha)
            self._hosted.pipelines[sha] = Pipeline(self._hosted.next_id(), owner)

    def commit_status(self, sha: str, context: str, state: str, *, description: str = "",
                      target_url: str = "") -> None:
        """A GitHub commit status on ``sha`` (pending, success, failure or error), replacing its context's."""
        self._hosted.statuses.setdefault(sha, {})[context] = Status(context, state, description, target_url)

    # --- what the test reads -----------------------------------------------------------------

    def pulls(self) -> list[dict]:
        """Every pull / merge request, oldest first: number, repo, head, base, title, body, draft, state."""
        return [p.as_dict() for p in self._hosted.pulls]

    def comments(self, number: int) -> list[str]:
        """The bodies of the conversation comments on pull request ``number`` (GitHub's issue comments,
        GitLab's notes on no line), oldest first."""
        return [note.body for note in self._pull(number).notes if note.kind == "comment"]

    def discussion_of(self, note: int) -> str:
        """The thread note ``note`` is in, as the client names it in a reply: GitHub's id of the
        thread's first comment, GitLab's discussion id."""
        found = next((n for p in self._hosted.pulls for n in p.notes if n.id == note), None)
        if found is None:
            raise FakeForgeError(f"the fake forge has no comment or note {note}")
        return str(found.thread) if self.kind == "github" else discussion_id(found.thread)

    def replies(self, number: int) -> list[tuple[str, str]]:
        """(thread as the client named it, body) of every reply made through the reply endpoints, oldest first."""
        return list(self._pull(number).replies)

    def head(self, number: int) -> str:
        """The commit pull request ``number``'s head branch points at now in the bare repository."""
        pull = self._pull(number)
        sha = self._hosted.sha_of(pull.repo, pull.head)
        if sha is None:
            raise FakeForgeError(f"the head branch {pull.head!r} of #{number} is not in the bare repository "
                                 f"{pull.repo}; push it first.")
        return sha

    def _pull_at(self, sha: str) -> int:
        for pull in self._hosted.pulls:
            if self._hosted.sha_of(pull.repo, pull.head) == sha:
                return pull.number
        raise FakeForgeError(f"no pull request's head is at {sha}; pass number= to check()")

    def _pull(self, number: int) -> Pull:
        for pull in self._hosted.pulls:
            if pull.number == number:
                return pull
        raise FakeForgeError(f"the fake forge has no pull request #{number}; it has "
                             f"{[p.number for p in self._hosted.pulls]}. Create one through the client first.")

    # --- serving -----------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.Response:
        raw = request.raw_path.split("?", 1)[0]
        body: Any = None
        if request.can_read_body:
            try:
                body = await request.json()
            except ValueError:
                body = None
        path = unquote(raw)
        response = await self._respond(request, raw, path, body)
        if self.rate_limit is not None:
            prefix = "X-" if self.kind == "github" else ""
            response.headers.update({f"{prefix}RateLimit-Remaining": str(self.rate_limit[0]),
                                     f"{prefix}RateLimit-Limit": str(self.rate_limit[1])})
        self.requests.append(Recorded(request.method, path, dict(request.query), body, dict(request.headers),
                                      response.status))
        return response

    async def _respond(self, request: web.Request, raw: str, path: str, body: Any) -> web.Response:
        fault = self._fault(request.method, path)
        if fault is not None:
            return web.json_response(fault.body if fault.body is not None else self._api.status_body(fault.status),
                                     status=fault.status, headers=fault.headers)
        if not self._api.authorised(request.headers, self.token):
            return web.json_response(self._api.status_body(401), status=401)
        segments = [unquote(s) for s in raw.strip("/").split("/")]
        status, answer = await self._api.answer(request.method, segments, dict(request.query), body)
        if isinstance(answer, Text):
            return web.Response(text=answer, status=status, content_type="text/plain")
        headers: dict[str, str] = {}
        if isinstance(answer, Paged):
            headers, answer = self._api.page_headers(request.url, answer), answer.items
        if request.method != "GET" or status != 200:
            return web.json_response(answer, status=status, headers=headers)
        # the ETag is the page's JSON alone and a 304 repeats no other header (HTTP does not require the
        # Link): the harshest a forge may do, so the client must keep a page's headers from its 200
        etag = '"' + hashlib.sha1(json.dumps(answer, sort_keys=True).encode()).hexdigest() + '"'
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        return web.json_response(answer, headers={**headers, "ETag": etag})

    def _fault(self, method: str, path: str) -> Fault | None:
        for fault in self._faults:
            if fault.times > 0 and fault.method == method and fault.pattern.fullmatch(path):
                fault.times -= 1
                return fault
        return None

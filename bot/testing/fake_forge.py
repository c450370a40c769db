"""FakeForge: a local GitHub or GitLab REST API for tests, whose branches are real bare repositories."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

from aiohttp import web

from bot.forge.remote import ForgeKind
from engine import FlowerError
from bot.testing.forge_api import GitHubApi, GitLabApi, Hosted, Pull

State = Literal["open", "closed", "merged"]


class FakeForgeError(FlowerError):
    """A test asked the fake forge for something it does not hold (an unknown pull request number)."""


@dataclass(frozen=True)
class Recorded:
    """One request as the fake received it: ``path`` percent-decoded, ``json`` None when the body was not JSON."""

    method: str
    path: str
    query: dict[str, str]
    json: Any
    headers: dict[str, str]


@dataclass
class Fault:
    """A planned answer for the next ``times`` requests matching ``method`` and ``pattern`` (the decoded path)."""

    method: str
    pattern: re.Pattern[str]
    status: int
    times: int
    body: dict | None
    headers: dict[str, str] = field(default_factory=dict)


class FakeForge:
    """A fake GitHub (``kind="github"``) or GitLab (``kind="gitlab"``) API on 127.0.0.1 (port 0).

    Use as ``async with FakeForge("github", bare_dir=tmp_path / "bare") as forge:``. Point the bot at
    ``forge.url`` (GitHub: GITHUB_API_URL; GitLab: GITLAB_URL, the fake serves ``/api/v4``). Repositories
    are added with ``add_repo``; their branches are read from ``<bare_dir>/<path>.git`` with real git, so
    a pull request can only be created for a branch that was really pushed there. Every request is in
    ``requests``; ``fail`` plans error answers.
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

    def fail(self, method: str, path_pattern: str, status: int, *, times: int = 1, body: dict | None = None,
             headers: dict | None = None) -> None:
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

    # --- what the test reads -----------------------------------------------------------------

    def pulls(self) -> list[dict]:
        """Every pull / merge request, oldest first: number, repo, head, base, title, body, draft, state."""
        return [p.as_dict() for p in self._hosted.pulls]

    def comments(self, number: int) -> list[str]:
        """The comments on pull request ``number``, oldest first."""
        return list(self._pull(number).comments)

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
        self.requests.append(Recorded(request.method, path, dict(request.query), body, dict(request.headers)))
        fault = self._fault(request.method, path)
        if fault is not None:
            return web.json_response(fault.body if fault.body is not None else self._api.status_body(fault.status),
                                     status=fault.status, headers=fault.headers)
        if not self._api.authorised(request.headers, self.token):
            return web.json_response(self._api.status_body(401), status=401)
        segments = [unquote(s) for s in raw.strip("/").split("/")]
        status, answer = await self._api.answer(request.method, segments, dict(request.query), body)
        return web.json_response(answer, status=status)

    def _fault(self, method: str, path: str) -> Fault | None:
        for fault in self._faults:
            if fault.times > 0 and fault.method == method and fault.pattern.fullmatch(path):
                fault.times -= 1
                return fault
        return None

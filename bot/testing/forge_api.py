"""What the fake forge holds (projects, pull requests, comments) and how GitHub and GitLab answer about it.

Answers carry the fields the real APIs send that ``bot.forge`` reads, in their real shapes; branches are
read from bare repositories with real git, so "the branch was pushed" is a fact, not a flag.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

GITHUB_DOCS = "https://docs.github.com/rest"
GITLAB_DRAFT_PREFIXES = ("draft:", "[draft]", "(draft)")  # the title prefixes GitLab reads as a draft
Answer = tuple[int, Any]


@dataclass
class Project:
    """One served repository and the permissions its token has there."""

    path: str
    push: bool
    access_level: int
    protected: tuple[str, ...]


@dataclass
class Pull:
    """One pull / merge request as the fake keeps it."""

    number: int
    repo: str
    head: str
    base: str
    title: str
    body: str
    draft: bool
    state: str = "open"
    comments: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"number": self.number, "repo": self.repo, "head": self.head, "base": self.base,
                "title": self.title, "body": self.body, "draft": self.draft, "state": self.state}


class Hosted:
    """The projects and pull requests of one fake forge, and its branches read from ``bare_dir``."""

    def __init__(self, bare_dir: Path) -> None:
        self.bare_dir = bare_dir
        self.projects: dict[str, Project] = {}
        self.pulls: list[Pull] = []
        self._numbers = itertools.count(1)

    def add(self, path: str, *, push: bool, access_level: int, protected: tuple[str, ...]) -> None:
        self.projects[path] = Project(path, push, access_level, tuple(protected))

    def open_pull(self, repo: str, head: str, base: str, title: str, body: str, draft: bool) -> Pull:
        pull = Pull(next(self._numbers), repo, head, base, title, body, draft)
        self.pulls.append(pull)
        return pull

    def pull(self, repo: str, number: str) -> Pull | None:
        return next((p for p in self.pulls if p.repo == repo and str(p.number) == number), None)

    def newest_first(self, repo: str, head: str) -> list[Pull]:
        return [p for p in reversed(self.pulls) if p.repo == repo and p.head == head]

    async def branch_sha(self, path: str, branch: str) -> str | None:
        """The commit ``refs/heads/<branch>`` points at in ``<bare_dir>/<path>.git``, or None."""
        bare = self.bare_dir / f"{path}.git"
        if not bare.is_dir() or not branch:
            return None
        proc = await asyncio.create_subprocess_exec(
            "git", "--git-dir", str(bare), "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        out, _ = await proc.communicate()
        return (out.decode().strip() or None) if proc.returncode == 0 else None


def _bearer(headers: Mapping[str, str]) -> str:
    scheme, _, value = headers.get("Authorization", "").partition(" ")
    return value.strip() if scheme.lower() in ("bearer", "token") else ""


class GitHubApi:
    """GitHub's REST v3 shapes, served from the API root (``/repos/{owner}/{name}/...``)."""

    def __init__(self, hosted: Hosted) -> None:
        self.hosted = hosted

    @staticmethod
    def authorised(headers: Mapping[str, str], token: str) -> bool:
        return _bearer(headers) == token

    @staticmethod
    def status_body(status: int) -> dict[str, Any]:
        words = {401: "Bad credentials", 403: "Resource not accessible by personal access token",
                 404: "Not Found", 422: "Validation Failed", 429: "API rate limit exceeded"}
        return {"message": words.get(status, f"Server Error {status}"), "documentation_url": GITHUB_DOCS,
                "status": str(status)}

    def _pull_json(self, pull: Pull) -> dict[str, Any]:
        owner = pull.repo.split("/")[0]
        return {"number": pull.number, "html_url": f"https://github.com/{pull.repo}/pull/{pull.number}",
                "state": "open" if pull.state == "open" else "closed",
                "merged_at": "2024-01-01T00:00:00Z" if pull.state == "merged" else None,
                "draft": pull.draft, "title": pull.title, "body": pull.body,
                "head": {"ref": pull.head, "label": f"{owner}:{pull.head}"},
                "base": {"ref": pull.base, "label": f"{owner}:{pull.base}"}}

    async def answer(self, method: str, segments: list[str], query: dict[str, str], body: Any) -> Answer:
        if len(segments) < 3 or segments[0] != "repos":
            return 404, self.status_body(404)
        path, rest = "/".join(segments[1:3]), segments[3:]
        project = self.hosted.projects.get(path)
        if project is None:
            return 404, self.status_body(404)
        route = (method, *rest[:1], *(["*"] * len(rest[1:2])), *rest[2:])
        if route == ("GET",):
            return 200, {"full_name": path, "name": segments[2], "owner": {"login": segments[1]},
                         "default_branch": "main", "html_url": f"https://github.com/{path}",
                         "permissions": {"admin": False, "maintain": False, "push": project.push,
                                         "triage": project.push, "pull": True}}
        if route[:2] == ("GET", "branches") and len(rest) >= 2:
            branch = "/".join(rest[1:])  # GitHub takes a branch's '/' quoted or not
            sha = await self.hosted.branch_sha(path, branch)
            if sha is None:
                return 404, {"message": "Branch not found", "documentation_url": GITHUB_DOCS, "status": "404"}
            return 200, {"name": branch, "commit": {"sha": sha}, "protected": branch in project.protected}
        if route == ("GET", "pulls"):
            return 200, self._list(path, query)
        if route == ("POST", "pulls"):
            return await self._create(project, body if isinstance(body, dict) else {})
        if route == ("GET", "pulls", "*"):
            pull = self.hosted.pull(path, rest[1])
            return (200, self._pull_json(pull)) if pull else (404, self.status_body(404))
        if route == ("POST", "issues", "*", "comments"):
            pull = self.hosted.pull(path, rest[1])
            if pull is None:
                return 404, self.status_body(404)
            pull.comments.append(str((body or {}).get("body", "")))
            return 201, {"id": len(pull.comments), "body": pull.comments[-1]}
        return 404, self.status_body(404)

    def _list(self, path: str, query: dict[str, str]) -> list[dict[str, Any]]:
        owner, _, head = query.get("head", "").rpartition(":")
        if owner and owner != path.split("/")[0]:
            return []
        state = query.get("state", "open")
        found = [p for p in self.hosted.newest_first(path, head)
                 if state == "all" or (p.state == "open") == (state == "open")]
        return [self._pull_json(p) for p in found[: int(query.get("per_page", "30"))]]

    async def _create(self, project: Project, body: dict[str, Any]) -> Answer:
        head, base = str(body.get("head", "")), str(body.get("base", ""))
        invalid = [{"resource": "PullRequest", "field": name, "code": "invalid"}
                   for name, branch in (("head", head), ("base", base))
                   if await self.hosted.branch_sha(project.path, branch) is None]
        if invalid or not body.get("title"):
            errors = invalid or [{"resource": "PullRequest", "field": "title", "code": "missing_field"}]
            return 422, {"message": "Validation Failed", "errors": errors, "documentation_url": GITHUB_DOCS}
        if any(p.state == "open" for p in self.hosted.newest_first(project.path, head)):
            owner = project.path.split("/")[0]
            return 422, {"message": "Validation Failed", "documentation_url": GITHUB_DOCS, "errors": [
                {"resource": "PullRequest", "code": "custom",
                 "message": f"A pull request already exists for {owner}:{head}."}]}
        pull = self.hosted.open_pull(project.path, head, base, str(body["title"]), str(body.get("body") or ""),
                                     bool(body.get("draft", False)))
        return 201, self._pull_json(pull)


class GitLabApi:
    """GitLab's REST v4 shapes, under ``/api/v4/projects/{url-quoted path}/...``."""

    _STATES = {"open": "opened", "closed": "closed", "merged": "merged"}

    def __init__(self, hosted: Hosted) -> None:
        self.hosted = hosted

    @staticmethod
    def authorised(headers: Mapping[str, str], token: str) -> bool:
        return headers.get("PRIVATE-TOKEN", "") == token or _bearer(headers) == token

    @staticmethod
    def status_body(status: int) -> dict[str, Any]:
        words = {401: "401 Unauthorized", 403: "403 Forbidden", 404: "404 Not Found", 409: "409 Conflict",
                 429: "Retry later"}
        return {"message": words.get(status, f"{status} Internal Server Error")}

    def _mr_json(self, pull: Pull) -> dict[str, Any]:
        return {"id": 1000 + pull.number, "iid": pull.number, "state": self._STATES[pull.state],
                "web_url": f"https://gitlab.com/{pull.repo}/-/merge_requests/{pull.number}",
                "title": pull.title, "description": pull.body, "draft": pull.draft,
                "work_in_progress": pull.draft, "source_branch": pull.head, "target_branch": pull.base}

    async def answer(self, method: str, segments: list[str], query: dict[str, str], body: Any) -> Answer:
        # segments were unquoted one by one, so the project id "acme%2Fapp" is one segment "acme/app"
        if len(segments) < 4 or segments[:3] != ["api", "v4", "projects"]:
            return 404, {"message": "404 Not Found"}
        path, rest = segments[3], segments[4:]
        project = self.hosted.projects.get(path)
        if project is None:
            return 404, {"message": "404 Project Not Found"}
        route = (method, *rest[:2], *(["*"] * len(rest[2:3])), *rest[3:]) if rest[:1] == ["repository"] else \
            (method, *rest[:1], *(["*"] * len(rest[1:2])), *rest[2:])
        if route == ("GET",):
            return 200, {"id": 1, "path_with_namespace": path, "default_branch": "main",
                         "web_url": f"https://gitlab.com/{path}",
                         "permissions": {"project_access": {"access_level": project.access_level},
                                         "group_access": None}}
        if route == ("GET", "repository", "branches", "*"):
            sha = await self.hosted.branch_sha(path, rest[2])
            if sha is None:
                return 404, {"message": "404 Branch Not Found"}
            return 200, {"name": rest[2], "commit": {"id": sha}, "protected": rest[2] in project.protected}
        if route == ("GET", "merge_requests"):
            state = query.get("state", "all")
            found = [p for p in self.hosted.newest_first(path, query.get("source_branch", ""))
                     if state == "all" or self._STATES[p.state] == state]
            return 200, [self._mr_json(p) for p in found]
        if route == ("POST", "merge_requests"):
            return await self._create(project, body if isinstance(body, dict) else {})
        if route == ("GET", "merge_requests", "*"):
            pull = self.hosted.pull(path, rest[1])
            return (200, self._mr_json(pull)) if pull else (404, {"message": "404 Not found"})
        if route == ("POST", "merge_requests", "*", "notes"):
            pull = self.hosted.pull(path, rest[1])
            if pull is None:
                return 404, {"message": "404 Not found"}
            pull.comments.append(str((body or {}).get("body", "")))
            return 201, {"id": len(pull.comments), "body": pull.comments[-1]}
        return 404, {"message": "404 Not Found"}

    async def _create(self, project: Project, body: dict[str, Any]) -> Answer:
        head, base = str(body.get("source_branch", "")), str(body.get("target_branch", ""))
        title = str(body.get("title", ""))
        if not (head and base and title):
            return 400, {"error": "source_branch, target_branch, title are missing"}
        for name, branch in (("Source", head), ("Target", base)):
            if await self.hosted.branch_sha(project.path, branch) is None:
                return 422, {"message": [f'{name} branch "{branch}" does not exist']}
        open_one = next((p for p in self.hosted.newest_first(project.path, head) if p.state == "open"), None)
        if open_one is not None:
            return 409, {"message": [f"Another open merge request already exists for this source branch: "
                                     f"!{open_one.number}"]}
        draft = title.lower().startswith(GITLAB_DRAFT_PREFIXES)
        pull = self.hosted.open_pull(project.path, head, base, title, str(body.get("description") or ""), draft)
        return 201, self._mr_json(pull)

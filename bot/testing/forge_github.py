"""The fake forge's GitHub: REST v3 shapes, served from the API root (``/repos/{owner}/{name}/...``).

Answers carry the fields the real API sends that ``bot.forge`` reads, in their real shapes.
"""

from __future__ import annotations

from typing import Any, Mapping

from yarl import URL

from bot.testing.forge_hosted import BOT, Answer, Hosted, Note, Paged, Project, Pull, bearer, paged, shape

GITHUB_DOCS = "https://docs.github.com/rest"


def _stamp(note: Note) -> str:
    return note.created.strftime("%Y-%m-%dT%H:%M:%SZ")


def _page(items: list[Any], query: dict[str, str]) -> Paged:
    return paged(items, query, default=30)  # GitHub's default page is 30 items


class GitHubApi:
    """GitHub's answers about what ``hosted`` holds."""

    def __init__(self, hosted: Hosted) -> None:
        self.hosted = hosted

    @staticmethod
    def authorised(headers: Mapping[str, str], token: str) -> bool:
        return bearer(headers) == token

    @staticmethod
    def page_headers(url: URL, page: Paged) -> dict[str, str]:
        """GitHub's ``Link`` header for ``page`` of the list at ``url``: next and last while pages
        follow, first and prev after the first."""
        rels = ([("next", page.page + 1), ("last", page.pages)] if page.page < page.pages else []) + \
               ([("first", 1), ("prev", page.page - 1)] if page.page > 1 else [])
        links = [f'<{url.update_query(page=str(number))}>; rel="{rel}"' for rel, number in rels]
        return {"Link": ", ".join(links)} if links else {}

    @staticmethod
    def status_body(status: int) -> dict[str, Any]:
        words = {401: "Bad credentials", 403: "Resource not accessible by personal access token",
                 404: "Not Found", 422: "Validation Failed", 429: "API rate limit exceeded"}
        return {"message": words.get(status, f"Server Error {status}"), "documentation_url": GITHUB_DOCS,
                "status": str(status)}

    def _user(self, login: str) -> dict[str, Any]:
        return {"login": login, "id": self.hosted.user_id(login), "type": "User"}

    async def _pull_json(self, pull: Pull) -> dict[str, Any]:
        owner = pull.repo.split("/")[0]
        sha = await self.hosted.branch_sha(pull.repo, pull.head)
        return {"number": pull.number, "html_url": f"https://github.com/{pull.repo}/pull/{pull.number}",
                "state": "open" if pull.state == "open" else "closed",
                "merged_at": "2024-01-01T00:00:00Z" if pull.state == "merged" else None,
                "draft": pull.draft, "title": pull.title, "body": pull.body,
                "head": {"ref": pull.head, "label": f"{owner}:{pull.head}", "sha": sha},
                "base": {"ref": pull.base, "label": f"{owner}:{pull.base}"}}

    async def answer(self, method: str, segments: list[str], query: dict[str, str], body: Any) -> Answer:
        if (method, *segments) == ("GET", "user"):
            return 200, self._user(BOT)
        if len(segments) < 3 or segments[0] != "repos":
            return 404, self.status_body(404)
        path, rest = "/".join(segments[1:3]), segments[3:]
        project = self.hosted.projects.get(path)
        if project is None:
            return 404, self.status_body(404)
        route = shape(method, rest)
        body = body if isinstance(body, dict) else {}
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
            return 200, await self._list(path, query)
        if route == ("POST", "pulls"):
            return await self._create(project, body)
        if route[1:2] == ("commits",) and len(rest) >= 2:
            return self._commit(route, rest[1], path)
        if route == ("GET", "collaborators", "*", "permission"):
            access = self.hosted.access.get(rest[1])
            if access is None:
                return 404, self.status_body(404)
            return 200, {"permission": access, "role_name": access, "user": self._user(rest[1])}
        if route[1:2] in (("pulls",), ("issues",)) and len(rest) >= 2:
            pull = self.hosted.pull(path, rest[1])
            if pull is None:
                return 404, self.status_body(404)
            return await self._on_pull(route, rest, pull, query, body)
        return 404, self.status_body(404)

    async def _on_pull(self, route: tuple[str, ...], rest: list[str], pull: Pull, query: dict[str, str],
                       body: dict[str, Any]) -> Answer:
        if route == ("GET", "pulls", "*"):
            return 200, await self._pull_json(pull)
        if route == ("GET", "pulls", "*", "comments"):
            return 200, _page([self._line_json(pull, n) for n in pull.notes if n.kind == "line"], query)
        if route == ("GET", "pulls", "*", "reviews"):
            return 200, _page([self._review_json(pull, n) for n in pull.notes if n.kind == "review"], query)
        if route == ("GET", "issues", "*", "comments"):
            return 200, _page([self._comment_json(pull, n) for n in pull.notes if n.kind == "comment"], query)
        if route == ("POST", "issues", "*", "comments"):
            note = self.hosted.add_note(pull, "comment", BOT, str(body.get("body", "")))
            return 201, self._comment_json(pull, note)
        if route == ("POST", "pulls", "*", "comments", "*", "replies"):
            opened = pull.note(int(rest[3])) if rest[3].isdigit() else None
            if opened is None or opened.kind != "line":
                return 404, self.status_body(404)
            pull.replies.append((rest[3], str(body.get("body", ""))))
            note = self.hosted.add_note(pull, "line", BOT, pull.replies[-1][1], path=opened.path, line=opened.line,
                                        reply_to=opened.thread)
            return 201, self._line_json(pull, note)
        return 404, self.status_body(404)

    def _line_json(self, pull: Pull, note: Note) -> dict[str, Any]:
        url = f"https://github.com/{pull.repo}/pull/{pull.number}#discussion_r{note.id}"
        found = {"id": note.id, "user": self._user(note.author), "body": note.body, "path": note.path,
                 "line": note.line, "original_line": note.line, "html_url": url, "created_at": _stamp(note),
                 "updated_at": _stamp(note)}
        return {**found, "in_reply_to_id": note.reply_to} if note.reply_to else found

    def _review_json(self, pull: Pull, note: Note) -> dict[str, Any]:
        url = f"https://github.com/{pull.repo}/pull/{pull.number}#pullrequestreview-{note.id}"
        return {"id": note.id, "user": self._user(note.author), "body": note.body, "state": note.state,
                "html_url": url, "submitted_at": _stamp(note)}

    def _comment_json(self, pull: Pull, note: Note) -> dict[str, Any]:
        url = f"https://github.com/{pull.repo}/pull/{pull.number}#issuecomment-{note.id}"
        return {"id": note.id, "user": self._user(note.author), "body": note.body, "html_url": url,
                "created_at": _stamp(note), "updated_at": _stamp(note)}

    def _commit(self, route: tuple[str, ...], sha: str, path: str) -> Answer:
        if route == ("GET", "commits", "*", "check-runs"):
            runs = [{"id": r.id, "name": r.name, "head_sha": sha,
                     "status": "in_progress" if r.conclusion is None else "completed", "conclusion": r.conclusion,
                     "html_url": f"https://github.com/{path}/runs/{r.id}",
                     "output": {"title": r.summary or None, "summary": r.summary or None, "text": r.text or None}}
                    for r in self.hosted.runs.get(sha, {}).values()]
            return 200, {"total_count": len(runs), "check_runs": runs}
        if route == ("GET", "commits", "*", "status"):
            statuses = list(self.hosted.statuses.get(sha, {}).values())
            states = {s.state for s in statuses}
            state = ("failure" if states & {"failure", "error"} else
                     "pending" if not states or "pending" in states else "success")
            return 200, {"state": state, "sha": sha, "total_count": len(statuses),
                         "statuses": [{"context": s.context, "state": s.state, "description": s.description,
                                       "target_url": s.target_url} for s in statuses]}
        return 404, self.status_body(404)

    async def _list(self, path: str, query: dict[str, str]) -> list[dict[str, Any]]:
        owner, _, head = query.get("head", "").rpartition(":")
        if owner and owner != path.split("/")[0]:
            return []
        state = query.get("state", "open")
        found = [p for p in self.hosted.newest_first(path, head)
                 if state == "all" or (p.state == "open") == (state == "open")]
        return [await self._pull_json(p) for p in _page(found, query).items]

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
        return 201, await self._pull_json(pull)

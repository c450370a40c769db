"""The fake forge's GitLab: REST v4 shapes, under ``/api/v4/projects/{url-quoted path}/...``.

Answers carry the fields the real API sends that ``bot.forge`` reads, in their real shapes. A review
is a system note ("approved this merge request"); a commit's checks are the jobs of one pipeline.
"""

from __future__ import annotations

from typing import Any, Mapping

from yarl import URL

from bot.testing.forge_hosted import BOT, Answer, Hosted, Note, Paged, Project, Pull, Run, Text, bearer, paged, shape

GITLAB_DRAFT_PREFIXES = ("draft:", "[draft]", "(draft)")  # the title prefixes GitLab reads as a draft
_LEVELS = {"write": 30, "read": 20}  # Developer, Reporter; "none" is no member


def discussion_id(thread: int) -> str:
    """A discussion's id as GitLab writes one (40 hex digits), made from its first note's id."""
    return format(thread, "040x")


def _stamp(note: Note) -> str:
    return note.created.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _job_status(run: Run) -> str:
    return "running" if run.conclusion is None else ("failed" if run.failed else "success")


def _pipeline_status(runs: list[Run]) -> str:
    statuses = {_job_status(r) for r in runs}
    return "failed" if "failed" in statuses else ("running" if "running" in statuses else "success")


class GitLabApi:
    """GitLab's answers about what ``hosted`` holds."""

    _STATES = {"open": "opened", "closed": "closed", "merged": "merged"}

    def __init__(self, hosted: Hosted) -> None:
        self.hosted = hosted

    @staticmethod
    def authorised(headers: Mapping[str, str], token: str) -> bool:
        return headers.get("PRIVATE-TOKEN", "") == token or bearer(headers) == token

    @staticmethod
    def page_headers(url: URL, page: Paged) -> dict[str, str]:
        """GitLab's pagination headers for ``page`` (``x-next-page`` empty on the last page)."""
        after = str(page.page + 1) if page.page < page.pages else ""
        before = str(page.page - 1) if page.page > 1 else ""
        links = [f'<{url.update_query(page=number)}>; rel="{rel}"'
                 for rel, number in (("next", after), ("prev", before), ("first", "1"), ("last", str(page.pages)))
                 if number]
        return {"x-page": str(page.page), "x-per-page": str(page.per_page), "x-total": str(page.total),
                "x-total-pages": str(page.pages), "x-next-page": after, "x-prev-page": before,
                "Link": ", ".join(links)}

    @staticmethod
    def status_body(status: int) -> dict[str, Any]:
        words = {401: "401 Unauthorized", 403: "403 Forbidden", 404: "404 Not Found", 409: "409 Conflict",
                 429: "Retry later"}
        return {"message": words.get(status, f"{status} Internal Server Error")}

    def _user(self, login: str) -> dict[str, Any]:
        return {"id": self.hosted.user_id(login), "username": login, "name": login, "state": "active"}

    async def _mr_json(self, pull: Pull) -> dict[str, Any]:
        return {"id": 1000 + pull.number, "iid": pull.number, "state": self._STATES[pull.state],
                "web_url": f"https://gitlab.com/{pull.repo}/-/merge_requests/{pull.number}",
                "title": pull.title, "description": pull.body, "draft": pull.draft,
                "work_in_progress": pull.draft, "source_branch": pull.head, "target_branch": pull.base,
                "sha": await self.hosted.branch_sha(pull.repo, pull.head)}

    async def answer(self, method: str, segments: list[str], query: dict[str, str], body: Any) -> Answer:
        if (method, *segments) == ("GET", "api", "v4", "user"):
            return 200, self._user(BOT)
        # segments were unquoted one by one, so the project id "acme%2Fapp" is one segment "acme/app"
        if len(segments) < 4 or segments[:3] != ["api", "v4", "projects"]:
            return 404, {"message": "404 Not Found"}
        path, rest = segments[3], segments[4:]
        project = self.hosted.projects.get(path)
        if project is None:
            return 404, {"message": "404 Project Not Found"}
        route = shape(method, rest, fixed=1 if rest[:1] in (["repository"], ["members"]) else 0)
        body = body if isinstance(body, dict) else {}
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
            return 200, [await self._mr_json(p) for p in found]
        if route == ("POST", "merge_requests"):
            return await self._create(project, body)
        if route == ("GET", "members", "all", "*"):
            login = self.hosted.login_of(int(rest[2])) if rest[2].isdigit() else None
            level = _LEVELS.get(self.hosted.access.get(login or "", "none"))
            if login is None or level is None:
                return 404, {"message": "404 Not found"}
            return 200, {**self._user(login), "access_level": level}
        if route in (("GET", "pipelines", "*", "jobs"), ("GET", "jobs", "*", "trace")):
            return self._ci(route, int(rest[1]) if rest[1].isdigit() else 0, path, query)
        if route[1:2] == ("merge_requests",) and len(rest) >= 2:
            pull = self.hosted.pull(path, rest[1])
            if pull is None:
                return 404, {"message": "404 Not found"}
            return await self._on_merge_request(route, rest, pull, query, body)
        return 404, {"message": "404 Not Found"}

    async def _on_merge_request(self, route: tuple[str, ...], rest: list[str], pull: Pull, query: dict[str, str],
                                body: dict[str, Any]) -> Answer:
        if route == ("GET", "merge_requests", "*"):
            return 200, await self._mr_json(pull)
        if route == ("POST", "merge_requests", "*", "notes"):
            note = self.hosted.add_note(pull, "comment", BOT, str(body.get("body", "")))
            return 201, self._note_json(pull, note)
        if route == ("GET", "merge_requests", "*", "discussions"):
            threads: dict[int, list[Note]] = {}
            for note in pull.notes:  # a thread's first note is older than its replies: the threads in order
                threads.setdefault(note.thread, []).append(note)
            return 200, paged([{"id": discussion_id(thread), "notes": [self._note_json(pull, n) for n in notes],
                                "individual_note": len(notes) == 1 and notes[0].kind != "line"}
                               for thread, notes in threads.items()], query, default=20)
        if route == ("POST", "merge_requests", "*", "discussions", "*", "notes"):
            opened = next((n for n in pull.notes if n.reply_to is None and discussion_id(n.id) == rest[3]), None)
            if opened is None:
                return 404, {"message": "404 Discussion Not Found"}
            pull.replies.append((rest[3], str(body.get("body", ""))))
            kind = "line" if opened.kind == "line" else "comment"  # a reply on a diff is a DiffNote too
            note = self.hosted.add_note(pull, kind, BOT, pull.replies[-1][1], path=opened.path, line=opened.line,
                                        reply_to=opened.id)
            return 201, self._note_json(pull, note)
        if route == ("GET", "merge_requests", "*", "pipelines"):
            mine = sorted(((p.id, sha) for sha, p in self.hosted.pipelines.items() if p.number == pull.number),
                          reverse=True)  # the newest first, as GitLab lists them
            return 200, [{"id": number, "sha": sha, "ref": pull.head, "source": "merge_request_event",
                          "status": _pipeline_status(list(self.hosted.runs.get(sha, {}).values())),
                          "web_url": f"https://gitlab.com/{pull.repo}/-/pipelines/{number}"}
                         for number, sha in mine]
        return 404, {"message": "404 Not Found"}

    def _note_json(self, pull: Pull, note: Note) -> dict[str, Any]:
        found = {"id": note.id, "type": "DiffNote" if note.kind == "line" else None, "body": note.body,
                 "author": self._user(note.author), "created_at": _stamp(note), "updated_at": _stamp(note),
                 "system": note.kind == "review", "noteable_type": "MergeRequest", "noteable_iid": pull.number,
                 "resolvable": note.kind == "line"}
        if note.kind != "line":
            return found
        return {**found, "position": {"position_type": "text", "new_path": note.path, "old_path": note.path,
                                      "new_line": note.line, "old_line": None}}

    def _ci(self, route: tuple[str, ...], number: int, path: str, query: dict[str, str]) -> Answer:
        if route == ("GET", "jobs", "*", "trace"):
            run = self.hosted.run(number)
            return (200, Text(run.text)) if run else (404, {"message": "404 Not found"})
        sha = next((sha for sha, p in self.hosted.pipelines.items() if p.id == number), None)
        if sha is None:
            return 404, {"message": "404 Not found"}
        jobs = [{"id": r.id, "name": r.name, "stage": "test", "status": _job_status(r),
                 "web_url": f"https://gitlab.com/{path}/-/jobs/{r.id}"}
                for r in self.hosted.runs.get(sha, {}).values()]
        scope = query.get("scope[]")
        return 200, [job for job in jobs if scope is None or job["status"] == scope]

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
        return 201, await self._mr_json(pull)

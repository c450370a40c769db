"""GitLab's REST API v4 (gitlab.com and self-hosted): the calls the bot makes for a merge request, and
those that read back its discussions, approvals, pipeline and who may steer."""

from __future__ import annotations

from typing import Any, Mapping
from urllib.parse import quote

from bot.forge.api import MESSAGE_CHARS, Forge, PullRequest, Reply, flatten
from bot.forge.pages import gitlab_links
from bot.forge.reviews import Check, Conditional, Dated, Remark, log_tail, oldest_first, when

DEVELOPER = 30  # the lowest access level that may push a branch and open a merge request
_LEVELS = {0: "no access", 5: "Minimal access", 10: "Guest", 20: "Reporter", 30: "Developer", 40: "Maintainer",
           50: "Owner"}
_STATES = {"opened": "open", "locked": "open", "merged": "merged", "closed": "closed"}
_DRAFT = "Draft: "
# the system notes that are a review: what GitLab writes when someone approves or requests changes
_VERDICT_NOTES = (("approved this merge request", "approved"), ("requested changes", "changes_requested"))


def _merge_request(data: dict[str, Any]) -> PullRequest:
    """A PullRequest from GitLab's merge request JSON (``work_in_progress`` on servers older than 13.2)."""
    return PullRequest(number=int(data["iid"]), url=str(data.get("web_url", "")),
                       state=_STATES.get(str(data.get("state")), "closed"),  # type: ignore[arg-type]
                       head=str(data["source_branch"]), base=str(data["target_branch"]),
                       draft=bool(data.get("draft", data.get("work_in_progress", False))),
                       sha=str(data.get("sha") or ""))


def _note_remark(discussion: str, note: dict[str, Any], url: str) -> Dated | None:
    """A person's note (on a line when it has a position), an approval or a request for changes (system
    notes); None for any other system note (a push, a label, a title changed)."""
    author, number, body = note.get("author") or {}, int(note["id"]), str(note.get("body") or "")
    common = {"id": f"note:{number}", "author": str(author.get("username") or ""),
              "author_id": str(author.get("id", "")), "body": body, "url": f"{url}#note_{number}"}
    if note.get("system"):
        verdict = next((v for words, v in _VERDICT_NOTES if body.startswith(words)), None)
        if verdict is None:
            return None
        remark = Remark(kind="review", verdict=verdict, **common)  # type: ignore[arg-type]
    elif note.get("position"):
        position = note["position"]
        line = position.get("new_line") or position.get("old_line")  # a removed line has only its old number
        remark = Remark(kind="line", path=str(position.get("new_path") or position.get("old_path") or ""),
                        line=int(line) if line else None, thread=discussion, **common)
    else:
        remark = Remark(kind="comment", thread=discussion, **common)
    return when(note["created_at"]), number, remark


def _discussions(data: list[dict[str, Any]], url: str) -> list[Dated]:
    found = [_note_remark(str(d["id"]), note, url) for d in data for note in d["notes"]]
    return [dated for dated in found if dated is not None]


def _newest(pipelines: list[dict[str, Any]], sha: str) -> tuple[int, str, str] | None:
    """(id, status, web_url) of the newest pipeline of ``sha`` in a merge request's pipelines (GitLab lists
    the newest first), or None."""
    found = next((p for p in pipelines if p["sha"] == sha), None)
    return None if found is None else (int(found["id"]), str(found.get("status")), str(found.get("web_url") or ""))


def _access_level(permissions: dict[str, Any]) -> int:
    """The higher of the project's and the group's access level (either may be null)."""
    levels = [(permissions.get(k) or {}).get("access_level") or 0 for k in ("project_access", "group_access")]
    return max(int(level) for level in levels)


class GitLab(Forge):
    """A project on GitLab: ``PRIVATE-TOKEN: <token>``; the project id is its URL-quoted path."""

    permissions = ("a project (or personal) access token with the api scope and at least the Developer role "
                   "on {path}")

    def headers(self) -> dict[str, str]:
        return {"PRIVATE-TOKEN": self._token, "User-Agent": "flower"}

    branches = "{base}/repository/branches"

    def links(self, headers: Mapping[str, str]) -> tuple[bool, int | None]:
        return gitlab_links(headers)

    def order(self, item: Any) -> int:
        return min(int(note["id"]) for note in item["notes"])  # a discussion is listed by its first note

    @property
    def _base(self) -> str:
        return f"/projects/{quote(self.repo.path, safe='')}"

    def message_of(self, reply: Reply) -> str:
        # GitLab puts its words in `message` or `error`, as a string, a list or a dict of field -> list
        body = reply.body
        if isinstance(body, dict) and not body.get("message") and body.get("error"):
            text = flatten(body["error"]) + (f" ({flatten(body['error_description'])})"
                                              if body.get("error_description") else "")
            return self.scrub(text)[:MESSAGE_CHARS]
        return super().message_of(reply)

    async def check_access(self) -> None:
        reply = await self.send("check_access", "GET", self._base)
        if not reply.ok:
            raise self.fail(reply, "read")
        permissions = reply.body.get("permissions") if isinstance(reply.body, dict) else None
        if not isinstance(permissions, dict):
            return
        level = _access_level(permissions)
        if level < DEVELOPER:
            raise self.error("forbidden", (
                f"{self.repo.token_env} has access level {level} ({_LEVELS.get(level, 'unknown')}) on "
                f"{self.repo.path}; pushing a branch and opening a merge request needs {DEVELOPER} (Developer). "
                f"Give it {self.needs()}."))

    async def find(self, head: str) -> PullRequest | None:
        params = {"source_branch": head, "state": "all", "order_by": "created_at", "sort": "desc"}
        reply = await self.send("find", "GET", f"{self._base}/merge_requests", params=params)
        if not reply.ok:
            raise self.fail(reply, "list the merge requests of")
        found = reply.body if isinstance(reply.body, list) else []
        return self.read(_merge_request, found[0], "find") if found else None

    async def create(self, *, head: str, base: str, title: str, body: str, draft: bool) -> PullRequest:
        if draft and not title.startswith(_DRAFT):
            title = _DRAFT + title  # GitLab's API has no draft flag on create: the title prefix is the flag
        payload = {"source_branch": head, "target_branch": base, "title": title, "description": body}
        reply = await self.send("create", "POST", f"{self._base}/merge_requests", json=payload)
        if reply.ok:
            return self.read(_merge_request, reply.body, "create")
        said = self.message_of(reply)
        if reply.status == 409 or (reply.status in (400, 422) and "already exists" in said.lower()):
            raise self.error("exists", f"a merge request from {head!r} already exists on GitLab {self.repo.path} "
                                       f"({reply.status}: {said}). Use that one instead of opening another.")
        if reply.status in (400, 422):
            raise self.error("refused", (
                f"GitLab refused to open a merge request from {head!r} into {base!r} on {self.repo.path} "
                f"({reply.status}: {said}). Check that {head!r} was pushed there and differs from {base!r}."))
        raise self.fail(reply, "open merge requests on")

    async def comment(self, number: int, body: str) -> None:
        reply = await self.send("comment", "POST", f"{self._base}/merge_requests/{int(number)}/notes",
                                json={"body": body})
        if not reply.ok:
            raise self.fail(reply, "comment on the merge requests of", missing=self._missing(number, reply))

    async def get(self, number: int, cache: Conditional | None = None) -> PullRequest:
        reply = await self.send("get", "GET", f"{self._base}/merge_requests/{int(number)}", cache=cache)
        if not reply.ok:
            raise self.fail(reply, "read the merge requests of", missing=self._missing(number, reply))
        return self.read(_merge_request, reply.body, "get")

    def _web(self, number: int) -> str:
        """The merge request's page: the API's address without /api/v4, then the project's path."""
        return f"{self.repo.api_url.removesuffix('/api/v4')}/{self.repo.path}/-/merge_requests/{int(number)}"

    async def remarks(self, number: int, cache: Conditional | None = None) -> list[Remark]:
        items = await self.pages("remarks", f"{self._base}/merge_requests/{int(number)}/discussions", number, cache,
                                 doing="read the discussions on the merge requests of")
        return oldest_first(self.read(lambda data: _discussions(data, self._web(number)), items, "remarks"))

    async def checks(self, number: int, sha: str, cache: Conditional | None = None) -> list[Check]:
        reply = await self.send("checks", "GET", f"{self._base}/merge_requests/{int(number)}/pipelines", cache=cache)
        if not reply.ok:
            raise self.fail(reply, "read the pipelines of", missing=self._missing(number, reply))
        pipeline = self.read(lambda data: _newest(data, sha), reply.body, "checks")
        if pipeline is None:
            return []
        pipeline_id, status, url = pipeline
        if status in ("success", "skipped", "manual"):
            return [Check("pipeline", "passed", url=url)]
        if status == "canceled":
            return [Check("pipeline", "failed", summary="canceled", url=url)]
        if status != "failed":
            return [Check("pipeline", "pending", url=url)]  # created, pending, running, scheduled, ...
        return await self._failed_jobs(pipeline_id, url, cache) or [Check("pipeline", "failed", url=url)]

    async def _failed_jobs(self, pipeline: int, url: str, cache: Conditional | None) -> list[Check]:
        """One failed check per failed job, with its log's tail ([] when the pipeline failed before any job ran,
        say on a broken .gitlab-ci.yml)."""
        reply = await self.send("checks", "GET", f"{self._base}/pipelines/{pipeline}/jobs",
                                params={"scope[]": "failed"}, cache=cache)
        if not reply.ok:
            raise self.fail(reply, "read the jobs of the pipelines of")
        jobs = self.read(lambda data: [(int(j["id"]), str(j["name"]), str(j.get("stage") or ""),
                                        str(j.get("web_url") or url)) for j in data], reply.body, "checks")
        checks = []
        for job, name, stage, job_url in jobs:
            # a job's log is text, so no Conditional; one the token may not read leaves the tail empty
            trace = await self.send("checks", "GET", f"{self._base}/jobs/{job}/trace")
            checks.append(Check(name, "failed", summary=f"failed in stage {stage}", url=job_url,
                                log_tail=log_tail(trace.text) if trace.ok else ""))
        return checks

    async def may_steer(self, remark: Remark) -> bool:
        reply = await self.send("may_steer", "GET", f"{self._base}/members/all/{quote(remark.author_id, safe='')}")
        if reply.status == 404:  # no member of the project or its groups
            return False
        if not reply.ok:
            raise self.fail(reply, f"read {remark.author!r}'s membership of")
        level = self.read(lambda data: int(data.get("access_level") or 0), reply.body, "may_steer")
        return level >= DEVELOPER

    async def me(self) -> str:
        reply = await self.send("me", "GET", "/user")
        if reply.status == 403:  # a token whose scopes leave out its own user
            return ""
        if not reply.ok:
            raise self.fail(reply, "read its own user (GET /user) for")
        return self.read(lambda data: str(data["username"]), reply.body, "me")

    async def reply(self, number: int, remark: Remark, body: str) -> None:
        if remark.kind != "line" or not remark.thread:
            return await self.comment(number, body)  # an approval or a plain comment: answered in the conversation
        where = f"{self._base}/merge_requests/{int(number)}/discussions/{quote(remark.thread, safe='')}/notes"
        reply = await self.send("reply", "POST", where, json={"body": body})
        if not reply.ok:
            raise self.fail(reply, "reply in the discussions of", missing=self._missing(number, reply))

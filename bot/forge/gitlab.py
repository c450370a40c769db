"""GitLab's REST API v4 (gitlab.com and self-hosted): the six calls the bot makes for a merge request."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from bot.forge.api import MESSAGE_CHARS, Forge, PullRequest, Reply, flatten

DEVELOPER = 30  # the lowest access level that may push a branch and open a merge request
_LEVELS = {0: "no access", 5: "Minimal access", 10: "Guest", 20: "Reporter", 30: "Developer", 40: "Maintainer",
           50: "Owner"}
_STATES = {"opened": "open", "locked": "open", "merged": "merged", "closed": "closed"}
_DRAFT = "Draft: "


def _merge_request(data: dict[str, Any]) -> PullRequest:
    """A PullRequest from GitLab's merge request JSON (``work_in_progress`` on servers older than 13.2)."""
    return PullRequest(number=int(data["iid"]), url=str(data.get("web_url", "")),
                       state=_STATES.get(str(data.get("state")), "closed"),  # type: ignore[arg-type]
                       head=str(data["source_branch"]), base=str(data["target_branch"]),
                       draft=bool(data.get("draft", data.get("work_in_progress", False))))


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

    async def get(self, number: int) -> PullRequest:
        reply = await self.send("get", "GET", f"{self._base}/merge_requests/{int(number)}")
        if not reply.ok:
            raise self.fail(reply, "read the merge requests of", missing=self._missing(number, reply))
        return self.read(_merge_request, reply.body, "get")

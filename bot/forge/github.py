"""GitHub's REST API v3 (github.com and GitHub Enterprise): the six calls the bot makes for a pull request."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from bot.forge.api import MESSAGE_CHARS, Forge, PullRequest, Reply, flatten

API_VERSION = "2022-11-28"
_EXISTS = "a pull request already exists"  # GitHub's 422 wording when one is open for the same head


def _pull(data: dict[str, Any]) -> PullRequest:
    """A PullRequest from GitHub's pull request JSON (a merged one says closed, with merged_at set)."""
    state = "merged" if data.get("merged_at") else ("open" if data.get("state") == "open" else "closed")
    return PullRequest(number=int(data["number"]), url=str(data.get("html_url", "")), state=state,
                       head=str(data["head"]["ref"]), base=str(data["base"]["ref"]),
                       draft=bool(data.get("draft", False)))


class GitHub(Forge):
    """A repository on GitHub: ``Authorization: Bearer <token>``, API version 2022-11-28."""

    permissions = ("a fine-grained token with Contents: read and write, Pull requests: read and write on "
                   "{path} (Metadata read is implied)")

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}", "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": API_VERSION, "User-Agent": "flower"}

    @property
    def _base(self) -> str:
        owner, name = self.repo.path.split("/")
        return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"

    def message_of(self, reply: Reply) -> str:
        # a 422 says "Validation Failed" in `message`; what failed is in errors[] (message, or field + code)
        said = super().message_of(reply)
        errors = reply.body.get("errors") if isinstance(reply.body, dict) else None
        if not isinstance(errors, list) or not errors:
            return said
        details = [flatten(e.get("message") or " ".join(str(e.get(k, "")) for k in ("field", "code")).strip())
                   if isinstance(e, dict) else flatten(e) for e in errors]
        return self.scrub(f"{said}: {'; '.join(d for d in details if d)}")[:MESSAGE_CHARS]

    async def check_access(self) -> None:
        reply = await self.send("check_access", "GET", self._base)
        if not reply.ok:
            raise self.fail(reply, "read")
        permissions = reply.body.get("permissions") if isinstance(reply.body, dict) else None
        if isinstance(permissions, dict) and not permissions.get("push", False):
            raise self.error("forbidden", (
                f"{self.repo.token_env} may not push to {self.repo.path} on GitHub (its permissions there say "
                f"push: false). Give it {self.needs()}."))

    async def find(self, head: str) -> PullRequest | None:
        owner = self.repo.path.split("/")[0]
        params = {"head": f"{owner}:{head}", "state": "all", "sort": "created", "direction": "desc",
                  "per_page": "10"}
        reply = await self.send("find", "GET", f"{self._base}/pulls", params=params)
        if not reply.ok:
            raise self.fail(reply, "list the pull requests of")
        found = reply.body if isinstance(reply.body, list) else []
        return self.read(_pull, found[0], "find") if found else None

    async def create(self, *, head: str, base: str, title: str, body: str, draft: bool) -> PullRequest:
        payload = {"title": title, "head": head, "base": base, "body": body, "draft": draft}
        reply = await self.send("create", "POST", f"{self._base}/pulls", json=payload)
        if reply.ok:
            return self.read(_pull, reply.body, "create")
        said = self.message_of(reply)
        if reply.status == 422 and _EXISTS in said.lower():
            raise self.error("exists", f"a pull request from {head!r} already exists on GitHub {self.repo.path} "
                                       f"({reply.status}: {said}). Use that one instead of opening another.")
        if reply.status == 422:
            raise self.error("refused", (
                f"GitHub refused to open a pull request from {head!r} into {base!r} on {self.repo.path} "
                f"({reply.status}: {said}). Check that {head!r} was pushed there and differs from {base!r}."))
        raise self.fail(reply, "open pull requests on")

    async def comment(self, number: int, body: str) -> None:
        reply = await self.send("comment", "POST", f"{self._base}/issues/{int(number)}/comments", json={"body": body})
        if not reply.ok:
            raise self.fail(reply, "comment on the pull requests of", missing=self._missing(number, reply))

    async def get(self, number: int) -> PullRequest:
        reply = await self.send("get", "GET", f"{self._base}/pulls/{int(number)}")
        if not reply.ok:
            raise self.fail(reply, "read the pull requests of", missing=self._missing(number, reply))
        return self.read(_pull, reply.body, "get")

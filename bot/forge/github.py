"""GitHub's REST API v3 (github.com and GitHub Enterprise): the calls the bot makes for a pull request,
and those that read back its review comments, reviews, conversation, checks and who may steer."""

from __future__ import annotations

from typing import Any, Mapping
from urllib.parse import quote

from bot.forge.api import MESSAGE_CHARS, Forge, PullRequest, Reply, flatten
from bot.forge.pages import github_links
from bot.forge.reviews import Check, CheckState, Conditional, Dated, Remark, log_tail, oldest_first, one_line, when

API_VERSION = "2022-11-28"
_EXISTS = "a pull request already exists"  # GitHub's 422 wording when one is open for the same head
PAGE = {"per_page": "100"}  # the check runs of one commit: one page (remarks are read page by page)
_VERDICTS = {"APPROVED": "approved", "CHANGES_REQUESTED": "changes_requested", "COMMENTED": "commented"}
_PASSED = ("success", "neutral", "skipped")  # a check run's conclusions that do not fail the commit
_STATUSES: dict[str, CheckState] = {"pending": "pending", "success": "passed"}  # failure and error fail
_STEER_PERMISSIONS = ("admin", "write")
_STEER_ROLES = ("admin", "maintain", "write")


def _pull(data: dict[str, Any]) -> PullRequest:
    """A PullRequest from GitHub's pull request JSON (a merged one says closed, with merged_at set)."""
    state = "merged" if data.get("merged_at") else ("open" if data.get("state") == "open" else "closed")
    return PullRequest(number=int(data["number"]), url=str(data.get("html_url", "")), state=state,
                       head=str(data["head"]["ref"]), base=str(data["base"]["ref"]),
                       draft=bool(data.get("draft", False)), sha=str(data["head"].get("sha") or ""))


def _login(data: dict[str, Any]) -> str:
    """Who wrote ``data``: a deleted account has no user, and GitHub shows it as ghost."""
    return str((data.get("user") or {}).get("login") or "ghost")


def _line_remark(data: dict[str, Any]) -> Dated:
    login, number = _login(data), int(data["id"])
    line = data.get("line") or data.get("original_line")  # an outdated comment keeps only its original line
    remark = Remark(id=f"line:{number}", kind="line", author=login, author_id=login, body=str(data.get("body") or ""),
                    url=str(data.get("html_url", "")), path=str(data.get("path") or ""),
                    line=int(line) if line else None, thread=str(data.get("in_reply_to_id") or number))
    return when(data["created_at"]), number, remark


def _review_remark(data: dict[str, Any]) -> Dated | None:
    """A review with a verdict or words; None for one pending, dismissed, or a COMMENTED one without a body
    (its line comments are read on their own)."""
    verdict, body = _VERDICTS.get(str(data.get("state"))), str(data.get("body") or "")
    if verdict is None or (verdict == "commented" and not body.strip()):
        return None
    login, number = _login(data), int(data["id"])
    remark = Remark(id=f"review:{number}", kind="review", author=login, author_id=login, body=body,
                    url=str(data.get("html_url", "")), verdict=verdict)  # type: ignore[arg-type]
    return when(data["submitted_at"]), number, remark


def _comment_remark(data: dict[str, Any]) -> Dated:
    login, number = _login(data), int(data["id"])
    remark = Remark(id=f"comment:{number}", kind="comment", author=login, author_id=login,
                    body=str(data.get("body") or ""), url=str(data.get("html_url", "")))
    return when(data["created_at"]), number, remark


def _check_runs(data: dict[str, Any]) -> list[Check]:
    checks = []
    for run in data["check_runs"]:
        output = run.get("output") or {}
        state: CheckState = "pending" if run.get("status") != "completed" else (
            "passed" if run.get("conclusion") in _PASSED else "failed")
        checks.append(Check(name=str(run["name"]), state=state, url=str(run.get("html_url") or ""),
                            summary=one_line(output.get("title") or output.get("summary")),
                            log_tail=log_tail(output.get("text"))))
    return checks


def _statuses(data: dict[str, Any]) -> list[Check]:
    return [Check(name=str(status["context"]), state=_STATUSES.get(str(status.get("state")), "failed"),
                  summary=one_line(status.get("description")), url=str(status.get("target_url") or ""))
            for status in data["statuses"]]


class GitHub(Forge):
    """A repository on GitHub: ``Authorization: Bearer <token>``, API version 2022-11-28."""

    permissions = ("a fine-grained token with Contents: read and write, Pull requests: read and write, "
                   "Checks: read and Commit statuses: read on {path} (Metadata read is implied)")

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}", "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": API_VERSION, "User-Agent": "flower"}

    @property
    def _base(self) -> str:
        owner, name = self.repo.path.split("/")
        return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"

    def links(self, headers: Mapping[str, str]) -> tuple[bool, int | None]:
        return github_links(headers)

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

    async def get(self, number: int, cache: Conditional | None = None) -> PullRequest:
        reply = await self.send("get", "GET", f"{self._base}/pulls/{int(number)}", cache=cache)
        if not reply.ok:
            raise self.fail(reply, "read the pull requests of", missing=self._missing(number, reply))
        return self.read(_pull, reply.body, "get")

    async def remarks(self, number: int, cache: Conditional | None = None) -> list[Remark]:
        found: list[Dated] = []
        for what, path, parse in (
                ("review comments", f"pulls/{int(number)}/comments", _line_remark),
                ("reviews", f"pulls/{int(number)}/reviews", _review_remark),
                ("comments", f"issues/{int(number)}/comments", _comment_remark)):
            items = await self.pages("remarks", f"{self._base}/{path}", number, cache,
                                     doing=f"read the {what} on the pull requests of")
            dated = self.read(lambda found: [parse(item) for item in found], items, "remarks")
            found += [d for d in dated if d is not None]
        return oldest_first(found)

    async def checks(self, number: int, sha: str, cache: Conditional | None = None) -> list[Check]:
        commit = f"{self._base}/commits/{quote(sha, safe='')}"
        runs = await self.send("checks", "GET", f"{commit}/check-runs", params=PAGE, cache=cache)
        if not runs.ok:
            raise self.fail(runs, "read the check runs of")
        statuses = await self.send("checks", "GET", f"{commit}/status", cache=cache)
        if not statuses.ok:
            raise self.fail(statuses, "read the commit statuses of")
        return self.read(_check_runs, runs.body, "checks") + self.read(_statuses, statuses.body, "checks")

    async def may_steer(self, remark: Remark) -> bool:
        where = f"{self._base}/collaborators/{quote(remark.author_id, safe='')}/permission"
        reply = await self.send("may_steer", "GET", where)
        if reply.status == 404:  # not a collaborator GitHub knows of
            return False
        if not reply.ok:
            raise self.fail(reply, f"read {remark.author!r}'s permission on")
        body = reply.body if isinstance(reply.body, dict) else {}
        return body.get("permission") in _STEER_PERMISSIONS or body.get("role_name") in _STEER_ROLES

    async def me(self) -> str:
        reply = await self.send("me", "GET", "/user")
        if reply.status == 403:  # a GitHub App's installation token is no user
            return ""
        if not reply.ok:
            raise self.fail(reply, "read its own user (GET /user) for")
        return self.read(lambda data: str(data["login"]), reply.body, "me")

    async def reply(self, number: int, remark: Remark, body: str) -> None:
        if remark.kind != "line" or not remark.thread:
            return await self.comment(number, body)  # a review or a conversation has no thread of its own
        where = f"{self._base}/pulls/{int(number)}/comments/{quote(remark.thread, safe='')}/replies"
        reply = await self.send("reply", "POST", where, json={"body": body})
        if not reply.ok:
            raise self.fail(reply, "reply to the review comments of", missing=self._missing(number, reply))

"""bot.forge.webhooks on a real aiohttp server: signed GitHub and GitLab deliveries wake a poll,
anything unsigned, altered, oversized or unparsable is refused before it can, and the secret is
never logged."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web

from bot.forge.webhooks import Poke, github_poke, gitlab_poke, verify_github, verify_gitlab, webhook_app_routes

SECRET = "gh-webhook-secret-0123456789abcdef"
TOKEN = "gl-webhook-token-0123456789abcdef"
SHA = "0123456789abcdef0123456789abcdef01234567"
REPO = {"full_name": "acme/app"}
PROJECT = {"path_with_namespace": "acme/sub/app"}


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def review_comment(number: int = 12) -> bytes:
    return json.dumps({"action": "created", "repository": REPO, "comment": {"body": "nit"},
                       "pull_request": {"number": number, "head": {"ref": "flower/t1", "sha": SHA}}}).encode()


class Served:
    """The routes on a real server (web.AppRunner on 127.0.0.1, a free port) and a client session to it."""

    def __init__(self, runner: web.AppRunner, session: aiohttp.ClientSession, url: str):
        self.runner, self.session, self.url = runner, session, url

    def post(self, path: str, **options):
        return self.session.post(self.url + path, **options)


@pytest_asyncio.fixture
async def serve():
    """``await serve(github_secret=..., gitlab_token=...)`` -> (served, pokes): closed at teardown."""
    opened: list[Served] = []

    async def make(*, github_secret: str = SECRET, gitlab_token: str = TOKEN, client_max_size: int = 1024**2):
        pokes: list[Poke] = []

        async def on_poke(poke: Poke) -> None:
            pokes.append(poke)

        app = web.Application(client_max_size=client_max_size)
        app.add_routes(webhook_app_routes(github_secret=github_secret, gitlab_token=gitlab_token, on_poke=on_poke))
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        served = Served(runner, aiohttp.ClientSession(), f"http://127.0.0.1:{port}")
        opened.append(served)
        return served, pokes

    yield make
    for served in opened:
        await served.session.close()
        await served.runner.cleanup()


async def post_github(client: Served, event: str, body: bytes, signature: str | None) -> tuple[int, str]:
    headers = {"X-GitHub-Event": event, "Content-Type": "application/json"}
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    async with client.post("/forge/github", data=body, headers=headers) as resp:
        return resp.status, await resp.text()


async def post_gitlab(client: Served, event: str, body: bytes, token: str | None) -> tuple[int, str]:
    headers = {"X-Gitlab-Event": event, "Content-Type": "application/json"}
    if token is not None:
        headers["X-Gitlab-Token"] = token
    async with client.post("/forge/gitlab", data=body, headers=headers) as resp:
        return resp.status, await resp.text()


# --- GitHub ----------------------------------------------------------------------------------------

async def test_a_signed_review_comment_pokes_its_pull_request(serve):
    client, pokes = await serve()
    body = review_comment(12)
    assert await post_github(client, "pull_request_review_comment", body, sign(body)) == (202, "accepted")
    assert pokes == [Poke("github", "acme/app", 12, branch="flower/t1")]


async def test_a_comment_on_a_plain_issue_is_ignored(serve):
    client, pokes = await serve()
    body = json.dumps({"repository": REPO, "issue": {"number": 3}, "comment": {"body": "hi"}}).encode()
    assert await post_github(client, "issue_comment", body, sign(body)) == (202, "ignored")
    on_pr = json.dumps({"repository": REPO, "issue": {"number": 4, "pull_request": {"url": "x"}}}).encode()
    assert await post_github(client, "issue_comment", on_pr, sign(on_pr)) == (202, "accepted")
    assert pokes == [Poke("github", "acme/app", 4)]


async def test_a_check_run_names_its_sha_and_pull_request(serve):
    client, pokes = await serve()
    body = json.dumps({"repository": REPO, "check_run": {
        "head_sha": SHA, "status": "completed", "check_suite": {"head_branch": "flower/t1"},
        "pull_requests": [{"number": 7}]}}).encode()
    assert await post_github(client, "check_run", body, sign(body)) == (202, "accepted")
    assert pokes == [Poke("github", "acme/app", 7, sha=SHA, branch="flower/t1")]


async def test_ping_answers_pong_once_signed(serve):
    client, pokes = await serve()
    body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1}).encode()
    assert await post_github(client, "ping", body, sign(body)) == (200, "pong")
    assert (await post_github(client, "ping", body, None))[0] == 401
    assert pokes == []


@pytest.mark.parametrize("signature", [
    "sha256=" + "0" * 64,  # wrong
    None,  # missing
    "",
    sign(review_comment(), "another-secret"),  # made with another secret
    "sha256=not-hex-at-all-" + "z" * 48,
    "sha1=" + hmac.new(SECRET.encode(), review_comment(), hashlib.sha1).hexdigest(),  # the old header's form
    sign(review_comment()).removeprefix("sha256="),  # the hex without its prefix
])
async def test_a_bad_signature_is_refused_and_pokes_nothing(serve, signature):
    client, pokes = await serve()
    assert await post_github(client, "pull_request_review_comment", review_comment(), signature) == (401, "bad signature")
    assert pokes == []


async def test_a_body_altered_after_signing_is_refused(serve):
    client, pokes = await serve()
    signature = sign(review_comment(12))
    assert (await post_github(client, "pull_request_review_comment", review_comment(13), signature))[0] == 401
    assert pokes == []


async def test_a_signature_check_comes_before_the_json(serve):
    client, pokes = await serve()
    assert (await post_github(client, "pull_request_review", b"{not json", "sha256=" + "0" * 64))[0] == 401
    assert (await post_github(client, "pull_request_review", b"{not json", sign(b"{not json")))[0] == 400
    assert (await post_github(client, "pull_request_review", b"[1, 2]", sign(b"[1, 2]")))[0] == 400
    assert pokes == []


@pytest.mark.parametrize("client_max_size", [1024**2, 8 * 1024**2])  # aiohttp's default, and an app that allows more
async def test_an_oversized_body_is_refused_even_signed(serve, client_max_size):
    client, pokes = await serve(client_max_size=client_max_size)
    body = json.dumps({"repository": REPO, "pull_request": {"number": 1}, "pad": "x" * (1024 * 1024)}).encode()
    assert (await post_github(client, "pull_request", body, sign(body)))[0] == 413

    async def chunks():  # no Content-Length: the read itself is capped
        for _ in range(17):
            yield b" " * 65536

    headers = {"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign(b"")}
    async with client.post("/forge/github", data=chunks(), headers=headers) as resp:
        assert resp.status == 413
    assert pokes == []


# --- GitLab ----------------------------------------------------------------------------------------

def mr_note(noteable_type: str = "MergeRequest") -> bytes:
    payload = {"object_kind": "note", "project": PROJECT,
               "object_attributes": {"noteable_type": noteable_type, "note": "please fix"}}
    if noteable_type == "MergeRequest":
        payload["merge_request"] = {"iid": 5, "source_branch": "flower/t2"}
    else:
        payload["issue"] = {"iid": 9}
    return json.dumps(payload).encode()


async def test_a_note_on_a_merge_request_with_the_token_pokes_it(serve):
    client, pokes = await serve()
    assert await post_gitlab(client, "Note Hook", mr_note(), TOKEN) == (202, "accepted")
    assert pokes == [Poke("gitlab", "acme/sub/app", 5, branch="flower/t2")]


@pytest.mark.parametrize("token", ["wrong", None, "", TOKEN + "x", TOKEN[:-1]])
async def test_a_wrong_or_missing_token_is_refused(serve, token):
    client, pokes = await serve()
    assert await post_gitlab(client, "Note Hook", mr_note(), token) == (401, "bad signature")
    assert pokes == []


async def test_a_note_on_an_issue_is_ignored(serve):
    client, pokes = await serve()
    assert await post_gitlab(client, "Note Hook", mr_note("Issue"), TOKEN) == (202, "ignored")
    assert await post_gitlab(client, "Push Hook", json.dumps({"project": PROJECT}).encode(), TOKEN) == (202, "ignored")
    assert (await post_gitlab(client, "Note Hook", b"\xff\xfe not json", TOKEN))[0] == 400
    assert pokes == []


async def test_gitlab_oversized_body_is_refused(serve):
    client, pokes = await serve()
    assert (await post_gitlab(client, "Note Hook", b" " * (1024 * 1024 + 1), TOKEN))[0] == 413
    assert pokes == []


# --- both ------------------------------------------------------------------------------------------

async def test_a_route_without_its_secret_is_off(serve):
    client, pokes = await serve(github_secret="", gitlab_token="")
    body = review_comment()
    assert (await post_github(client, "pull_request_review_comment", body, sign(body, "")))[0] == 404
    assert (await post_gitlab(client, "Note Hook", mr_note(), ""))[0] == 404
    assert pokes == []


async def test_the_secret_never_reaches_the_log(serve, caplog):
    caplog.set_level(logging.DEBUG)
    client, _ = await serve()
    body = review_comment()
    await post_github(client, "pull_request_review_comment", body, sign(body, "another-secret"))
    await post_github(client, "pull_request_review_comment", body, sign(body))
    await post_gitlab(client, "Note Hook", mr_note(), TOKEN[:-1])
    await post_gitlab(client, "Note Hook", mr_note(), TOKEN)
    warnings = [r for r in caplog.records if r.name == "bot.forge.webhooks" and r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert "GitHub" in warnings[0].getMessage() and "GitLab" in warnings[1].getMessage()
    assert all("127.0.0.1" in w.getMessage() for w in warnings)
    for leaked in (SECRET, TOKEN, TOKEN[:-1], sign(body), sign(body, "another-secret")[7:]):
        assert leaked not in caplog.text


# --- the pure parts --------------------------------------------------------------------------------

def test_verify_refuses_an_empty_secret():
    assert verify_github(SECRET, b"x", sign(b"x")) and not verify_github("", b"x", sign(b"x", ""))
    assert verify_gitlab(TOKEN, TOKEN) and not verify_gitlab("", "") and not verify_gitlab(TOKEN, "é" + TOKEN)
    assert not verify_github(SECRET, b"x", "sha256=é" + sign(b"x")[8:])


@pytest.mark.parametrize("event, payload, expected", [
    ("pull_request", {"repository": REPO, "number": 2, "pull_request": {"number": 2, "head": {"ref": "b"}}},
     Poke("github", "acme/app", 2, branch="b")),
    ("pull_request_review", {"repository": REPO, "pull_request": {"number": 3, "head": {"ref": "b"}}},
     Poke("github", "acme/app", 3, branch="b")),
    ("check_suite", {"repository": REPO, "check_suite": {"head_sha": SHA, "head_branch": "b", "pull_requests": []}},
     Poke("github", "acme/app", None, sha=SHA, branch="b")),
    ("status", {"repository": REPO, "sha": SHA, "state": "failure", "branches": [{"name": "b"}, {"name": "c"}]},
     Poke("github", "acme/app", None, sha=SHA, branch="b")),
    ("check_run", {"repository": REPO, "check_run": {"pull_requests": []}}, None),  # names nothing
    ("pull_request", {"repository": REPO, "pull_request": {"number": "2"}}, None),  # a number of the wrong type
    ("pull_request", {"pull_request": {"number": 2}}, None),  # no repository
    ("push", {"repository": REPO, "ref": "refs/heads/b"}, None),
    ("ping", {"repository": REPO}, None),
])
def test_github_poke(event, payload, expected):
    assert github_poke(event, payload) == expected


@pytest.mark.parametrize("event, payload, expected", [
    ("Merge Request Hook", {"project": PROJECT, "object_attributes": {"iid": 4, "source_branch": "b"}},
     Poke("gitlab", "acme/sub/app", 4, branch="b")),
    ("Pipeline Hook", {"project": PROJECT, "object_attributes": {"sha": SHA, "ref": "b"}, "merge_request": {"iid": 4}},
     Poke("gitlab", "acme/sub/app", 4, sha=SHA, branch="b")),
    ("Pipeline Hook", {"project": PROJECT, "object_attributes": {"sha": SHA, "ref": "b"}, "merge_request": None},
     Poke("gitlab", "acme/sub/app", None, sha=SHA, branch="b")),
    ("Note Hook", {"project": PROJECT, "object_attributes": {"noteable_type": "Commit"}}, None),
    ("System Hook", {"project": PROJECT}, None),
])
def test_gitlab_poke(event, payload, expected):
    assert gitlab_poke(event, payload) == expected

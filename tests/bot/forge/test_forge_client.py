"""bot.forge against the fake forge: remote URLs, the six REST calls on GitHub and GitLab, their errors,
retries and the token kept out of every message. Real aiohttp on both sides, real git for branches."""

from __future__ import annotations

import logging
import socket
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio

from bot.errors import ForgeError
from bot.forge.client import PullRequest, Retry, forge_for
from bot.forge.remote import ForgeRepo, ForgeSettings, recognise
from bot.testing.fake_forge import FakeForge

FAST = Retry(tries=3, first_delay_s=0.01)
PATHS = {"github": "acme/app", "gitlab": "acme/sub/app"}  # GitLab: a subgroup, so the quoted id has two %2F
REMOTES = {"github": "git@github.com:acme/app.git", "gitlab": "https://gitlab.com/acme/sub/app.git"}
KINDS = pytest.mark.parametrize("kind", ["github", "gitlab"])
HEAD = "flower/t1"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def _git(bare: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(bare), *args], check=True, capture_output=True,
                          text=True, timeout=60).stdout.strip()


def make_bare(bare: Path, pushed: tuple[str, ...]) -> None:
    """``bare`` with ``main`` and, each a commit on top of it, ``feature/x`` and ``pushed``: real git."""
    bare.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True, timeout=60)
    main = _git(bare, "commit-tree", EMPTY_TREE, "-m", "init")
    _git(bare, "update-ref", "refs/heads/main", main)
    for branch in ("feature/x", *pushed):  # what the bot's push leaves on the forge
        commit = _git(bare, "commit-tree", EMPTY_TREE, "-p", main, "-m", branch)
        _git(bare, "update-ref", f"refs/heads/{branch}", commit)


@pytest_asyncio.fixture
async def served(tmp_path, git_identity):
    """``await served(kind, pushed=(branch, ...), **add_repo_options)`` -> (fake, client): closed at teardown."""
    opened: list = []

    async def make(kind, *, token=None, pushed=(), **repo_options):
        fake = await FakeForge(kind, bare_dir=tmp_path / "bare").start()
        opened.append(fake)
        make_bare(tmp_path / "bare" / f"{PATHS[kind]}.git", pushed)
        fake.add_repo(PATHS[kind], **repo_options)
        settings = ForgeSettings(github_api_url=fake.url) if kind == "github" else ForgeSettings(gitlab_url=fake.url)
        repo = recognise(REMOTES[kind], settings)
        client = forge_for(repo, fake.token if token is None else token, retry=FAST)
        opened.append(client)
        return fake, client

    yield make
    for thing in reversed(opened):
        await thing.close()


# --- recognise -------------------------------------------------------------------------------------

GHE = ForgeSettings(github_api_url="https://ghe.example.com/api/v3/")
SELF_GITLAB = ForgeSettings(gitlab_url="https://git.example.org:8443/")
NONE = ForgeSettings()
GITHUB_COM = ("github", "github.com", "acme/app", "https://api.github.com")
GHE_APP = ("github", "ghe.example.com", "acme/app", "https://ghe.example.com/api/v3")


@pytest.mark.parametrize("url, settings, expected", [
    ("https://github.com/acme/app", NONE, GITHUB_COM),
    ("https://github.com/acme/app.git", NONE, GITHUB_COM),
    ("https://github.com/acme/app/", NONE, GITHUB_COM),
    ("https://x-access-token:secret@GitHub.com/acme/app.git", NONE, GITHUB_COM),
    ("ssh://git@github.com/acme/app.git", NONE, GITHUB_COM),
    ("ssh://git@github.com:22/acme/app", NONE, GITHUB_COM),
    ("git@github.com:acme/app.git", NONE, GITHUB_COM),
    ("http://www.github.com/acme/app", NONE, ("github", "www.github.com", "acme/app", "https://api.github.com")),
    ("git@github.com:acme/app", ForgeSettings(github_api_url="http://127.0.0.1:9/"),
     ("github", "github.com", "acme/app", "http://127.0.0.1:9")),
    ("https://ghe.example.com/acme/app.git", GHE, GHE_APP),
    ("git@ghe.example.com:acme/app.git", GHE, GHE_APP),
    ("https://gitlab.com/group/app.git", NONE, ("gitlab", "gitlab.com", "group/app", "https://gitlab.com/api/v4")),
    ("git@gitlab.com:group/sub/deeper/app.git", NONE,
     ("gitlab", "gitlab.com", "group/sub/deeper/app", "https://gitlab.com/api/v4")),
    ("https://oauth2:glpat-secret@gitlab.com/group/sub/app", NONE,
     ("gitlab", "gitlab.com", "group/sub/app", "https://gitlab.com/api/v4")),
    ("ssh://git@git.example.org:2222/team/app.git", SELF_GITLAB,
     ("gitlab", "git.example.org", "team/app", "https://git.example.org:8443/api/v4")),
    ("https://git.example.org:8443/team/sub/app.git", SELF_GITLAB,
     ("gitlab", "git.example.org", "team/sub/app", "https://git.example.org:8443/api/v4")),
    ("https://github.com/acme/app/extra", NONE, None),  # GitHub paths are exactly owner/name
    ("https://github.com/acme", NONE, None),
    ("https://gitlab.com/group", NONE, None),
    ("https://bitbucket.org/acme/app.git", NONE, None),
    ("git@example.com:acme/app.git", NONE, None),
    ("https://ghe.example.com/acme/app.git", NONE, None),  # GHE only once GITHUB_API_URL says so
    ("https://git.example.org/team/app.git", NONE, None),
    ("/srv/git/app.git", NONE, None),
    ("./github.com:acme/app", NONE, None),
    ("file:///srv/github.com/acme/app.git", NONE, None),
    ("https://github.com/acme/../app", NONE, None),
    ("https://github.com/acme//app", NONE, None),
    ("https://github.com/acme/%2e%2e", NONE, None),
    ("https://github.com/acme/app?x=1", NONE, None),
    ("https://github.com:notaport/acme/app", NONE, None),
    ("", NONE, None),
])
def test_recognise(url, settings, expected):
    repo = recognise(url, settings)
    assert (None if repo is None else (repo.kind, repo.host, repo.path, repo.api_url)) == expected


def test_a_repo_names_its_forge_and_urls():
    github = recognise("git@github.com:acme/app.git", ForgeSettings())
    gitlab = recognise("git@gitlab.com:group/sub/app.git", ForgeSettings())
    assert (github.name, github.token_env, github.web_url, github.noun) == (
        "GitHub", "GITHUB_TOKEN", "https://github.com/acme/app", "pull request")
    assert (gitlab.name, gitlab.token_env, gitlab.web_url, gitlab.noun) == (
        "GitLab", "GITLAB_TOKEN", "https://gitlab.com/group/sub/app", "merge request")


def test_settings_repr_masks_the_tokens():
    settings = ForgeSettings(github_token="ghp_0123456789abcdefghijKLMN", gitlab_token="glpat-short")
    assert settings.token("github") == "ghp_0123456789abcdefghijKLMN" and settings.token("gitlab") == "glpat-short"
    text = repr(settings)
    assert "0123456789" not in text and "glpat-short" not in text and "short" not in text
    assert "github_api_url='https://api.github.com'" in text


# --- no token, access ----------------------------------------------------------------------------

@KINDS
def test_no_token_names_the_setting_and_the_permissions(kind):
    repo = recognise(REMOTES[kind], ForgeSettings())
    with pytest.raises(ForgeError) as caught:
        forge_for(repo, "")
    text = str(caught.value)
    assert caught.value.kind == "no_token"
    assert f"{repo.token_env} is not set" in text and "Push branch works without it." in text
    assert "flower's .env and restart flower" in text and PATHS[kind] in text
    if kind == "github":
        assert "Contents: read and write, Pull requests: read and write" in text
    else:
        assert "api scope" in text and "Developer role" in text


@KINDS
async def test_check_access_ok_sends_the_forges_headers(served, kind):
    fake, client = await served(kind)
    await client.check_access()
    sent = fake.requests[-1]
    wanted = ({"Authorization": f"Bearer {fake.token}", "Accept": "application/vnd.github+json",
               "X-GitHub-Api-Version": "2022-11-28"} if kind == "github" else {"PRIVATE-TOKEN": fake.token})
    assert sent.path == ("/repos/acme/app" if kind == "github" else "/api/v4/projects/acme/sub/app")
    assert {k: sent.headers.get(k) for k in [*wanted, "User-Agent"]} == {**wanted, "User-Agent": "flower"}


@KINDS
async def test_a_wrong_token_is_auth(served, kind):
    fake, client = await served(kind, token="not-the-token")
    with pytest.raises(ForgeError) as caught:
        await client.check_access()
    assert caught.value.kind == "auth"
    said = "Bad credentials" if kind == "github" else "401 Unauthorized"
    assert str(caught.value) == (f"{client.repo.name} refused {client.repo.token_env} (401: {said}). "
                                 "Replace it with a valid token and restart flower.")


@pytest.mark.parametrize("kind, options, words", [
    ("github", {"push": False}, "push: false"),
    ("gitlab", {"access_level": 20}, "access level 20 (Reporter)"),
])
async def test_a_token_that_may_not_push_is_forbidden(served, kind, options, words):
    _, client = await served(kind, **options)
    with pytest.raises(ForgeError) as caught:
        await client.check_access()
    assert caught.value.kind == "forbidden"
    assert words in str(caught.value) and PATHS[kind] in str(caught.value)


@KINDS
async def test_a_403_is_forbidden_with_the_forges_words(served, kind):
    fake, client = await served(kind)
    fake.fail("POST", ".*", 403, body={"message": "Resource not accessible by integration"})
    with pytest.raises(ForgeError) as caught:
        await client.create(head="feature/x", base="main", title="t", body="b", draft=False)
    assert caught.value.kind == "forbidden"
    assert str(caught.value).startswith(f"{client.repo.token_env} may not open ")
    assert "(403: Resource not accessible by integration). Give it " in str(caught.value)


@KINDS
async def test_an_unknown_repository_is_not_found(served, kind):
    fake, client = await served(kind)
    other = ForgeRepo(kind, client.repo.host, "acme/other", client.repo.api_url)
    async with forge_for(other, fake.token, retry=FAST) as missing:
        with pytest.raises(ForgeError) as caught:
            await missing.check_access()
    assert caught.value.kind == "not_found"
    assert str(caught.value) == (f"acme/other was not found on {other.name} with {other.token_env}: it does not "
                                 "exist or the token cannot see it. Give the token access to it.")


# --- branches ------------------------------------------------------------------------------------

@KINDS
async def test_check_base(served, kind):
    fake, client = await served(kind)
    await client.check_base("main")
    await client.check_base("feature/x")  # GitLab answers 404 unless the '/' is sent as %2F
    assert fake.requests[-1].path.endswith("/branches/feature/x")
    with pytest.raises(ForgeError) as caught:
        await client.check_base("nope")
    assert caught.value.kind == "base_missing"
    assert str(caught.value) == (f"base branch 'nope' does not exist on {client.repo.name} {PATHS[kind]}. "
                                 "Bind the channel again with a branch that exists there.")


# --- pull requests -------------------------------------------------------------------------------

@KINDS
async def test_create_sends_the_pull_request(served, kind):
    fake, client = await served(kind, pushed=(HEAD,))
    made = await client.create(head=HEAD, base="main", title="Add login", body="Why: ...", draft=True)
    sent = fake.requests[-1]
    if kind == "github":
        assert (sent.method, sent.path) == ("POST", "/repos/acme/app/pulls")
        assert sent.json == {"title": "Add login", "head": HEAD, "base": "main", "body": "Why: ...", "draft": True}
        url = "https://github.com/acme/app/pull/1"
    else:
        assert (sent.method, sent.path) == ("POST", "/api/v4/projects/acme/sub/app/merge_requests")
        assert sent.json == {"source_branch": HEAD, "target_branch": "main", "title": "Draft: Add login",
                             "description": "Why: ..."}
        url = "https://gitlab.com/acme/sub/app/-/merge_requests/1"
    assert made == PullRequest(number=1, url=url, state="open", head=HEAD, base="main", draft=True)
    assert [(p["head"], p["base"], p["body"], p["draft"]) for p in fake.pulls()] == [(HEAD, "main", "Why: ...", True)]


@KINDS
async def test_create_when_one_is_open_is_exists(served, kind):
    _, client = await served(kind, pushed=(HEAD,))
    await client.create(head=HEAD, base="main", title="t", body="", draft=False)
    with pytest.raises(ForgeError) as caught:
        await client.create(head=HEAD, base="main", title="t", body="", draft=False)
    assert caught.value.kind == "exists"
    assert "already exists" in str(caught.value) and HEAD in str(caught.value)


@KINDS
async def test_create_before_the_push_is_refused(served, kind):
    fake, client = await served(kind)
    with pytest.raises(ForgeError) as caught:
        await client.create(head="not-pushed", base="main", title="t", body="", draft=False)
    assert caught.value.kind == "refused"
    said = "Validation Failed: head invalid" if kind == "github" else 'Source branch "not-pushed" does not exist'
    assert f"(422: {said})" in str(caught.value) and "'not-pushed'" in str(caught.value)
    assert fake.pulls() == []


@KINDS
async def test_find_the_newest_in_any_state(served, kind):
    fake, client = await served(kind, pushed=(HEAD,))
    assert await client.find(HEAD) is None
    if kind == "github":
        assert fake.requests[-1].query == {"head": f"acme:{HEAD}", "state": "all", "sort": "created",
                                           "direction": "desc", "per_page": "10"}
    else:
        assert fake.requests[-1].query == {"source_branch": HEAD, "state": "all", "order_by": "created_at",
                                           "sort": "desc"}
    first = await client.create(head=HEAD, base="main", title="one", body="", draft=False)
    fake.set_state(first.number, "closed")
    second = await client.create(head=HEAD, base="main", title="two", body="", draft=False)
    assert (await client.find(HEAD)).number == second.number != first.number
    fake.set_state(second.number, "merged")
    found = await client.find(HEAD)
    assert (found.number, found.state) == (second.number, "merged")
    assert await client.find("feature/x") is None


@KINDS
async def test_comment_and_get(served, kind):
    fake, client = await served(kind, pushed=(HEAD,))
    made = await client.create(head=HEAD, base="main", title="t", body="", draft=False)
    await client.comment(made.number, "Pushed again: 2 more commits.")
    assert fake.comments(made.number) == ["Pushed again: 2 more commits."]
    assert fake.requests[-1].json == {"body": "Pushed again: 2 more commits."}
    assert fake.requests[-1].path == ("/repos/acme/app/issues/1/comments" if kind == "github"
                                      else "/api/v4/projects/acme/sub/app/merge_requests/1/notes")
    assert (await client.get(made.number)) == made
    fake.set_state(made.number, "merged")
    assert (await client.get(made.number)).state == "merged"
    fake.set_state(made.number, "closed")
    assert (await client.get(made.number)).state == "closed"
    with pytest.raises(ForgeError) as caught:
        await client.get(99)
    assert caught.value.kind == "not_found" and "99" in str(caught.value)


async def test_gitlab_reads_work_in_progress_and_flattens_messages(served):
    fake, client = await served("gitlab")
    old = {"iid": 3, "web_url": "https://gitlab.com/x/-/merge_requests/3", "state": "locked",
           "source_branch": HEAD, "target_branch": "main", "work_in_progress": True}
    fake.fail("GET", r".*/merge_requests/3", 200, body=old)
    assert await client.get(3) == PullRequest(3, old["web_url"], "open", HEAD, "main", True)
    fake.fail("POST", r".*/merge_requests", 400, body={"message": {"title": ["can't be blank"], "base": ["bad"]}})
    with pytest.raises(ForgeError) as caught:
        await client.create(head="feature/x", base="main", title="", body="", draft=False)
    assert caught.value.kind == "refused" and "(400: title: can't be blank; base: bad)" in str(caught.value)
    fake.fail("GET", r".*", 401, body={"error": "invalid_token", "error_description": "Token was revoked"})
    with pytest.raises(ForgeError) as caught:
        await client.check_access()
    assert caught.value.kind == "auth" and "(401: invalid_token (Token was revoked))" in str(caught.value)


@KINDS
async def test_a_malformed_or_redirected_answer_is_refused(served, kind):
    fake, client = await served(kind)
    fake.fail("GET", r".*/(pulls|merge_requests)/5", 200, body={"unexpected": True})
    with pytest.raises(ForgeError) as caught:
        await client.get(5)
    assert caught.value.kind == "refused" and "JSON flower cannot read" in str(caught.value)
    fake.fail("GET", ".*", 301, headers={"Location": f"{fake.url}/elsewhere"})  # never followed: the token stays
    with pytest.raises(ForgeError) as caught:
        await client.check_access()
    assert caught.value.kind == "refused" and f"(moved to {fake.url}/elsewhere)" in str(caught.value)
    assert [r.path for r in fake.requests].count("/elsewhere") == 0


# --- retries ---------------------------------------------------------------------------------------

@KINDS
async def test_two_503s_then_success(served, kind, caplog):
    fake, client = await served(kind)
    fake.fail("GET", ".*", 503, times=2)
    with caplog.at_level(logging.WARNING, logger="bot.forge"):
        await client.check_access()
    assert len(fake.requests) == 3
    retries = [r.getMessage() for r in caplog.records if r.name.startswith("bot.forge")]
    assert len(retries) == 2 and all("check_access" in line and "503" in line for line in retries)


@KINDS
async def test_always_503_is_unreachable_after_exactly_the_tries(served, kind):
    fake, client = await served(kind)
    fake.fail("GET", ".*", 503, times=100)
    with pytest.raises(ForgeError) as caught:
        await client.check_base("main")
    assert len(fake.requests) == FAST.tries
    assert caught.value.kind == "unreachable"
    assert str(caught.value).startswith(f"could not reach {client.repo.name} at {client.repo.api_url} (503: ")
    assert str(caught.value).endswith(") after 3 tries. Try again when it answers.")


async def test_rate_limits_are_retried_and_retry_after_honoured(served):
    fake, client = await served("github")
    fake.fail("GET", ".*", 403, headers={"X-RateLimit-Remaining": "0"}, body={"message": "API rate limit exceeded"})
    fake.fail("GET", ".*", 429, headers={"Retry-After": "0.02"})
    await client.check_access()
    assert [r.path for r in fake.requests] == ["/repos/acme/app"] * 3


@KINDS
async def test_a_closed_port_is_unreachable(kind):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    api = f"http://127.0.0.1:{port}" + ("" if kind == "github" else "/api/v4")
    async with forge_for(ForgeRepo(kind, f"{kind}.com", "acme/app", api), "tok", retry=FAST) as client:
        with pytest.raises(ForgeError) as caught:
            await client.find(HEAD)
    assert caught.value.kind == "unreachable"
    assert f"at {api} (" in str(caught.value) and "after 3 tries" in str(caught.value)


# --- the token stays secret ----------------------------------------------------------------------

@KINDS
async def test_the_token_is_never_in_an_error_or_a_log_line(served, kind, caplog):
    fake, client = await served(kind)
    echo = {"message": f"token {fake.token} is bad", "error": fake.token}
    caught: list[ForgeError] = []
    with caplog.at_level(logging.DEBUG):
        for status in (401, 403, 404, 409, 422, 400, 503):
            fake.fail("POST", ".*", status, times=FAST.tries if status == 503 else 1, body=echo)
            with pytest.raises(ForgeError) as one:
                await client.create(head="feature/x", base="main", title="t", body="", draft=False)
            caught.append(one.value)
        fake.fail("GET", ".*", 200, body={"iid": fake.token, "number": fake.token})
        with pytest.raises(ForgeError) as one:
            await client.get(1)
        caught.append(one.value)
    assert {e.kind for e in caught} >= {"auth", "forbidden", "not_found", "refused", "unreachable"}
    assert all(fake.token not in str(e) and fake.token not in repr(e.args) for e in caught)
    assert sum("***" in str(e) for e in caught) >= 5
    assert fake.token not in caplog.text
    assert any("***" in r.getMessage() for r in caplog.records if r.name.startswith("bot.forge"))


@pytest.mark.parametrize("url, key", [
    ("https://git.example.org:8443/team/app.git", "credential.https://git.example.org:8443.helper"),
    ("https://git.example.org:443/team/app.git", "credential.https://git.example.org.helper"),
    ("https://gitlab.com/team/app.git", "credential.https://gitlab.com.helper"),
])
def test_the_push_credential_is_keyed_by_the_host_and_a_non_standard_port(tmp_path, url, key):
    # git matches a credential's URL with its port: without it a self-hosted forge on :8443 would
    # ask for a password no one answers
    from bot.forge.push import CREDENTIALS_DIR, _credentials

    repo = recognise(url, SELF_GITLAB if "example" in url else ForgeSettings())
    with _credentials(url, repo, "glpat-secret", tmp_path) as config:
        assert config[0] == "credential.helper=" and config[1].startswith(f"{key}=")
        assert "glpat-secret" not in "".join(config)  # the token is in a 0600 file, not the command line
    assert list((tmp_path / CREDENTIALS_DIR).iterdir()) == []  # and the file is gone after the push

"""The pull request's parts on their own: what its title, body and comment say, the rows kept in
bot.db, the forge settings read at start, and the push's credential (never on a command line)."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from bot.core.thread import ThreadKey
from bot.errors import ConfigError
from bot.forge import push as forge_push
from bot.forge.remote import ForgeSettings, recognise
from bot.render import pull_request as pr
from bot.repos.bindings import Bindings
from bot.settings.config import load_config
from bot.store.bot_store import BotStore
from engine import Brief, Goal, RunResult, Verdict
from engine.lang import speaking

BASE = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"}
KEY = ThreadKey("T1", "C1", "1700000000.000100")


def report(**over) -> pr.Report:
    fields = dict(goal="Add dark mode\nwith a toggle", brief="## Goal\nDark mode", achieved=True,
                  checks=[("toggle shows", "passed"), ("colors swap", "failing"), ("works on iOS", "unverifiable")],
                  reason="one check fails", cost=1.234, rounds=2)
    return pr.Report(**{**fields, **over})


def test_report_from_a_finished_flow_and_back_through_json():
    with speaking("en"):
        goal = Goal.parse("## Goal\nAdd dark mode\n## Checks\n- toggle shows\n- colors swap")
        verdict = Verdict.parse("## Conclusion\nnot achieved\n## Reason\ncolors stay\n## Failed\n- colors swap")
        brief = Brief.parse("## Goal\ndark\n## Acceptance\ntoggle\n## Bounds\ncss only\n## Unknowns\nnone")
    got = pr.report_from(RunResult(False, goal=goal, verdict=verdict, brief=brief), cost=0.5, rounds=3)
    assert got.goal == "Add dark mode" and got.reason == "colors stay" and not got.achieved
    assert got.checks == [("toggle shows", "passed"), ("colors swap", "failing")]
    assert "css only" in got.brief
    assert pr.Report.from_json(got.to_json()) == got
    assert pr.Report.from_json("") is None and pr.Report.from_json("not json") is None
    assert pr.report_from(RunResult(False), cost=0, rounds=0) == pr.Report(goal="", brief="")


def test_body_has_the_checklist_reason_brief_totals_and_thread_link():
    body = pr.body(report(), thread_link="https://x.slack.com/archives/C1/p1", branch="flower/dark")
    assert "[the Slack thread](https://x.slack.com/archives/C1/p1)" in body and "`flower/dark`" in body
    assert "- [x] toggle shows (passed)" in body
    assert "- [ ] colors swap (**failing**)" in body and "- [ ] works on iOS (cannot be verified here)" in body
    assert "> one check fails" in body and "## Goal\nDark mode" in body
    assert "2 judged round(s); cost $1.23" in body
    assert pr.title(report(), "flower/dark") == "Add dark mode"
    assert pr.title(report(goal=""), "flower/dark") == "flower/dark"
    assert "a Slack thread" in pr.body(report(), thread_link="", branch="b")


def test_model_text_cannot_ping_people_or_overflow_the_forge():
    body = pr.body(report(brief="cc @octocat and @acme/security " + "x" * 70_000), thread_link="", branch="b")
    assert "@octocat" not in body and "@\u200boctocat" in body and "@\u200bacme/security" in body
    assert len(body) <= pr.MAX_BODY
    assert "@\u200broot" in pr.title(report(goal="@root please"), "b")
    assert len(pr.title(report(goal="y" * 500), "b")) <= pr.MAX_TITLE


def test_comment_lists_the_new_commits_and_the_new_verdict():
    note = pr.comment(report(achieved=False), commits=["abc123 round 2", "def456 round 3"], thread_link="L")
    assert "pushed 2 new commit(s)" in note and "- abc123 round 2" in note and "- def456 round 3" in note
    assert "**Verdict: not achieved yet.**" in note and "- [ ] colors swap (**failing**)" in note
    gitlab, github = (recognise(f"https://{host}/acme/app.git", ForgeSettings()) for host in ("gitlab.com", "github.com"))
    assert gitlab.noun == "merge request" and gitlab.ref(3) == "!3" and github.ref(3) == "#3"


async def test_store_keeps_a_branch_report_then_its_pull_request(tmp_path):
    store = BotStore(tmp_path / "bot.db")
    try:
        assert await store.pull_request(KEY, "flower/a") is None
        await store.save_pr_report(KEY, "flower/a", '{"goal": "g"}')
        row = await store.pull_request(KEY, "flower/a")
        assert row.state == "proposed" and row.number is None and row.report == '{"goal": "g"}'
        await store.set_pull_request(KEY, "flower/a", number=7, url="https://f/7", state="open", pushed="c1")
        await store.save_pr_report(KEY, "flower/a", '{"goal": "g2"}')  # a later run: the PR stays
        row = await store.pull_request(KEY, "flower/a")
        assert (row.number, row.url, row.state, row.pushed, row.report) == (7, "https://f/7", "open", "c1", '{"goal": "g2"}')
        await store.set_pr_state(KEY, "flower/a", "merged")
        assert (await store.pull_request(KEY, "flower/a")).state == "merged"
        assert await store.pull_request(KEY, "flower/a-2") is None  # /new: a new branch has none
    finally:
        store.close()


def test_forge_settings_are_read_checked_and_masked(tmp_path):
    config = load_config({**BASE, "GITHUB_TOKEN": "ghp_secret123456789", "GITLAB_URL": "https://git.example.com/",
                          "FLOWER_AUTO_PR": "1"}, dotenv=None)
    assert config.forges.github_token == "ghp_secret123456789" and config.auto_pr
    assert config.forges.gitlab_url == "https://git.example.com"
    assert "secret123456789" not in repr(config)
    assert "GITHUB_TOKEN" not in config.agent_env and "GITLAB_TOKEN" not in config.agent_env
    for env, needle in [({"GITHUB_API_URL": "ftp://x"}, "GITHUB_API_URL must be an http(s) URL"),
                        ({"GITLAB_URL": "https://user:pw@git.example.com"}, "GITLAB_URL must be"),
                        ({"GITHUB_TOKEN": "ghp_a b"}, "GITHUB_TOKEN contains whitespace"),
                        ({"FLOWER_AUTO_PR": "yes"}, "FLOWER_AUTO_PR must be 1 or 0")]:
        with pytest.raises(ConfigError, match=re.escape(needle)) as err:
            load_config({**BASE, **env}, dotenv=None)
        assert "pw@" not in str(err.value)


def test_a_checkout_binding_keeps_its_origin_when_bound(tmp_path, git_identity):
    repo = tmp_path / "proj"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "a").write_text("a")
    subprocess.run(["git", "-C", str(repo), "add", "a"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "a"], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:acme/app.git"], check=True)
    binding = Bindings(tmp_path / "home").bind("C1", str(repo))
    subprocess.run(["git", "-C", str(repo), "remote", "set-url", "origin", "https://evil.example/x.git"], check=True)
    again = Bindings(tmp_path / "home").get("C1")
    assert binding.remote_url == again.remote_url == "git@github.com:acme/app.git"
    assert recognise(again.remote_url, ForgeSettings()).path == "acme/app"


def fill(config: tuple[str, ...], host: str) -> subprocess.CompletedProcess[str]:
    """What git's credential machinery answers for ``https://<host>`` with ``config``: what a push gets."""
    args = [part for setting in config for part in ("-c", setting)]
    return subprocess.run(["git", *args, "credential", "fill"], input=f"protocol=https\nhost={host}\n\n",
                          capture_output=True, text=True, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"}, timeout=60)


def test_the_push_token_is_a_file_only_during_the_push(tmp_path, git_identity):
    forge = recognise("https://github.com/acme/app.git", ForgeSettings(github_token="ghp_tok"))
    home = tmp_path / "flo'wer home"  # a quote in FLOWER_HOME must not break the helper's shell line
    with forge_push._credentials("https://github.com/acme/app.git", forge, "ghp_tok", home) as config:
        helper = [c for c in config if "helper=!" in c][0]
        file = next((home / forge_push.CREDENTIALS_DIR).iterdir())
        assert "username=x-access-token\npassword=ghp_tok" in fill(config, "github.com").stdout  # git gets it
        assert "ghp_tok" not in fill(config, "evil.example").stdout  # and only for the forge's host
        assert file.read_text() == "username=x-access-token\npassword=ghp_tok\n"
        assert oct(file.stat().st_mode & 0o777) == "0o600" and file.is_relative_to(tmp_path)
        assert config[0] == "credential.helper=" and "credential.https://github.com.helper" in helper
        assert "ghp_tok" not in " ".join(config)
    assert not file.exists()
    with forge_push._credentials("git@github.com:acme/app.git", forge, "ghp_tok", tmp_path) as config:
        assert config == ()  # ssh: the operator's keys, no token
    url = "https://gitlab.example.com:8443/web/app.git"  # a self-hosted forge on its own port
    lab = recognise(url, ForgeSettings(gitlab_token="glpat-tok", gitlab_url="https://gitlab.example.com:8443"))
    with forge_push._credentials(url, lab, "glpat-tok", tmp_path) as config:
        assert "password=glpat-tok" in fill(config, "gitlab.example.com:8443").stdout
        assert "glpat-tok" not in fill(config, "gitlab.example.com").stdout

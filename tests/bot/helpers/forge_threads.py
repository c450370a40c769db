"""Bound threads against a fake forge, for the pull-request tests: a bare repository standing in for
the forge's (``url.<dir>/.insteadOf https://github.com/``), a scripted run that commits a round
file, and the thread to its branch message."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bot.core.thread import ThreadKey
from bot.forge.client import Retry
from bot.runs.run import BotOptions
from engine import Resilience
from engine.testing import prompt_contains, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE, WORKER
from tests.bot.helpers.git import seeded_bare

CHANNEL = "C0GENERAL"
TOKEN = "ghp_testtokenforflowerbot0000"
BRIEF = "## 目标\n每轮写一个 round.txt\n## 验收标准\nround.txt 已提交\n## 边界\n只动 round.txt\n## 未知与假设\n无"
GOAL = "## 目标\n每轮的 round.txt 都提交了\n## 判定清单\n- round.txt 已提交\n- 提交信息写了轮次"
ACHIEVED = "## 结论\n达成\n## 理由\n两项都通过了\n## 未通过\n无"
NOT_YET = "## 结论\n未达成\n## 理由\n提交信息缺轮次\n## 未通过\n- 提交信息写了轮次"
# every work round commits something new (with `git add -A`, as agents do): a follow-up has commits to push
COMMIT = 'n=$(git rev-list --count HEAD); echo "$n" > round.txt && git add -A && git commit -q -m "round $n"'
OPTIONS = BotOptions(runtime={"resilience": Resilience(base_delay=0.01)}, status_every_s=0,
                     forge_retry=Retry(tries=2, first_delay_s=0.01))


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


def ref(bare: Path, branch: str) -> str | None:
    done = subprocess.run(["git", "--git-dir", str(bare), "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
                          capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def script(fm, *, verdict: str = ACHIEVED, command: str = COMMIT) -> None:
    fm.rule(text(BRIEF), when=[CLARIFIER], repeat_last=True)
    fm.rule(text(GOAL), when=[JUDGE, prompt_contains("设定目标")], repeat_last=True)
    fm.rule(text(verdict), when=[JUDGE, prompt_contains("判定这一轮")], repeat_last=True)
    fm.rule(tool_use("Agent", {"subagent_type": "coder", "description": "one round",
                               "prompt": "Commit one more round.txt."}), text("round committed"),
            when=[COORDINATOR], repeat_last=True)
    fm.rule(tool_use("Bash", {"command": command}), text("committed"), when=[WORKER], repeat_last=True)


def bare_remote(tmp_path: Path, path: str) -> Path:
    """A bare repository at ``<tmp>/forge/<path>.git`` with one commit on main."""
    return seeded_bare(tmp_path / "forge" / f"{path}.git", tmp_path / "seed")


def forge_remote(tmp_path: Path, host: str, path: str) -> Path:
    """``bare_remote`` reached as ``https://<host>/<path>.git`` through the test's global git config."""
    with open(tmp_path / "gitconfig", "a") as cfg:  # GIT_CONFIG_GLOBAL of git_identity
        cfg.write(f'[url "{tmp_path / "forge"}/"]\n\tinsteadOf = https://{host}/\n')
    return bare_remote(tmp_path, path)


async def posted(slack, thread_ts, needle, *, after=0):
    return await slack.wait_for("chat.postMessage", lambda c: needle in (c.body.get("text") or ""),
                                after=after, thread_ts=thread_ts)


async def say(slack, words, *, thread_ts=None):
    event = (slack.user_message(CHANNEL, words, thread_ts=thread_ts) if thread_ts else
             slack.mention(CHANNEL, words))
    await slack.send_event(event)
    return event["ts"]


def buttons(call) -> dict[str, dict]:
    return {e["action_id"]: e for b in call.arg("blocks") for e in b.get("elements", []) if e.get("type") == "button"}


def created(forge) -> list:
    return [r for r in forge.requests if r.method == "POST" and r.path.endswith(("/pulls", "/merge_requests"))]


async def run_to_branch(make_bot, slack, fake_model, url: str, *, verdict: str = ACHIEVED, **env):
    """A bot with ``env``, its channel bound to ``url``, and one run to the end: the bot, the
    thread's key and its branch message."""
    bot = await make_bot(OPTIONS, FLOWER_ADMINS="U0ALICE", **env)
    ts = await say(slack, f"/repo {url}")
    await posted(slack, ts, "bound to a repository")
    script(fake_model, verdict=verdict)
    thread = await say(slack, "commit a round file")
    return bot, ThreadKey("T0001", CHANNEL, thread), await posted(slack, thread, "Branch flower/")


def branch_of(branch_msg) -> str:
    return branch_msg.body["text"].split()[1].rstrip(":")

"""``flower`` speaks the language chosen once (``--lang``, else ``FLOWER_LANGUAGE``, else the
locale), says where ``--new`` archived, ends a failed run with its reason and the next step, and
has a help without markup. Each through the real command against the offline model."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine._lang import zh
from engine.testing import prompt_contains, text, tool_use, unauthorized
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE
from tests.helpers.flower_cli import BRIEF, GOAL, flower

CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")
ACHIEVED = "## 结论\n达成\n## 理由\ngood\n## 未通过\n无"  # the judge's words are English; headings parse
LOCALE = ("LC_ALL", "LC_MESSAGES", "LANG")


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "proj"
    ws.mkdir()
    return ws


def _script(fm, *clarifier) -> None:
    """Replies matched by role and by what the request shows, never by the prompts' language:
    the round's judge is shown the coordinator's report, the goal setter is not."""
    fm.rule(*(clarifier or [text(BRIEF.format(lang="Python"))]), when=CLARIFIER)
    fm.rule(text(ACHIEVED), when=[JUDGE, prompt_contains(REPORT)], repeat_last=True)
    fm.rule(text(GOAL), when=JUDGE, repeat_last=True)
    fm.rule(text(REPORT), when=COORDINATOR, repeat_last=True)


REPORT = "work done"
ASK = tool_use("mcp__human__ask", {"question": "Which language?", "options": ["Python", "Go"]})


def _locale(monkeypatch, value: str | None) -> None:
    for name in LOCALE:
        monkeypatch.delenv(name, raising=False)
    if value:
        monkeypatch.setenv("LANG", value)


def _cjk_lines(out: str) -> list[str]:
    return [line for line in out.replace("\r", "\n").splitlines() if CJK.search(line)]


def _without_step_names(line: str) -> str:
    names = (zh.JUDGE_LABEL.format(step=zh.WORK_STEP), zh.CLARIFY_STEP, zh.GOAL_STEP, zh.WORK_STEP)
    for name in names:
        line = line.replace(name, "")
    return line


def _run(ws, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=ws, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("chosen", ["--lang", "FLOWER_LANGUAGE"])
def test_an_english_run_prints_no_cjk_character(fake_model, ws, monkeypatch, chosen):
    _locale(monkeypatch, "zh_CN.UTF-8")  # the flag and the variable both win over the locale
    if chosen == "FLOWER_LANGUAGE":
        monkeypatch.setenv("FLOWER_LANGUAGE", "en")
        args = ["write hello"]
    else:
        args = ["--lang", "en", "write hello"]  # FLOWER_LANGUAGE=zh (the suite's) loses to the flag
    _script(fake_model, ASK, text(BRIEF.format(lang="{answer}")))
    term = flower(ws, *args)
    term.expect("2. Go")
    term.type("1\n")
    assert term.wait() == 0, term.out[-3000:]
    assert "== Done: goal achieved · $" in term.out and "verdict #1: goal achieved  good" in term.out
    assert [line for line in _cjk_lines(term.out) if CJK.search(_without_step_names(line))] == [], (
        term.out[-3000:])  # what flower itself writes
    # The step names too: they are the engine's (engine._lang), still Chinese until its English names are used.
    assert _cjk_lines(term.out) == [], term.out[-3000:]


def test_a_chinese_locale_with_no_flower_language_speaks_chinese(fake_model, ws, monkeypatch):
    monkeypatch.delenv("FLOWER_LANGUAGE")
    _locale(monkeypatch, "zh_CN.UTF-8")
    _script(fake_model)
    done = _run(ws, "写 hello")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "== 结束:达成 · $" in done.stderr and "判定 #1: 达成  good" in done.stderr


@pytest.mark.parametrize(("lang", "env", "said"), [
    (None, {"LANG": "zh_CN.UTF-8"}, "要给一句诉求"),
    (None, {"LANG": "en_US.UTF-8"}, "Give a request"),
    (None, {"LANG": "zh_CN.UTF-8", "FLOWER_LANGUAGE": "en"}, "Give a request"),
    ("zh", {"LANG": "en_US.UTF-8", "FLOWER_LANGUAGE": "en"}, "要给一句诉求"),
])
def test_the_flag_wins_over_the_variable_which_wins_over_the_locale(ws, monkeypatch, lang, env, said):
    monkeypatch.delenv("FLOWER_LANGUAGE")
    _locale(monkeypatch, None)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    done = _run(ws, *(["--lang", lang] if lang else []), timeout=60)  # nothing to do: a usage error
    assert done.returncode == 2 and said in done.stderr, done.stderr


@pytest.mark.parametrize(("args", "env", "named"), [
    (["--lang", "fr", "x"], {}, "--lang must be one of en, zh; got 'fr'"),
    (["x"], {"FLOWER_LANGUAGE": "klingon"}, "FLOWER_LANGUAGE must be one of en, zh; got 'klingon'"),
])
def test_a_bad_language_is_a_usage_error_naming_the_value_and_the_choices(ws, monkeypatch, args, env, named):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    done = _run(ws, *args, timeout=60)
    assert done.returncode == 2 and named in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_help_has_no_markup_and_lists_the_exit_codes_once(ws, lang):
    done = _run(ws, "--lang", lang, "--help", timeout=60)
    assert done.returncode == 0, done.stderr
    assert "`" not in done.stdout
    assert done.stdout.count("exit codes") == 1 and done.stdout.count("130") == 1, done.stdout
    assert (CJK.search(done.stdout) is None) == (lang == "en")


def test_new_says_where_it_archived_the_last_run(fake_model, ws, monkeypatch):
    monkeypatch.setenv("FLOWER_LANGUAGE", "en")
    (ws / ".flower").mkdir()
    (ws / ".flower" / "需求.md").write_text(BRIEF.format(lang="Python"), encoding="utf-8")
    _script(fake_model, text(BRIEF.format(lang="Go")))
    done = _run(ws, "--new", "write goodbye")
    assert done.returncode == 0, done.stderr[-3000:]
    said = re.search(r"<- The last run was archived to (\S+); starting fresh", done.stderr)
    assert said, done.stderr[-3000:]
    archived = Path(said.group(1))
    assert archived.is_dir() and "Python" in (archived / "需求.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_failed_run_ends_with_the_reason_and_what_to_do_next(fake_model, ws, lang):
    fake_model.rule(text("never"), fault=unauthorized())
    done = _run(ws, "--lang", lang, "write hello")
    assert done.returncode == 1, done.stderr[-3000:]
    tail = done.stderr.rstrip().splitlines()[-3:]
    if lang == "en":
        assert tail[0].startswith("== Done: goal not achieved · $")
        assert tail[1].startswith("   Why: the model refused the API key (401: ") and "invalid" in tail[1].lower()
        assert tail[2].startswith("   Next: fix ANTHROPIC_API_KEY") and "run flower again" in tail[2]
    else:
        assert tail[0].startswith("== 结束:没有达成 · $") and "(确认需求)" not in tail[0]
        assert tail[1].startswith("   原因:模型拒绝了 API key(401:")
        assert tail[2].startswith("   下一步:") and "ANTHROPIC_API_KEY" in tail[2]
    assert os.path.isdir(ws / "runs")

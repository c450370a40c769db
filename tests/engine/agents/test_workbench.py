"""Workbench: folders, script self-description, INDEX.md and the system-prompt block."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine._agents.workbench import Workbench, describe, is_within
from engine._lang.zh import WORKBENCH_OUTSIDE as EXTERNAL_NOTE


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ("# desc: count lines per author\nprint(1)\n", "count lines per author"),
        ("#!/usr/bin/env python3\n# desc: with a shebang first\n", "with a shebang first"),
        ("// desc: a JS helper\nconsole.log(1)\n", "a JS helper"),
        ("-- desc: a SQL query\nselect 1;\n", "a SQL query"),
        ("#desc:no spaces\n", "no spaces"),
        ("# DESC: upper case\n", "upper case"),
        ("# desc: 统计每个作者的行数\n", "统计每个作者的行数"),
        ("# desc: full-width colon works too\n", "full-width colon works too"),
        ("\n" * 7 + "# desc: on line 8\n", "on line 8"),
        # past line 8 the marker is not a desc line: the first comment wins instead
        ("import os\n" * 8 + "# desc: on line 9\n", "desc: on line 9"),
        ("# first comment\n# second\n# desc: later but within 8\n", "later but within 8"),
        ("#!/bin/sh\n# -*- coding: utf-8 -*-\n# real comment\n", "real comment"),
        ("#\n# after an empty comment\n", "after an empty comment"),
        ('"""Module docstring line.\n\nMore text."""\n', "Module docstring line."),
        ('"""\nOn the next line.\n"""\n', "On the next line."),
        ("'''single quotes'''\n", "single quotes"),
        ("# Title of a note\n\nBody.\n", "Title of a note"),
        ("plain text first line\nsecond\n", "plain text first line"),
        ("\n\n   \n", ""),
        ("", ""),
        ("# " + "x" * 150 + "\n", "x" * 99 + "…"),
        ("# desc:   squeezed    spaces  \n", "squeezed spaces"),
    ],
)
def test_describe(tmp_path: Path, head: str, expected: str) -> None:
    f = tmp_path / "f.txt"
    f.write_text(head, encoding="utf-8")
    assert describe(f) == expected


def test_describe_code_without_comment_is_empty(tmp_path: Path) -> None:
    f = tmp_path / "run.py"
    f.write_text("import os\nprint(os.getcwd())\n", encoding="utf-8")
    assert describe(f) == ""  # "import os" describes nothing; prose files use their first line
    (tmp_path / "run.txt").write_text("import os\n", encoding="utf-8")
    assert describe(tmp_path / "run.txt") == "import os"


def test_describe_binary_and_missing(tmp_path: Path) -> None:
    f = tmp_path / "img.png"
    f.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    assert describe(f) == ""
    assert describe(tmp_path / "nope.py") == ""


def test_root_and_folders(tmp_path: Path) -> None:
    wb = Workbench(tmp_path)
    assert wb.root == tmp_path / ".flower"
    assert wb.scripts == wb.root / "scripts"
    assert wb.artifacts == wb.root / "artifacts"
    assert wb.notes == wb.root / "notes"
    assert wb.spill == wb.root / "spill"
    assert not wb.external
    assert not wb.root.exists()  # nothing is created until ensure()
    wb.ensure()
    assert all(p.is_dir() for p in (wb.scripts, wb.artifacts, wb.notes))
    assert Workbench(tmp_path, dirname="bench").root == tmp_path / "bench"


def test_home_outside_workspace_is_external(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    ws.mkdir()
    wb = Workbench(ws, home=tmp_path / ".flower-repo")
    assert wb.root == tmp_path / ".flower-repo"
    assert wb.external
    # a home inside the workspace is not external
    assert not Workbench(ws, home=ws / "inner").external
    # a sibling whose name merely starts with the workspace's name is outside
    assert Workbench(ws, home=tmp_path / "repo2").external


def test_is_within(tmp_path: Path) -> None:
    assert is_within(tmp_path / "a" / "b", tmp_path)
    assert is_within(tmp_path, tmp_path)
    assert not is_within(tmp_path / "a" / ".." / "..", tmp_path)
    assert not is_within(Path(str(tmp_path) + "x"), tmp_path)


def _touch(path: Path, text: str, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (mtime, mtime))


def test_refresh_lists_newest_first_with_descriptions(tmp_path: Path) -> None:
    wb = Workbench(tmp_path).ensure()
    _touch(wb.scripts / "old.py", "# desc: the old one\n", 1000)
    _touch(wb.scripts / "new.sh", "#!/bin/sh\n# desc: the new one\n", 2000)
    _touch(wb.notes / "archive" / "交接" / "x.md", "# 交接 x\n", 1500)
    _touch(wb.notes / ".hidden.md", "# hidden\n", 3000)
    _touch(wb.spill / "abc.txt", "spilled\n", 3000)
    text = wb.refresh()
    on_disk = wb.index_path.read_text(encoding="utf-8")
    assert on_disk == text
    assert "- scripts/new.sh — the new one" in text
    assert "- scripts/old.py — the old one" in text
    assert text.index("scripts/new.sh") < text.index("scripts/old.py")
    assert "- notes/archive/交接/x.md — 交接 x" in text
    assert ".hidden" not in text
    assert "spill" not in text
    assert "## artifacts/\n(空)" in text
    assert not list(wb.root.glob(".INDEX.md.*"))  # the atomic write left no temp file


def test_refresh_caps_entries_per_folder(tmp_path: Path) -> None:
    wb = Workbench(tmp_path, max_index_entries=3).ensure()
    for i in range(5):
        _touch(wb.artifacts / f"a{i}.txt", f"artifact {i}\n", 1000 + i)
    text = wb.refresh()
    listed = [line for line in text.splitlines() if line.startswith("- artifacts/")]
    assert listed == [
        "- artifacts/a4.txt — artifact 4",
        "- artifacts/a3.txt — artifact 3",
        "- artifacts/a2.txt — artifact 2",
    ]
    assert "另有 2 个" in text


def test_refresh_creates_the_folders(tmp_path: Path) -> None:
    wb = Workbench(tmp_path)
    wb.refresh()
    assert wb.index_path.is_file()
    assert all(p.is_dir() for p in (wb.scripts, wb.artifacts, wb.notes))


def test_prompt_block_inside_workspace(tmp_path: Path) -> None:
    wb = Workbench(tmp_path).ensure()
    _touch(wb.notes / "决定-用-sqlite.md", "# 用 SQLite 存会话\n", 1000)
    block = wb.prompt_block()
    assert ".flower/" in block
    assert str(tmp_path) not in block  # inside the workspace: a relative path is enough
    assert "scripts/" in block and "# desc:" in block
    assert "2000" in block and "artifacts/" in block
    assert "notes/" in block and "一个决定一个文件" in block
    assert "- notes/决定-用-sqlite.md — 用 SQLite 存会话" in block
    assert EXTERNAL_NOTE not in block


def test_prompt_block_external_says_absolute(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    ws.mkdir()
    wb = Workbench(ws, home=tmp_path / ".flower-repo").ensure()
    block = wb.prompt_block()
    assert EXTERNAL_NOTE in block
    assert str((tmp_path / ".flower-repo").resolve()) in block


def test_show(tmp_path: Path) -> None:
    wb = Workbench(tmp_path)
    assert wb.show(tmp_path / ".flower" / "notes" / "a.md") == ".flower/notes/a.md"
    assert wb.show(tmp_path.parent / "elsewhere") == str((tmp_path.parent / "elsewhere").resolve())

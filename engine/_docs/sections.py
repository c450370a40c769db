"""Section parsing shared by the four documents: a model answer in, titled sections out.

Rules (the spec's "where the errors concentrate"):

- Fenced code (``` or ~~~) is content, never a heading: a ``# comment`` or ``## title`` inside a
  code block does not start a section. An UNCLOSED fence drops everything from it on: a truncated
  answer must leave the later sections missing so the gate asks again, rather than parse the
  half-written code as sections. One exception: a model often wraps its whole document in a
  ```markdown fence (or a bare ``` one when nothing outside it has a heading); that wrapper is
  unwrapped first. (The fence scanning itself is ``engine._docs.fences``.)
- A heading is a line that names a known section and is marked as one: ``## 目标``,
  ``**目标**``, ``目标:`` / ``目标：``, ``3. 边界``, ``一、目标``; text after it on the same line is
  the start of its content. A bare word on a line of its own is NOT a heading ("未通过" alone in a
  verdict's conclusion is an answer, not the failed-checks title).
- Aliases are tried longest first, and a title must end at a word boundary, so "未知" never
  swallows "未知与假设" and "Goal" never matches "Goalkeeper".
- When a section repeats, the first copy with content wins; a section whose content is the
  placeholder "(未填)" (copied from ``to_markdown()``) counts as missing.
- An unknown ``#`` heading at the level of the open section (or above) closes it: its chunk is
  kept verbatim in ``Parsed.extra`` (the brief's ``## 唤醒时追加`` amendments live there). A
  thematic break (``---``) closes the open section too; what follows it before the next heading is
  the model's trailing chatter and is dropped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from engine._beneath import read_bytes, write_text
from engine._docs.fences import code_mask, unwrap_fences
from engine._lang import en, words, zh

_MAX_DOCUMENT = 1 << 20  # a brief or goal is a page; a bigger file is the agent's, not ours
PLACEHOLDER = zh.PLACEHOLDER  # the spec's; files written in English get en.PLACEHOLDER, both read as missing
_PLACEHOLDERS = {zh.PLACEHOLDER, "（未填）", en.PLACEHOLDER}
_EMPTY_ITEMS = {"无", "（无）", "(无)", "没有", "none", "n/a", "-", "—", *_PLACEHOLDERS}

_BREAK = re.compile(r"^[ \t]{0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_ANY_HASH_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+\S")
_NUM = r"(?:\d{1,2}|[一二三四五六七八九十]{1,3})[.)、．][ \t]*"
_EMOJI = r"(?:[\U0001F300-\U0001FAFF\u2600-\u27BF\u2B50]\uFE0F?[ \t]*)?"  # "## 🎯 目标"
_ITEM = re.compile(r"^([ \t]*)(?:[-*+•][ \t]+|\(?\d{1,3}[.)、．][ \t]*|\(\d{1,3}\)[ \t]*)(.*)$")
_CHECKBOX = re.compile(r"^\[[ xX✓]\][ \t]*")


def is_placeholder(text: str) -> bool:
    """True when ``text`` (stripped) is the "(未填)" placeholder that ``to_markdown`` writes."""
    return text.strip() in _PLACEHOLDERS


@dataclass
class Parsed:
    """What ``SectionTable.parse`` found.

    ``sections`` has every key of the table ("" when missing); ``seen`` lists the keys whose
    headings appeared (even empty ones), in order; ``extra`` is the unknown ``#``-headed chunks
    after the first known heading, verbatim; ``preamble`` is the text before the first known
    heading; ``truncated`` says an unclosed fence cut the text short.
    """

    sections: dict[str, str]
    seen: list[str]
    extra: str = ""
    preamble: str = ""
    truncated: bool = False


class SectionTable:
    """The titles and aliases of one document's sections, compiled once.

    ``spec`` maps each key to its titles; the first title is the canonical one that
    ``to_markdown`` writes, the rest are aliases (Chinese and English, matched case-insensitively).
    ``loose=False`` accepts only ``#`` and bold headings, not ``title:`` or ``1. title`` lines: for
    free prose where "Next: ..." or "1. 下一步..." is a sentence, not a heading.
    """

    def __init__(self, spec: Mapping[str, Sequence[str]], *, loose: bool = True) -> None:
        self.loose = loose
        self.keys: tuple[str, ...] = tuple(spec)
        self.titles: dict[str, str] = {k: v[0] for k, v in spec.items()}
        self._key_of = {a.casefold(): k for k, names in spec.items() for a in names}
        # Longest first: "未知与假设" must be tried before "未知" (else the short one wins).
        alt = "|".join(re.escape(a) for a in sorted(self._key_of, key=len, reverse=True))
        title = rf"(?P<title>{alt})(?![^\W_])(?:[ \t]*[/／|][ \t]*(?:{alt})(?![^\W_]))*"
        self._heading = re.compile(
            rf"^[ \t]{{0,3}}(?P<hashes>#{{1,6}})?[ \t]*(?P<n1>{_NUM})?"
            rf"(?P<open>\*\*|__)?[ \t]*(?P<n2>{_NUM})?{_EMOJI}{title}"
            r"[ \t]*(?:[(（][^)）]*[)）])?[ \t]*(?P<c1>[:：])?[ \t]*(?P<close>\*\*|__)?"
            r"[ \t]*(?P<c2>[:：])?[ \t]*(?P<rest>.*?)[ \t#]*$",
            re.IGNORECASE,
        )

    def match(self, line: str) -> tuple[str, int | None, str] | None:
        """``(key, level, rest)`` when ``line`` is a heading of this table, else None.

        ``level`` is the number of ``#`` (None for bold, colon or numbered headings).
        """
        m = self._heading.match(line)
        if not m:
            return None
        if bool(m["open"]) != bool(m["close"]):
            return None  # "**目标是..." is bold prose, not a heading
        marked = m["hashes"] or m["open"]
        if not marked and not (self.loose and (m["n1"] or m["n2"] or m["c1"] or m["c2"])):
            return None
        level = len(m["hashes"]) if m["hashes"] else None
        return self._key_of[m["title"].casefold()], level, m["rest"]

    def parse(self, text: str) -> Parsed:
        """Split ``text`` into this table's sections (see the module docstring for the rules)."""
        lines = unwrap_fences((text or "").splitlines(), frozenset({"markdown", "md"}))
        parsed = self._parse_lines(lines)
        if not parsed.seen:  # maybe the whole document sits in a bare ``` wrapper
            bare = unwrap_fences(lines, frozenset({""}))
            if bare != lines and (retry := self._parse_lines(bare)).seen:
                return retry
        return parsed

    def _parse_lines(self, lines: list[str]) -> Parsed:
        kept, mask = code_mask(lines)
        chunks: list[tuple[str | None, list[str]]] = [(None, [])]  # None: preamble/unknown
        kind = "preamble"  # preamble | known | extra | dropped
        level: int | None = None
        for line, code in zip(kept, mask):
            hit = None if code else self.match(line)
            if hit:
                key, level, rest = hit
                chunks.append((key, [rest] if rest else []))
                kind = "known"
                continue
            if not code and kind == "known":
                h = _ANY_HASH_HEADING.match(line)
                if level is not None and h and len(h.group(1)) <= level:
                    chunks.append(("", [line]))  # "": an unknown section worth keeping
                    kind = "extra"
                    continue
            if not code and kind in ("known", "extra"):
                if _BREAK.match(line):
                    chunks.append((None, []))
                    kind = "dropped"
                    continue
            chunks[-1][1].append(line)
        sections = dict.fromkeys(self.keys, "")
        seen: list[str] = []
        extra: list[str] = []
        for key, body in chunks[1:]:
            content = "\n".join(body).strip()
            if key == "":
                extra.append(content)
            elif key is not None:
                seen.append(key)
                if not sections[key] and not is_placeholder(content):
                    sections[key] = content  # the first copy with content wins
        return Parsed(
            sections=sections,
            seen=seen,
            extra="\n\n".join(extra),
            preamble="\n".join(chunks[0][1]).strip(),
            truncated=len(kept) < len(lines),
        )

    def render(self, values: Mapping[str, str], *, placeholder: bool = True,
               titles: Mapping[str, str] | None = None) -> str:
        """``## title`` blocks in table order (``titles``: the language's, default the canonical
        ones); empty ones show the language's placeholder ("(未填)") or are left out."""
        titles = titles or self.titles
        blocks = []
        for key in self.keys:
            body = (values.get(key) or "").strip()
            if body or placeholder:
                blocks.append(f"## {titles[key]}\n\n{body or words().PLACEHOLDER}\n")
        return "\n".join(blocks)


def list_items(text: str) -> list[str]:
    """The items of a markdown list (``-``, ``*``, ``1.``, ``- [ ]`` ...), one string each.

    A deeper-indented item, or an unmarked line right after an item (or indented after a blank
    line), continues the item; an unindented paragraph after a blank line ends the list (trailing
    chatter). With no list markers at all, every non-empty line is an item. Items that only say
    "nothing" ("无", "none", "(未填)") are dropped.
    """
    lines = (text or "").splitlines()
    if not any(_ITEM.match(ln) for ln in lines):
        items = [ln.strip() for ln in lines if ln.strip()]
        return [i for i in items if i.casefold() not in _EMPTY_ITEMS]
    items: list[str] = []
    base: int | None = None
    blank = False
    for ln in lines:
        if not ln.strip():
            blank = True
            continue
        m = _ITEM.match(ln)
        indent = len((m.group(1) if m else ln[: len(ln) - len(ln.lstrip())]).expandtabs(4))
        if m and (base is None or indent <= base):
            base = indent if base is None else base
            items.append(_CHECKBOX.sub("", m.group(2).strip()))
        elif items and blank and indent <= (base or 0):
            break  # a paragraph after the list: the model's closing remark
        elif items:
            items[-1] = f"{items[-1]} {_CHECKBOX.sub('', (m.group(2) if m else ln).strip())}"
        blank = False
    return [i.strip() for i in items if i.strip() and i.strip().casefold() not in _EMPTY_ITEMS]


class MarkdownFile:
    """``write``/``load`` for a document dataclass with ``path``, ``parse`` and ``to_markdown``."""

    path: Path | None

    @classmethod
    def parse(cls, text: str) -> Self:  # pragma: no cover - every document defines it
        raise NotImplementedError

    def to_markdown(self) -> str:  # pragma: no cover - every document defines it
        raise NotImplementedError

    def write(self, path: str | Path, *, anchor: str | Path | None = None) -> Self:
        """Write ``to_markdown()`` to ``path`` atomically, set ``self.path``, return self.

        The documents live in the agent's workbench, so the path is followed beneath ``anchor``
        without any symlink (default: the folder above the file's folder, which is the workbench
        root's parent for the brief and the goal)."""
        write_text(_anchor(path, anchor, create=True), path, self.to_markdown())
        self.path = Path(path)
        return self

    @classmethod
    def load(cls, path: str | Path, *, anchor: str | Path | None = None, **kw: Any) -> Self | None:
        """Parse the file at ``path`` (reached as ``write`` says); None when it is missing,
        unreadable (not UTF-8, a folder) or not a regular file reached through no symlink."""
        try:
            raw = read_bytes(_anchor(path, anchor), path, limit=_MAX_DOCUMENT)
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None  # "no document yet" is a normal state for every caller
        doc = cls.parse(text, **kw)
        doc.path = Path(path)
        return doc


def _anchor(path: str | Path, anchor: str | Path | None, *, create: bool = False) -> Path:
    if anchor is not None:
        return Path(anchor)
    top = Path(os.path.abspath(path)).parent.parent
    if create:
        top.mkdir(parents=True, exist_ok=True)  # a file of its own (not a workbench's): made as before
    return top


def numbered(items: Iterable[str]) -> str:
    """``1. a`` / ``2. b`` lines (checks are referred to by number: "第 2 项")."""
    return "\n".join(f"{n}. {item}" for n, item in enumerate(items, 1))

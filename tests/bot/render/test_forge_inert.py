"""bot.render.inert: the bot's words on a forge notify no one, however a mention is spelled, checked on
the text and on what GitHub-flavoured Markdown renders of it (cmark-gfm, GitHub's own renderer)."""

from __future__ import annotations

import re
import sys
import unicodedata
from html.parser import HTMLParser

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from bot.render import pr_feedback as say
from bot.render import pull_request as pr
from bot.render.inert import BREAK, inert

# what GitHub and GitLab link as a mention: an "@" right before a name's first character
MENTION = re.compile(r"[@\ufe6b\uff20](?=[A-Za-z0-9_])")

SPELLINGS = [
    "@octocat", "cc @acme/security", "(@octocat)", "**@octocat**", "_@octocat_", "`@octocat`", "\\@octocat",
    "&#64;team", "&#064;team", "&#x40;team", "&#X40;team", "&#x0040;team", "&commat;team", "&#64team",
    "\uff20octocat", "\ufe6boctocat", "&#xFF20;octocat", "&#65131;octocat",
    "@\u200boctocat", "@\u200doctocat", "@\u2060octocat", "@\ufeffoctocat", "\u200b@octocat", "@\u00adoctocat",
    "@\u200b\u200c\u200doctocat", "@&ZeroWidthSpace;octocat", "@&zwj;octocat", "&#64;&#8203;octocat",
    "@&#111;ctocat", "@\uff4fctocat", "\u202e@octocat", "@\u202eoctocat",
    "[@octocat](https://github.com/octocat)", "[docs](https://example.com/@octocat)", "<https://x.example/@team>",
    "https://x.example/@team", "www.example.com/@team", "mail me: dev@example.com", "<dev@example.com>",
    "<span>@octocat</span>", "<b>&#64;</b>team", "@<!-- -->octocat", "> @octocat in a quote",
    "- [ ] ask @octocat", "| @octocat | table |", "# @octocat heading", "```\n@octocat in code\n```",
    "![@octocat](https://example.com/a.png)", "@@octocat", "@-@octocat", "email@@octocat",
    # raw HTML is an HTML parser's: a character reference there takes any number of leading zeros
    "<div>\n&#x0000000040;octocat\n</div>", "<div>\n&#0000000064;octocat\n</div>",
    "<div>\n&#x00000000000000000000ff20;octocat\n</div>", '<p title="&#x0000000040;octocat">hi</p>',
    "<div>\n&#64octocat &#x40octocat\n</div>",
]


class _Text(HTMLParser):
    """The text a reader sees of rendered HTML (entities decoded), alt text included."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_starttag(self, tag, attrs) -> None:
        self.parts += [value or "" for name, value in attrs if name in ("alt", "title")]


def rendered_text(markdown: str) -> str:
    """What GitHub-flavoured Markdown shows of ``markdown`` (raw HTML let through, as GitHub lets a part
    through its sanitiser), as text, NFKC-normalised so no look-alike "@" hides."""
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    parser = _Text()
    parser.feed(html)
    return unicodedata.normalize("NFKC", "".join(parser.parts))


def test_the_at_likes_are_every_character_whose_nfkc_is_at():
    from bot.render.inert import _AT_LIKE
    found = {chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i <= 0xDFFF
             and unicodedata.normalize("NFKC", chr(i)) == "@"}
    assert found == set(_AT_LIKE)


@pytest.mark.parametrize("text", SPELLINGS)
def test_no_spelling_renders_a_mention(text):
    made = inert(text)
    assert not MENTION.search(rendered_text(made)), (text, made)
    assert not MENTION.search(unicodedata.normalize("NFKC", made))
    assert inert(made) == made  # idempotent: a text made inert twice is the same


@pytest.mark.parametrize("text, kept", [
    ("&#" + "0" * 5000 + "64;octocat", "octocat"),  # an HTML parser reads it as "@"
    ("&#" + "9" * 5000 + ";@octocat", "&#" + "9" * 5000 + ";"),  # no character: as written (int() would refuse it)
    ("&#x" + "f" * 5000 + ";", "&#x" + "f" * 5000 + ";"),
])
def test_a_reference_of_thousands_of_digits_is_read_without_failing(text, kept):
    made = inert(text)
    assert kept in made and not MENTION.search(unicodedata.normalize("NFKC", made)) and inert(made) == made


def test_the_cases_would_mention_without_it():
    """The spellings are real threats: rendered as they are, these notify (so the check above is not vacuous)."""
    would = [t for t in SPELLINGS if MENTION.search(rendered_text(t))]
    for text in ("&#64;team", "&commat;team", "\\@octocat", "@&#111;ctocat", "<b>&#64;</b>team", "`@octocat`",
                 "<div>\n&#x0000000040;octocat\n</div>", '<p title="&#x0000000040;octocat">hi</p>'):
        assert text in would
    assert len(would) >= 25


@pytest.mark.parametrize("text", ["plain words", "a # heading\n\n- a list", "x = a & b; y = &amp; &lt;",
                                  "path/to/file", "price 5 @ 3", "50% off", "",
                                  "emoji 🌸 and 中文", "code `a/b`"])
def test_text_without_a_mention_is_left_as_it_is(text):
    assert inert(text) == text.replace("@ ", f"@{BREAK} ")


@pytest.mark.parametrize("text, expected", [
    ("/merge", f"{BREAK}/merge"),
    ("fine\n  /approve\n/label ~bug", f"fine\n  {BREAK}/approve\n{BREAK}/label ~bug"),
    ("\u200b/merge", f"{BREAK}/merge"),
    ("see a/b and /tmp in a line", "see a/b and /tmp in a line"),
    ("> /merge", "> /merge"),
    ("ok\n\r/merge", f"ok\n\r{BREAK}/merge"),  # GitLab deletes every \r first: this line would start with /merge
    ("\r\r/approve\r\n/close", f"\r\r{BREAK}/approve\r\n{BREAK}/close"),
])
def test_a_line_cannot_be_a_gitlab_quick_action(text, expected):
    assert inert(text) == expected and inert(expected) == expected


def test_everything_the_bot_writes_on_a_forge_is_inert():
    words = "\n".join(SPELLINGS)
    report = pr.Report(goal=f"Ping {words}", brief=words, checks=[(words, "passed")], reason=words, achieved=True)
    written = [pr.title(report, "b"), pr.body(report, thread_link="https://x.slack.com/archives/C1/p1", branch="b"),
               pr.comment(report, commits=[f"abc123 thanks {s}" for s in SPELLINGS], thread_link="L"),
               say.reply_body(sha="abc1234", permalink="https://x.slack.com/archives/C1/p1", marker="<!-- m -->"),
               say.replied_line(["https://github.com/acme/app/pull/1#issuecomment-1"])]
    for text in written:
        assert not MENTION.search(rendered_text(text)), text[:200]
        assert not re.search(r"^[ \t]*/", text, re.MULTILINE)

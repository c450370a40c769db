"""What the thread says about an open pull request's reviews and checks, and the follow-up's words.

A post quotes each remark's first line (who, where, what), links the pull request, and under
``pr_followup = "ask"`` carries **Work on this** (its value names the thread and the batch). The
follow-up's request gives the model every remark whole, with file and line, in the models'
language: these are the only forge words a model ever sees, and only from people who may steer.
Remarks and check summaries are outside text: escaped for Slack, never formatted as mrkdwn.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.split_text import clip, escape
from bot.forge.reviews import Check, Remark, one_line
from bot.render import texts
from bot.render.block_kit import MAX_FALLBACK, Payload, button, context, section
from bot.render.inert import inert
from bot.render.messages import link_url
from bot.render.pull_request import thread_markdown

__all__ = ["PR_WORK_ACTION", "checks_failed_message", "checks_pass_text", "follow_up_request", "ignored_text",
           "remarks_message", "reply_body", "replied_line"]

PR_WORK_ACTION = "flower_pr_work"  # Work on this: a follow-up on a posted batch of review remarks
QUOTE_CHARS = 200  # a remark's first line as the thread quotes it; the follow-up gets it whole
REMARK_CHARS = 4000  # one remark as the model gets it

_REQUEST = {
    "en": {"head": "Feedback on pull request {ref} of this work, from people who may steer it. Address each point "
                   "on the same branch:",
           "line": "- {author} on {where}: {said}", "review": "- {author} ({verdict}): {said}",
           "comment": "- {author}: {said}", "check": "- The check {name} failed on commit {sha}: {summary}",
           "log": "  The end of its log:",
           "verdict": {"approved": "approved", "changes_requested": "requested changes", "commented": "reviewed"}},
    "zh": {"head": "这项工作的拉取请求 {ref} 收到了有权指导它的人的反馈。请在同一分支上逐条处理：",
           "line": "- {author} 在 {where}：{said}", "review": "- {author}（{verdict}）：{said}",
           "comment": "- {author}：{said}", "check": "- 检查 {name} 在提交 {sha} 上失败：{summary}",
           "log": "  日志末尾：",
           "verdict": {"approved": "批准", "changes_requested": "要求修改", "commented": "评审"}},
}


def _said(text: str) -> str:
    """A remark's first line, quoted in the thread: escaped, cut."""
    return escape(clip(one_line(text), QUOTE_CHARS))


def _remark_line(remark: Remark) -> str:
    author = escape(remark.author)
    if remark.kind == "line":
        return texts.PR_REMARK_LINE.format(author=author, where=escape(remark.where()), said=_said(remark.body))
    if remark.kind == "review":
        verdict = texts.PR_VERDICT.get(remark.verdict, texts.PR_VERDICT["commented"])
        if not remark.body.strip():
            return texts.PR_REMARK_REVIEW_BARE.format(author=author, verdict=verdict)
        return texts.PR_REMARK_REVIEW.format(author=author, verdict=verdict, said=_said(remark.body))
    return texts.PR_REMARK_COMMENT.format(author=author, said=_said(remark.body))


def _with_button(head: str, lines: Sequence[str], *, value: str | None, auto: bool) -> Payload:
    body = "\n".join([head, *lines])
    blocks = [section(body)]
    if auto:
        blocks.append(context(texts.PR_REVIEW_AUTO))
    elif value is not None:
        blocks.append(context(texts.PR_REVIEW_ASK))
        blocks.append({"type": "actions", "block_id": "flower_pr_work",
                       "elements": [button(texts.PR_WORK_BUTTON, PR_WORK_ACTION, value, style="primary")]})
    # the body is safe mrkdwn already (every outside word escaped): fallback() would escape it twice
    return {"text": clip(body.replace("*", ""), MAX_FALLBACK), "blocks": blocks}


def remarks_message(remarks: Sequence[Remark], *, ref: str, url: str, value: str | None, auto: bool) -> Payload:
    """One post for a batch of remarks: each quoted, the pull request linked; Work on this
    (``value``) unless the follow-up started by itself (``auto``)."""
    head = texts.PR_REVIEW_HEAD.format(url=link_url(url), ref=ref)
    return _with_button(head, [_remark_line(r) for r in remarks], value=value, auto=auto)


def checks_failed_message(checks: Sequence[Check], *, sha: str, ref: str, url: str, value: str | None,
                          auto: bool) -> Payload:
    """The failing checks of commit ``sha``: name, summary, a link to each."""
    one, several = texts.PR_CHECKS_FAILED
    head = (one if len(checks) == 1 else several).format(n=len(checks), sha=sha[:7], url=link_url(url), ref=ref)
    lines = [texts.PR_CHECK_LINE.format(name=escape(c.name), summary=_said(c.summary) or "—")
             + (texts.PR_CHECK_DETAILS.format(link=link_url(c.url)) if c.url else "") for c in checks]
    return _with_button(head, lines, value=value, auto=auto)


def checks_pass_text(*, sha: str, ref: str, url: str) -> str:
    return texts.PR_CHECKS_PASS.format(sha=sha[:7], url=link_url(url), ref=ref)


def ignored_text(author: str, *, ref: str, url: str) -> str:
    return texts.PR_IGNORED.format(author=escape(author), url=link_url(url), ref=ref)


def follow_up_request(remarks: Sequence[Remark], checks: Sequence[Check], *, ref: str, sha: str,
                      language: str) -> str:
    """The follow-up's words for the model (``language``: the models'): every remark whole, with
    its file and line, and each failing check's summary and log tail."""
    words = _REQUEST.get(language, _REQUEST["en"])
    lines = [words["head"].format(ref=ref)]
    for r in remarks:
        said = clip(r.body.strip(), REMARK_CHARS)
        if r.kind == "line":
            lines.append(words["line"].format(author=r.author, where=r.where(), said=said))
        elif r.kind == "review":
            verdict = words["verdict"].get(r.verdict, words["verdict"]["commented"])
            lines.append(words["review"].format(author=r.author, verdict=verdict, said=said or "—"))
        else:
            lines.append(words["comment"].format(author=r.author, said=said))
    for c in checks:
        lines.append(words["check"].format(name=c.name, sha=sha[:7], summary=c.summary or "—"))
        tail = c.log_tail.strip().splitlines()  # the forge client kept its last lines only
        if tail:
            lines += [words["log"], *(f"    {line}" for line in tail)]
    return "\n".join(lines)


def reply_body(*, sha: str, permalink: str, marker: str) -> str:
    """The forge reply to a remark a follow-up addressed (markdown, inert), ending with its idempotency marker."""
    return f"{inert(texts.PR_REPLY.format(sha=sha[:7], link=thread_markdown(permalink)))}\n\n{marker}"


def replied_line(urls: Sequence[str]) -> str:
    """The follow-up comment's line naming the remarks it worked on (their links; inert, as all the bot
    writes on a forge)."""
    return inert(texts.PR_REPLIED.format(links=", ".join(f"[{i}]({u})" for i, u in enumerate(urls, 1))))

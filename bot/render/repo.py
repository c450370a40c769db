"""Block Kit for channel repositories: a binding, the branch a thread made, push and diff results.

Pure functions; the sentences are in ``bot.render.texts``, git's output (commit subjects, file
names) is escaped and shown as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.outside_text import mask_credentials
from bot.core.split_text import clip, escape
from bot.core.thread import ThreadKey
from bot.render import controls, texts
from bot.render.block_kit import Payload, button, context, fallback, section
from bot.repos.bindings import Binding
from bot.repos.worktrees import Result

PUSH_ACTION = "flower_push"
DIFF_ACTION = "flower_diff"
OPEN_PR_ACTION = "flower_open_pr"
DRAFT_PR_ACTION = "flower_open_draft_pr"
PR_LINK_ACTION = "flower_pr_link"  # a link button: Slack still tells the app, which only acks
MAX_COMMITS = 20

__all__ = ["DIFF_ACTION", "DRAFT_PR_ACTION", "OPEN_PR_ACTION", "PR_LINK_ACTION", "PUSH_ACTION", "PrButton",
           "binding_message", "branch_message", "not_bound_message"]


@dataclass(frozen=True)
class PrButton:
    """The pull request button of a branch message: Open (``action``) or, once one is open, a link to it."""

    label: str
    action: str = PR_LINK_ACTION
    url: str = ""


def binding_message(binding: Binding, *, changed: bool) -> Payload:
    """The channel's binding: source (a credential in its URL masked), base branch, the checkout git runs in."""
    head = texts.BOUND_NOW if changed else texts.BOUND
    source = mask_credentials(binding.source)  # before clipping: a cut URL would no longer look like one
    body = texts.BINDING.format(source=escape(clip(source, 500)), base=escape(binding.base),
                                path=escape(clip(str(binding.path), 500)))
    text = texts.BINDING_FALLBACK.format(head=head.replace("*", ""), source=source, base=binding.base,
                                         path=binding.path)
    return {"text": fallback(text), "blocks": [section(f"{head}\n{body}"), context(texts.BINDING_TAIL)]}


def not_bound_message(*, can_bind: bool) -> Payload:
    """``/repo`` in a channel with no repository."""
    return {"text": texts.NOT_BOUND.format(how=texts.HOW_TO_BIND if can_bind else texts.NO_ADMINS_TO_BIND)}


def branch_message(key: ThreadKey, result: Result, *, has_remote: bool, pr: PrButton | None = None) -> Payload:
    """The branch a finished thread made: its commits and diff stat, with Push, the pull request's
    button (``pr``) and Diff."""
    head = texts.BRANCH_HEAD.format(branch=escape(result.branch))
    shown = result.commits[-MAX_COMMITS:]
    lines = [f"• `{escape(c.split(' ', 1)[0])}` {escape(c.partition(' ')[2])}" for c in shown] or [texts.NO_COMMITS]
    if len(result.commits) > len(shown):
        lines.insert(0, texts.EARLIER_COMMITS.format(n=len(result.commits) - len(shown)))
    blocks = [section(f"{head}\n" + "\n".join(lines))]
    if result.diffstat.strip():
        blocks.append(section("```" + escape(clip(result.diffstat, 2800)) + "```"))
    if result.uncommitted:
        blocks.append(context(texts.UNCOMMITTED.format(n=len(result.uncommitted))))
    value = controls.thread_value(key)
    pin = controls.thread_value(key, result.branch)  # Push pushes the branch shown here, nothing else
    buttons = ([button(texts.PUSH_BUTTON, PUSH_ACTION, pin)] if has_remote else [])
    if pr is not None:
        shown_pr = button(pr.label, pr.action, pin, style="primary")
        buttons.append({**shown_pr, "url": pr.url} if pr.url else shown_pr)
    elif buttons:
        buttons[0]["style"] = "primary"
    buttons.append(button(texts.DIFF_BUTTON, DIFF_ACTION, value))
    blocks.append({"type": "actions", "elements": buttons})
    text = texts.BRANCH_FALLBACK.format(branch=result.branch, n=len(result.commits),
                                        diffstat=(result.diffstat.strip().splitlines() or [""])[-1])
    return {"text": fallback(text), "blocks": blocks}

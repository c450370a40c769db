"""Block Kit for channel repositories: a binding, the branch a thread made, push and diff results.

Pure functions; the sentences are in ``bot.render.texts``, git's output (commit subjects, file
names) is escaped and shown as it is.
"""

from __future__ import annotations

from bot.render import controls, texts
from bot.render.block_kit import Payload, button, context, fallback, section
from bot.render.outside import mask_credentials
from bot.repos.bindings import Binding
from bot.render.split import clip, escape
from bot.store.records import ThreadKey
from bot.repos.worktrees import Result

PUSH_ACTION = "flower_push"
DIFF_ACTION = "flower_diff"
MAX_COMMITS = 20

__all__ = ["DIFF_ACTION", "PUSH_ACTION", "binding_message", "branch_message", "not_bound_message"]


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


def branch_message(key: ThreadKey, result: Result, *, has_remote: bool) -> Payload:
    """The branch an achieved thread made: its commits and diff stat, with Push / Diff buttons."""
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
    buttons = ([button(texts.PUSH_BUTTON, PUSH_ACTION, pin, style="primary")] if has_remote else [])
    buttons.append(button(texts.DIFF_BUTTON, DIFF_ACTION, value))
    blocks.append({"type": "actions", "elements": buttons})
    text = texts.BRANCH_FALLBACK.format(branch=result.branch, n=len(result.commits),
                                        diffstat=(result.diffstat.strip().splitlines() or [""])[-1])
    return {"text": fallback(text), "blocks": blocks}

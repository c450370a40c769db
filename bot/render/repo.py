"""Block Kit for channel repositories: a binding, the branch a thread made, push and diff results.

Pure functions; git's output (commit subjects, file names) is escaped and shown as it is.
"""

from __future__ import annotations

from bot.render import controls
from bot.render.block_kit import Payload, button, context, fallback, section
from bot.repos.bindings import Binding
from bot.render.split import clip, escape
from bot.store.records import ThreadKey
from bot.repos.worktrees import Result

PUSH_ACTION = "flower_push"
DIFF_ACTION = "flower_diff"
MAX_COMMITS = 20

__all__ = ["DIFF_ACTION", "PUSH_ACTION", "binding_message", "branch_message", "not_bound_message"]


def binding_message(binding: Binding, *, changed: bool) -> Payload:
    """The channel's binding: source, base branch, the checkout git runs in."""
    head = ":link: *This channel is now bound to a repository.*" if changed else ":link: *This channel's repository*"
    body = (f"Source: `{escape(clip(binding.source, 500))}`\nBase branch: `{escape(binding.base)}`\n"
            f"Path: `{escape(clip(str(binding.path), 500))}`")
    tail = "Each new thread here works on its own branch in its own worktree."
    text = f"{head.replace('*', '')} Source: {binding.source} · base {binding.base} · path {binding.path}"
    return {"text": fallback(text), "blocks": [section(f"{head}\n{body}"), context(tail)]}


def not_bound_message(*, can_bind: bool) -> Payload:
    """``/repo`` in a channel with no repository."""
    how = ("Bind one with `@flower /repo <path or git URL> [base branch]`." if can_bind else
           "Only admins (FLOWER_ADMINS) can bind one from Slack; none are set, so add one, or edit repos.json.")
    return {"text": f"This channel is not bound to a repository: threads work in plain folders. {how}"}


def branch_message(key: ThreadKey, result: Result, *, has_remote: bool) -> Payload:
    """The branch an achieved thread made: its commits and diff stat, with Push / Diff buttons."""
    head = f":seedling: *Branch `{escape(result.branch)}`*"
    shown = result.commits[-MAX_COMMITS:]
    lines = [f"• `{escape(c.split(' ', 1)[0])}` {escape(c.partition(' ')[2])}" for c in shown] or ["_no commits yet_"]
    if len(result.commits) > len(shown):
        lines.insert(0, f"_… {len(result.commits) - len(shown)} earlier commit(s)_")
    blocks = [section(f"{head}\n" + "\n".join(lines))]
    if result.diffstat.strip():
        blocks.append(section("```" + escape(clip(result.diffstat, 2800)) + "```"))
    if result.uncommitted:
        blocks.append(context(f":warning: {len(result.uncommitted)} uncommitted file(s) are not in the branch."))
    value = controls.thread_value(key)
    buttons = ([button("Push branch", PUSH_ACTION, value, style="primary")] if has_remote else [])
    buttons.append(button("Diff as file", DIFF_ACTION, value))
    blocks.append({"type": "actions", "elements": buttons})
    text = f"Branch {result.branch}: {len(result.commits)} commit(s). " + (result.diffstat.strip().splitlines() or [""])[-1]
    return {"text": fallback(text), "blocks": blocks}

"""What the thread and an admin read about spend limits and policy: the pause, ``@flower /limit``'s
and ``@flower /policy``'s answers."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.split_text import clip
from bot.render import texts
from bot.render.block_kit import Payload, button, context, fallback, section
from bot.render.notices import cost
from bot.settings.limits import ENV, Limits
from bot.settings.policy import ChannelPolicy

__all__ = ["GO_ON_ACTION", "limit_reached", "limits_message", "policy_message"]

GO_ON_ACTION = "flower_go_on"  # a run paused at a limit goes on where it stopped


def limit_reached(scope: str, limit: float, spent: float, admins: Sequence[str], thread: str) -> Payload:
    """The pause: which limit, how much was spent, who can raise it (the admins, by mention; with
    none, the setting whoever runs flower changes), and Go on (its value ``thread``) for after."""
    head = texts.LIMIT_REACHED.format(what=texts.LIMIT_WHAT[scope], limit=cost(limit), spent=cost(spent))
    raise_it = (texts.LIMIT_RAISE.format(who=", ".join(_who(a) for a in sorted(admins)), scope=scope)
                if admins else texts.LIMIT_RAISE_ENV.format(env=ENV[scope]))  # type: ignore[index]
    go_on = {"type": "actions", "block_id": "flower_limit", "elements": [button(texts.GO_ON_BUTTON, GO_ON_ACTION, thread)]}
    return {"text": fallback(f"{head} {raise_it}".replace("*", "")), "blocks": [section(head), context(raise_it), go_on]}


def limits_message(rows: Sequence[tuple[str, float | None, float]]) -> Payload:
    """``@flower /limit``: each scope's limit here and what it has spent (``rows``: scope, limit, spent)."""
    lines = [texts.LIMIT_LINE.format(what=texts.LIMIT_WHAT[s], spent=cost(spent),
                                     limit=cost(limit) if limit is not None else texts.NO_LIMIT)
             for s, limit, spent in rows]
    body = texts.LIMITS_HEAD + "\n" + "\n".join(lines)
    return {"text": fallback(body.replace("*", "")), "blocks": [section(body), context(texts.LIMITS_HOW)]}


def policy_message(policy: ChannelPolicy, limits: Limits, *, error: str = "") -> Payload:
    """``/policy``: every setting in effect in a channel, and why the file's last edit was refused."""
    none = texts.POLICY_UNSET
    lines = [
        ("model", policy.model or texts.POLICY_DEFAULT_MODEL),
        ("allowed_users", ", ".join(_who(u) for u in sorted(policy.allowed_users)) or texts.POLICY_EVERYONE),
        ("admins", ", ".join(_who(u) for u in sorted(policy.admins)) or none),
        ("question_wait_s", f"{policy.question_wait_s:g}"),
        ("rounds", str(policy.rounds)),
        ("sandbox_domains", ", ".join(policy.sandbox_domains) or none),
        ("agent_env", ", ".join(sorted(policy.agent_env)) if policy.agent_env is not None else texts.POLICY_AS_SET),
        ("pr_followup", policy.pr_followup),
        ("pr_allowed_users", ", ".join(sorted(policy.pr_allowed_users)) or none),
        *[(f"limit ({scope})", cost(usd)) for scope, usd in limits.items()],
        ("instructions", clip(policy.instructions, 500) or none),
    ]
    body = texts.POLICY_HEAD + "\n" + "\n".join(texts.POLICY_LINE.format(key=k, value=v) for k, v in lines)
    blocks = [section(body)] + ([context(texts.POLICY_REFUSED.format(error=error))] if error else [])
    return {"text": fallback(body.replace("*", "")), "blocks": blocks}


def _who(member: str) -> str:
    """A person's mention, or a user group's (``S…``)."""
    return f"<!subteam^{member}>" if member.startswith("S") else f"<@{member}>"

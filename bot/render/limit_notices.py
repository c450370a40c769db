"""What the thread and an admin read about spend limits: the pause, and ``@flower /limit``'s answers."""

from __future__ import annotations

from collections.abc import Sequence

from bot.limits import ENV
from bot.render import texts
from bot.render.block_kit import Payload, context, fallback, section
from bot.render.notices import cost

__all__ = ["limit_reached", "limits_message"]


def limit_reached(scope: str, limit: float, spent: float, admins: Sequence[str]) -> Payload:
    """The pause: which limit, how much was spent, and who can raise it (the admins, by mention;
    with none, the setting whoever runs flower changes)."""
    head = texts.LIMIT_REACHED.format(what=texts.LIMIT_WHAT[scope], limit=cost(limit), spent=cost(spent))
    raise_it = (texts.LIMIT_RAISE.format(who=", ".join(f"<@{a}>" for a in sorted(admins)), scope=scope)
                if admins else texts.LIMIT_RAISE_ENV.format(env=ENV[scope]))  # type: ignore[index]
    return {"text": fallback(f"{head} {raise_it}".replace("*", "")), "blocks": [section(head), context(raise_it)]}


def limits_message(rows: Sequence[tuple[str, float | None, float]]) -> Payload:
    """``@flower /limit``: each scope's limit here and what it has spent (``rows``: scope, limit, spent)."""
    lines = [texts.LIMIT_LINE.format(what=texts.LIMIT_WHAT[s], spent=cost(spent),
                                     limit=cost(limit) if limit is not None else texts.NO_LIMIT)
             for s, limit, spent in rows]
    body = texts.LIMITS_HEAD + "\n" + "\n".join(lines)
    return {"text": fallback(body.replace("*", "")), "blocks": [section(body), context(texts.LIMITS_HOW)]}

"""The app's Home tab: a person's runs (state, the thread, cost, Stop while live), and for an admin
the month's spend by channel and by person against their limits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.core.split_text import clip, escape
from bot.render import texts
from bot.render.block_kit import button, context, section
from bot.render.notices import cost

__all__ = ["HOME_STOP_ACTION", "HomeRun", "home_view"]

HOME_STOP_ACTION = "flower_home_stop"
MAX_RUNS = 10


@dataclass(frozen=True)
class HomeRun:
    """One of a person's threads: its state, request, link (may be ""), cost; ``stop`` is the Stop
    button's value while its run is live (else "")."""

    state: str
    ask: str
    link: str
    cost_usd: float
    stop: str = ""


def _spent(rows: Sequence[tuple[str, float, float | None]]) -> str:
    return "\n".join(texts.HOME_SPENT.format(who=who, spent=cost(spent),
                                             limit=texts.HOME_OF_LIMIT.format(limit=cost(limit)) if limit else "")
                     for who, spent, limit in rows)


def home_view(runs: Sequence[HomeRun], *, by_channel: Sequence[tuple[str, float, float | None]] | None = None,
              by_person: Sequence[tuple[str, float, float | None]] = ()) -> dict[str, Any]:
    """The Home view: ``runs`` newest first; ``by_channel`` / ``by_person`` (who, spent, limit)
    only for an admin (None: not one)."""
    blocks: list[dict[str, Any]] = [section(texts.HOME_MINE)]
    if not runs:
        blocks.append(context(texts.HOME_NONE))
    for run in runs[:MAX_RUNS]:
        state = texts.STATUS_STATE.get(run.state, escape(run.state))
        ask = escape(clip(" ".join(run.ask.split()), 80)) or texts.EMPTY
        line = (texts.HOME_RUN.format(state=state, link=run.link, ask=ask, cost=cost(run.cost_usd)) if run.link
                else texts.HOME_RUN_PLAIN.format(state=state, ask=ask, cost=cost(run.cost_usd)))
        block = section(line)
        if run.stop:
            block["accessory"] = button(texts.STOP_BUTTON, HOME_STOP_ACTION, run.stop, style="danger",
                                        confirm=texts.STOP_CONFIRM)
        blocks.append(block)
    if by_channel is not None:
        blocks += [{"type": "divider"}, section(texts.HOME_MONTH)]
        if not by_channel:
            blocks.append(context(texts.HOME_NOTHING_SPENT))
        else:
            blocks.append(section(f"*{texts.HOME_BY_CHANNEL}*\n{_spent(by_channel)}"))
            blocks.append(section(f"*{texts.HOME_BY_PERSON}*\n{_spent(by_person)}"))
    return {"type": "home", "blocks": blocks}

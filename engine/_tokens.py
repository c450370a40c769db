"""Token counts as people read them, shared by every front end (the terminal view, the bot)."""

from __future__ import annotations


def human_tokens(n: int) -> str:
    """A token count in a few characters: ``80200`` -> ``"80.2K"``, ``1200000`` -> ``"1.2M"``.

    Below 1,000 the number is shown as it is; one decimal above, so a context size read twice
    a turn apart shows it moved.
    """
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1_000:
        return f"{n / 1_000:.1f}K"
    return str(n)

"""What one forge answer may cost the bot, whoever wrote what is in it: its size in memory, and the
token's requests (every thread's).

``MAX_REPLY_BYTES``: a page of remarks is the forge's JSON of what anyone wrote (GitLab lists a thread
with all its notes, each up to a million characters), so no answer is read past it: a list's page that
long is refused, a job's log keeps its end (where a failure says why). ``requests_left``: the rate
limit the forge says is left for the token (GitHub's ``X-RateLimit-*``, GitLab's ``RateLimit-*``
headers); under ``RESERVE`` of it the pull-request reads slow down (``bot.runs.pr_watch``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

__all__ = ["MAX_REPLY_BYTES", "RESERVE", "read_capped", "requests_left", "short"]

MAX_REPLY_BYTES = 64 << 20
RESERVE = 0.25  # below this share of the token's rate limit left, the pull-request reads slow down


async def read_capped(chunks: AsyncIterator[bytes], most: int | None = None) -> tuple[bytes, bool]:
    """The last ``most`` (default ``MAX_REPLY_BYTES``) bytes of ``chunks``, and whether any came before them."""
    most = MAX_REPLY_BYTES if most is None else most
    kept, cut = bytearray(), False
    async for chunk in chunks:
        kept += chunk
        if len(kept) > most:
            del kept[:-most]
            cut = True
    return bytes(kept), cut


def requests_left(headers: Mapping[str, str]) -> tuple[int, int] | None:
    """(requests left, the limit) as an answer's headers say them, or None when they do not."""
    for prefix in ("X-", ""):
        left, limit = headers.get(f"{prefix}RateLimit-Remaining", ""), headers.get(f"{prefix}RateLimit-Limit", "")
        if left.isdigit() and limit.isdigit():
            return int(left), int(limit)
    return None


def short(budget: tuple[int, int] | None) -> bool:
    """Whether ``budget`` (``requests_left``) is under ``RESERVE`` of the limit."""
    return budget is not None and budget[0] < budget[1] * RESERVE

"""What a thread says about a question's deadline: the note under the question, and the words
when it passes unanswered (sentences in ``bot.render.texts``; the engine decides the wait and the
default)."""

from __future__ import annotations

from bot.core.split_text import clip, escape
from bot.render import texts


def wait_words(seconds: float) -> str:
    """``30 minutes``, ``1 minute``, ``1.5 hours``, ``45 seconds``: the wait as a person reads it."""
    if seconds >= 3600:
        n, unit = round(seconds / 3600, 1), "hour"
    elif seconds >= 60:
        n, unit = round(seconds / 60, 1), "minute"
    else:
        n, unit = round(seconds, 2), "second"
    return texts.WAIT.format(n=n, unit=texts.WAIT_UNIT[unit][n != 1])


def deadline_note(wait_s: float | None, default: str | None) -> str | None:
    """The line under a question that will not wait forever; None when it waits for good (or not at all)."""
    if not wait_s:
        return None
    if default:
        return texts.DEADLINE_DEFAULT.format(wait=wait_words(wait_s), default=default)
    return texts.DEADLINE_PARKS.format(wait=wait_words(wait_s))


def timed_out(wait_s: float | None, default: str | None) -> tuple[str, str]:
    """(the closed question's note, plain; the thread's notice, mrkdwn) once the run stopped waiting.

    With a default the deadline passed and the run goes on with it. Without one the wait was
    ended by the run itself (its step was interrupted): a deadline parks the run instead (``parked``).
    """
    if default is None:
        return texts.MOVED_ON_CLOSED, texts.MOVED_ON
    within = _within(wait_s)
    return (texts.DEFAULT_TAKEN_CLOSED.format(within=within, default=default),
            texts.DEFAULT_TAKEN.format(within=within, default=escape(clip(default, 300))))


def parked(wait_s: float | None) -> str:
    """The thread's notice when a question without a default went unanswered and the run was parked."""
    return texts.PARKED.format(within=_within(wait_s))


def _within(wait_s: float | None) -> str:
    return texts.WITHIN.format(wait=wait_words(wait_s)) if wait_s and wait_s > 0 else texts.WITHIN_TIME

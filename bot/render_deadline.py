"""What a thread says about a question's deadline: the note under the question, and the words
when it passes unanswered (pure texts; the engine decides the wait and the default)."""

from __future__ import annotations

from bot.split import clip, escape


def wait_words(seconds: float) -> str:
    """``30 minutes``, ``1 minute``, ``1.5 hours``, ``45 seconds``: the wait as a person reads it."""
    if seconds >= 3600:
        n, unit = round(seconds / 3600, 1), "hour"
    elif seconds >= 60:
        n, unit = round(seconds / 60, 1), "minute"
    else:
        n, unit = round(seconds, 2), "second"
    return f"{n:g} {unit}{'' if n == 1 else 's'}"


def deadline_note(wait_s: float | None, default: str | None) -> str | None:
    """The line under a question that will not wait forever; None when it waits for good (or not at all)."""
    if not wait_s:
        return None
    if default:
        return f"If nobody answers within {wait_words(wait_s)}, I'll go on with {default}."
    return f"If nobody answers within {wait_words(wait_s)}, the run goes on with its best judgement."


def timed_out(wait_s: float | None, default: str | None) -> tuple[str, str]:
    """(the closed question's note, plain; the thread's notice, mrkdwn) once the deadline passed unanswered.

    Without a default the engine tells the model nobody answered and it goes on with its best
    judgement (recorded as an assumption); a later reply still reaches the run, or continues it.
    """
    within = f" in {wait_words(wait_s)}" if wait_s and wait_s > 0 else " in time"
    if default:
        return (f"No answer{within}: going on with {default}.",
                f"⏱️ No answer{within}: going on with *{escape(clip(default, 300))}*.")
    return (f"No answer{within}: the run went on with its best judgement.",
            f"⏱️ No answer{within}: the question is closed and the run goes on with its best judgement "
            "(written down as an assumption). Reply in this thread to correct it: your words reach the run, "
            "or continue it once it is over.")

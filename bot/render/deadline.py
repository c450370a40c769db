"""What a thread says about a question's deadline: the note under the question, and the words
when it passes unanswered (pure texts; the engine decides the wait and the default)."""

from __future__ import annotations

from bot.render.split import clip, escape


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
    return f"If nobody answers within {wait_words(wait_s)}, the run is parked until somebody does."


def timed_out(wait_s: float | None, default: str | None) -> tuple[str, str]:
    """(the closed question's note, plain; the thread's notice, mrkdwn) once the run stopped waiting.

    With a default the deadline passed and the run goes on with it. Without one the wait was
    ended by the run itself (its step was interrupted): a deadline parks the run instead (``parked``).
    """
    if default is None:
        return ("Closed without an answer: the run moved on.",
                "⏱️ The question above was closed without an answer: the run moved on. Reply here to steer it.")
    within = f" in {wait_words(wait_s)}" if wait_s and wait_s > 0 else " in time"
    return (f"No answer{within}: going on with {default}.",
            f"⏱️ No answer{within}: going on with *{escape(clip(default, 300))}*.")


def parked(wait_s: float | None) -> str:
    """The thread's notice when a question without a default went unanswered and the run was parked."""
    within = f" in {wait_words(wait_s)}" if wait_s and wait_s > 0 else " in time"
    return (f"⏸️ Parked: nobody answered the question above{within}, and the run cannot go on without it. "
            "Answer it (a button, or a reply in this thread) and the run picks up where it stopped; "
            "`/new` starts over instead.")

"""What the model reads and sees of the human channel: the ask and inbox tools' descriptions,
their input schema, and the texts the ask tool answers with."""

from __future__ import annotations

# What the model reads back from the ask tool (timeouts, the question limit, the inbox) is in
# the language tables, ``engine._lang``; the tool descriptions below are English in both.
from engine._lang import words

ASK_DESCRIPTION = (
    "Ask the person who gave you this task a question and wait for the answer. Use it only for "
    "what you cannot find out or decide yourself. Offer `options` when the likely answers are "
    "known; the person may still answer in their own words. If nobody answers in time the tool "
    "says so: then continue on your best judgement and record the assumption."
)
# With a front end that parks the run (HumanChannel(park=...)), a question without a default waits.
ASK_DESCRIPTION_PARKED = (
    "Ask the person who gave you this task a question and wait for the answer. Use it only for "
    "what you cannot find out or decide yourself. Offer `options` when the likely answers are "
    "known; the person may still answer in their own words. Name a `default` whenever you could "
    "go on without the answer: if nobody answers in time you go on with it. A question without "
    "a default pauses the whole run until someone answers, however long that takes."
)
INBOX_DESCRIPTION = (
    "Read the notes a person left for this run while you were working (returns them once, "
    "oldest first). Check it between pieces of work."
)
ASK_SCHEMA = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "description": "The question, self-contained."},
        "options": {"type": "array", "items": {"type": "string"}, "description": "Suggested answers."},
        "default": {"type": "string", "description": "What you will go on with if nobody answers in time."},
        "deadline_minutes": {
            "type": "number",
            "description": "How long to wait for an answer (never longer than the run allows).",
        },
    },
    "required": ["question"],
}


def span(seconds: float) -> str:
    """A short duration for the model, in the language in effect: ``30 分钟`` / ``30 min``."""
    w = words()
    if seconds >= 3600:
        return w.SPAN_HOURS.format(n=seconds / 3600)
    if seconds >= 60:
        return w.SPAN_MINUTES.format(n=seconds / 60)
    return w.SPAN_SECONDS.format(n=seconds)

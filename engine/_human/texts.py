"""What the model reads and sees of the human channel: the ask and inbox tools' descriptions,
their input schema, and the texts the ask tool answers with."""

from __future__ import annotations

# What the model reads back from the ask tool. Chinese like the spec's other defaults; each one
# tells it to go on and write its assumption where the brief keeps them (未知与假设).
ASSUME = "请按你的最佳判断继续,并把你做的假设写进「未知与假设」(assumptions)。"
TIMEOUT_TEXT = "在 {span} 内没有人回答。" + ASSUME
TIMEOUT_DEFAULT_TEXT = (
    "在 {span} 内没有人回答,按默认选项「{default}」继续,并把这个假设写进「未知与假设」(assumptions)。"
)
NOBODY_TEXT = "现在没有人可以回答这个问题。" + ASSUME
LIMIT_TEXT = "提问次数已用完(最多 {limit} 次),不能再问了:请自己决定。" + ASSUME
ANSWERED_BY = "(回答人:{by})"
INBOX_EMPTY = "(空) nothing new"
INBOX_HEAD = "有人在你工作时留了话(按时间顺序):"

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
    """A short Chinese duration for the model: ``30 分钟``, ``45 秒``, ``1.5 小时``."""
    if seconds >= 3600:
        return f"{seconds / 3600:g} 小时"
    if seconds >= 60:
        return f"{seconds / 60:g} 分钟"
    return f"{seconds:g} 秒"

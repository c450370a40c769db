"""What the bot shows in Slack, as payloads (``text`` fallback + ``blocks``): pure, no I/O.

The sentences are in ``bot.render.texts``; the engine's own texts (questions, verdict reasons,
step names, often Chinese) are shown as they are, escaped. Progress notices (wake, verdict,
handoff, retry, offline) are in ``bot.render.notices`` and re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from bot.core.split_text import clip, escape, utf16_len
from bot.core.thread import ACTIVE_STATES as ACTIVE
from bot.core.thread import ThreadState
from bot.render import texts
from bot.render.block_kit import (
    MAX_ACTIONS_ELEMENTS,
    MAX_BLOCKS,
    MAX_SECTION_TEXT,
    Payload,
    blocks_for,
    button,
    context,
    fallback,
    section,
)
from bot.render.notices import (
    cost,
    duration,
    event_notice,
    handoff_notice,
    offline_notice,
    restarted_notice,
    retry_notice,
    verdict_message,
    wake_banner,
)
from engine.authoring import CheckState
from engine.lang import starter_step

__all__ = [
    "ANSWER_PREFIX",
    "NEW_ACTION",
    "STOP_ACTION",
    "TERMINAL_ACTION",
    "Payload",
    "StatusState",
    "answered_message",
    "closed_question_message",
    "doing_words",
    "event_notice",
    "handoff_notice",
    "mention",
    "offline_notice",
    "parse_answer_value",
    "question_message",
    "refusal",
    "restarted_notice",
    "retry_notice",
    "stale_click_note",
    "started_message",
    "status_message",
    "summary_message",
    "verdict_message",
    "wake_banner",
]

ANSWER_PREFIX = "flower_answer:"  # + the option's index: one action id per button of a question
STOP_ACTION = "flower_stop"
NEW_ACTION = "flower_new"
TERMINAL_ACTION = "flower_terminal"  # "Continue in a terminal": the command, shown to whoever clicks
MAX_REPORT_BLOCKS = 6  # the coordinator's report in the final message: ~18,000 characters, then cut
MAX_OPTIONS = 3 * MAX_ACTIONS_ELEMENTS  # more would bury the question; the rest can be typed
StatusState = ThreadState | Literal["waiting_api"]  # the thread's state, or a run waiting out API errors
LIVE: tuple[str, ...] = (*ACTIVE, "waiting_api")  # the states whose status message has Stop / Start over
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,}")
_LINK_UNSAFE = re.compile(r"[<>|\s]")  # a permalink inside <url|label> must not close it early


def link_url(url: str) -> str:
    """``url`` safe inside ``<url|label>``: what would close the link early dropped, ``&`` escaped."""
    return escape(_LINK_UNSAFE.sub("", url))


def mention(user: str | None) -> str:
    """``<@U…>`` for a Slack user id; anything else (a terminal user, a name) escaped as is."""
    if user and _USER_ID.fullmatch(user):
        return f"<@{user}>"
    return escape(user or texts.SOMEONE)


def _asked_lead(asked_by: str) -> str:
    # the starter's own steps are flower asking: no engine step name in the thread
    named = asked_by and not starter_step(asked_by)
    return texts.QUESTION_HEAD + (texts.QUESTION_FROM.format(who=escape(asked_by)) if named else "") + "\n"


def question_message(
    question_id: int, text: str, options: Sequence[str] = (), asked_by: str = "", *, deadline_note: str | None = None
) -> Payload:
    """The question, a button per option, and a hint that a reply in the thread answers too.

    Button ``action_id`` is ``flower_answer:<index>`` and ``value`` ``<question_id>:<index>``
    (``parse_answer_value``); the full option comes from the store, so a label cut to 75
    characters loses nothing: cut labels are also listed in full under the question. Past 75
    options the rest are listed only (a reply answers them).
    """
    opts = [str(o) for o in options]
    shown = opts[:MAX_OPTIONS]
    body = text
    if any(button(o, "x", "x")["text"]["text"] != o for o in shown) or len(opts) > len(shown):
        body += "\n\n" + "\n".join(texts.QUESTION_OPTION.format(n=n, option=o) for n, o in enumerate(opts, 1))
    actions = [
        {"type": "actions", "block_id": f"flower_q:{question_id}:{n // MAX_ACTIONS_ELEMENTS}",
         "elements": [button(o, f"{ANSWER_PREFIX}{i}", f"{question_id}:{i}")
                      for i, o in enumerate(shown[n:n + MAX_ACTIONS_ELEMENTS], n)]}
        for n in range(0, len(shown), MAX_ACTIONS_ELEMENTS)
    ]
    note = escape(deadline_note) if deadline_note else ""
    blocks = blocks_for(body, lead=_asked_lead(asked_by), max_blocks=MAX_BLOCKS - len(actions) - 1)
    blocks += actions + [context(texts.REPLY_HINT + (f" · {note}" if note else ""))]
    return {"text": fallback(texts.QUESTION_FALLBACK.format(text=text)), "blocks": blocks}


def parse_answer_value(value: str) -> tuple[int, int] | None:
    """(question id, option index) from an answer button's value, or None if it is not one."""
    m = re.fullmatch(r"(\d+):(\d+)", value or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def _closed(text: str, outcome: str, asked_by: str) -> Payload:
    blocks = blocks_for(text, lead=_asked_lead(asked_by), max_blocks=MAX_BLOCKS - 10)
    blocks += blocks_for(outcome, max_blocks=9)
    return {"text": fallback(texts.CLOSED_FALLBACK.format(text=text, outcome=outcome)), "blocks": blocks}


def answered_message(text: str, answer: str, by_user_id: str | None, *, asked_by: str = "") -> Payload:
    """The question with its buttons replaced by "✅ <answer> — answered by <@user>"."""
    by = texts.ANSWERED_BY.format(who=mention(by_user_id))
    tail = f" — {by}"
    blocks = blocks_for(text, lead=_asked_lead(asked_by), max_blocks=MAX_BLOCKS - 11)
    answer_blocks = blocks_for(answer or texts.EMPTY, lead=texts.ANSWER_LEAD, max_blocks=9)
    last = answer_blocks[-1]["text"]
    if utf16_len(last["text"] + tail) <= MAX_SECTION_TEXT:
        last["text"] += tail
    else:
        answer_blocks.append(context(by))
    plain = texts.ANSWERED_FALLBACK.format(text=text, answer=answer)
    return {"text": fallback(plain, 3900) + tail, "blocks": blocks + answer_blocks}


def closed_question_message(text: str, note: str | None = None, *, asked_by: str = "") -> Payload:
    """The question with its buttons replaced by why it closed unanswered (timeout, cancelled;
    ``NO_ANSWER_IN_TIME`` when no ``note`` is given)."""
    return _closed(text, texts.CLOSED.format(note=texts.NO_ANSWER_IN_TIME if note is None else note), asked_by)


def stale_click_note(*, answer: str | None = None, by_user_id: str | None = None) -> str:
    """The ephemeral text for a click on a question already answered (or closed), mrkdwn."""
    if answer is not None:
        return texts.ALREADY_ANSWERED.format(who=mention(by_user_id), answer=escape(clip(answer, 300)))
    return texts.QUESTION_CLOSED


def doing_words(step: str, *, judging: bool = False, asking: bool = False) -> str:
    """What a run is doing, as people say it: "Asking you", "Planning", "Working", "Checking the
    work"; a step of another workflow by its own name."""
    if asking:
        return texts.DOING["asking"]
    if judging:
        return texts.DOING["judge"]
    kind = starter_step(step)
    return texts.DOING[kind] if kind else step


def status_message(
    *,
    doing: str = "",
    round: int | None = None,
    cost_usd: float = 0.0,
    elapsed_s: float = 0.0,
    state: StatusState = "running",
    thread: str = "",
    question_link: str = "",
    reason: str = "",
    unfenced: bool = False,
    heard: str = "",
    near: tuple[str, float, float] | None = None,
) -> Payload:
    """The one status message of a run, edited in place: state, what it is doing (``doing_words``),
    round, cost, elapsed.

    ``doing`` and ``round`` are shown while the run is live (the round only when given: the
    work's); while ``waiting`` the line points at the question (``question_link``, a Slack
    permalink); a failed run's ``reason`` follows the line. While queued, running or waiting it
    has Stop (``flower_stop``) and Start over (``flower_new``) buttons, whose value is ``thread``
    (what they act on; survives a restart); once finished, none. "Continue in a terminal" is
    always there: the thread shows no host path, the click shows the command to who asked.
    """
    parts: list[str] = []
    if state in LIVE:
        parts.append(texts.STATUS_DOING.format(doing=escape(clip(doing, 200))) if doing else texts.STATUS_STARTING)
        if round:
            parts.append(texts.STATUS_ROUND.format(round=round))
    parts += [cost(cost_usd), duration(elapsed_s)]
    head = texts.STATUS_STATE.get(state, escape(state))
    link = link_url(question_link)
    if state == "waiting" and link:
        head += texts.STATUS_QUESTION_LINK.format(link=link)
    line = f"{head} · " + " · ".join(parts)
    if reason.strip():
        line += "\n" + texts.STATUS_REASON.format(reason=escape(clip(" ".join(reason.split()), 500)))
    blocks: list[dict[str, Any]] = [section(line)] + ([context(texts.UNFENCED)] if unfenced else [])
    if heard.strip():  # a person's words reached the running session: said in words, not only 👀
        blocks.append(context(texts.HEARD.format(said=escape(clip(" ".join(heard.split()), 150)))))
    if near is not None:  # 80 % of a spend limit: said before the run is paused at it
        scope, limit, spent = near
        blocks.append(context(texts.NEAR_LIMIT.format(what=texts.LIMIT_WHAT[scope], spent=cost(spent),
                                                      limit=cost(limit))))
    controls = [button(texts.STOP_BUTTON, STOP_ACTION, thread or "stop", style="danger", confirm=texts.STOP_CONFIRM),
                button(texts.START_OVER_BUTTON, NEW_ACTION, thread or "new", confirm=texts.START_OVER_CONFIRM)
                ] if state in LIVE else []
    blocks.append({"type": "actions", "block_id": "flower_status", "elements": [
        *controls, button(texts.TERMINAL_BUTTON, TERMINAL_ACTION, thread or "terminal")]})
    return {"text": line.replace("*", ""), "blocks": blocks}


def started_message(queued_position: int | None = None, *, fenced: bool = True, archived: bool = False) -> Payload:
    """The first reply to a request: started now, or queued (``queued_position`` 1 = next); after
    ``/new`` it says first that the last run was ``archived``; an unfenced run
    (``FLOWER_SANDBOX=off``) says so."""
    head = texts.QUEUED.format(position=queued_position) if queued_position else texts.STARTED
    if archived:
        head = texts.ARCHIVED_NEW + " " + head
    blocks = [section(head)] + ([] if fenced else [context(texts.UNFENCED)])
    plain = head.replace("*", "") + ("" if fenced else " " + texts.UNFENCED.replace("`", ""))
    return {"text": fallback(plain), "blocks": blocks}


def summary_message(
    ok: bool, cost_usd: float, rounds: int | None, reason: str = "", *,
    thread_cost: float = 0.0, elapsed_s: float | None = None, report: str = "", judged: str = "", checks: Sequence[CheckState] = (),
    branch: str = "", checklist_link: str = "", heard: Sequence[tuple[str, int | None]] = (),
    files: Sequence[str] = (),
) -> Payload:
    """The last word of a run, for a reviewer: achieved or not (with the engine's ``reason``), what
    was done (the coordinator's ``report``), what became of words said during the run (``heard``:
    each with the round it reached, None before the work), the checklist's outcome in one line
    with a link to it (``checklist_link``; the checklist itself shows each check), the judge's
    ``judged`` reason only where a check failed or the goal was missed, what is left (the failing
    checks), the ``files`` it posted to the thread (their names), then rounds, elapsed, cost and the
    branch of a bound channel. No host path: the
    status message's "Continue in a terminal" shows it to whoever asks.

    The engine's texts are escaped and cut to fit (``MAX_REPORT_BLOCKS`` for the report); the
    payload keeps blocks free below Slack's 50 for blocks appended after these.
    """
    head = texts.SUMMARY_ACHIEVED if ok else texts.SUMMARY_NOT_ACHIEVED
    blocks = blocks_for(reason, lead=head + "\n", max_blocks=2) if reason.strip() else [section(head)]
    if report.strip():
        blocks += blocks_for(report.strip(), lead=texts.SUMMARY_DONE_HEAD + "\n", max_blocks=MAX_REPORT_BLOCKS)
    for said, at in heard[-3:]:
        blocks.append(context(_heard_line(said, at, rounds)))
    if checks:
        blocks.append(section(_checks_line(checks, checklist_link)))
    if judged.strip() and (not ok or any(c.state == "failing" for c in checks)):
        blocks += blocks_for(judged.strip(), lead=texts.SUMMARY_JUDGE_SAID, max_blocks=3)
    left = [texts.CHECK_LINE.format(mark=texts.CHECK_MARK["failing"], n=c.number, text=escape(clip(c.text, 300)),
                                    note="") for c in checks if c.state == "failing"]
    if left:
        blocks.append(section(clip(texts.SUMMARY_LEFT_HEAD + "\n" + "\n".join(left), MAX_SECTION_TEXT)))
    if files:
        blocks.append(context(texts.SUMMARY_FILES.format(names=", ".join(f"`{escape(clip(n, 100))}`" for n in files))))
    facts = []
    if rounds:
        facts.append(texts.ROUNDS[rounds != 1].format(n=rounds))
    if elapsed_s is not None:
        facts.append(duration(elapsed_s))
    if round(thread_cost, 2) > round(cost_usd, 2):  # an earlier request of the thread spent too: said once
        facts.append(texts.COST_BOTH.format(request=cost(cost_usd), thread=cost(thread_cost)))
    else:
        facts.append(cost(cost_usd))
    notes = [" · ".join(facts)]
    if branch:
        notes.append(texts.SUMMARY_BRANCH.format(branch=escape(clip(branch, 200))))
    blocks.append(context(*notes))
    plain = " ".join(p for p in (head.replace("*", ""), reason.strip(), " · ".join(facts),
                                 clip(" ".join(report.split()), 1000)) if p)
    return {"text": fallback(plain), "blocks": blocks}


def _checks_line(checks: Sequence[CheckState], link: str) -> str:
    passed = sum(c.state == "passed" for c in checks)
    mark = texts.CHECK_MARK["passed" if passed == len(checks) else
                            "failing" if any(c.state == "failing" for c in checks) else "unverifiable"]
    line = texts.SUMMARY_CHECKS[len(checks) != 1].format(mark=mark, passed=passed, total=len(checks))
    url = link_url(link)
    return line + (texts.SUMMARY_CHECKLIST_LINK.format(link=url) if url else "")


def _heard_line(said: str, at: int | None, rounds: int | None) -> str:
    """Words that reached the running work, and what followed: the rounds that ran with them."""
    if at:
        n = max(1, (rounds or at) - at + 1)
        effect, when = texts.HEARD_ROUNDS[n != 1].format(n=n), texts.HEARD_WHEN.format(round=at)
    else:
        effect, when = texts.HEARD_BEFORE_WORK, ""
    return texts.SUMMARY_HEARD.format(said=escape(clip(" ".join(said.split()), 150)), when=when, effect=effect)


def refusal(user_id: str, *, reason: Literal["user", "channel"] = "user") -> Payload:
    """The ephemeral answer to someone who may not start or steer runs here (text only)."""
    text = texts.REFUSED_CHANNEL if reason == "channel" else texts.REFUSED_USER
    return {"text": text.format(who=mention(user_id))}

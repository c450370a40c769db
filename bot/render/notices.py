"""Progress notices posted in a run's thread: the wake banner, verdicts, handoffs, retries, offline.

Pure functions from the engine's events to message payloads; the sentences are in
``bot.render.texts``, the engine's texts (reasons, failed checks, step names) are escaped and
shown as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.split_text import clip, escape
from bot.render import texts
from bot.render.block_kit import MAX_BLOCKS, Payload, blocks_for, context, fallback, section
from engine import Event
from engine.events import (
    HandoffEvent,
    HandoffPhase,
    RetryScheduled,
    TaskWarning,
    VerdictGiven,
    WaitingForApi,
    WaitingOnline,
)

__all__ = [
    "cost",
    "duration",
    "event_notice",
    "handoff_notice",
    "offline_notice",
    "restarted_notice",
    "retry_notice",
    "storm_notice",
    "unverifiable_notice",
    "verdict_message",
    "wake_banner",
]


def duration(seconds: float) -> str:
    """``42s``, ``12m 03s``, ``1h 02m``, ``2d 03h``: two units at most."""
    s = int(max(0.0, seconds))
    if s >= 86400:
        return texts.DAYS.format(d=s // 86400, h=s % 86400 // 3600)
    if s >= 3600:
        return texts.HOURS.format(h=s // 3600, m=s % 3600 // 60)
    if s >= 60:
        return texts.MINUTES.format(m=s // 60, s=s % 60)
    return texts.SECONDS.format(s=s)


def cost(usd: float) -> str:
    """``$1.23``; below ten cents one more digit (``$0.004``), so small runs don't read as free."""
    return f"${usd:.2f}" if usd >= 0.1 or usd == 0 else f"${usd:.3f}"


def _notice(head: str, body: str = "", *, note: str = "") -> Payload:
    """A headline (ready mrkdwn), an optional engine text (escaped), an optional context line."""
    blocks = blocks_for(body, lead=head + "\n", max_blocks=MAX_BLOCKS - 1) if body.strip() else [section(head)]
    if note:
        blocks.append(context(note))
    plain = head.replace("*", "") + (f"\n{body}" if body.strip() else "")
    return {"text": fallback(plain), "blocks": blocks}


def wake_banner(*, follow_up: int = 0, checks: int = 0, said: str = "") -> Payload:
    """Picking up an earlier run: requirement confirmed · the goal · follow-up #.

    ``said`` is what the person wrote to wake it (quoted): the engine then sets the goal again
    from it, so the old goal's ``checks`` are not described as the ones to be judged.
    ``follow_up`` numbers the follow-ups of the thread from 1; 0 means the run is picked up
    without new words (a restart, an answer to a parked question), and says so.
    """
    parts = [texts.WAKE_CONFIRMED]
    if said.strip():
        parts.append(texts.WAKE_REGOAL)
    elif checks:
        parts.append(texts.WAKE_CHECKS[checks != 1].format(n=checks))
    parts.append(texts.WAKE_FOLLOW_UP.format(n=follow_up) if follow_up else texts.WAKE_PICKED_UP)
    head = texts.WAKE_HEAD.format(facts=" · ".join(parts))
    body = "\n".join("> " + line for line in said.splitlines() if line.strip()) if said.strip() else ""
    return _notice(head, body)


def restarted_notice(confirming: bool, open_question: str = "") -> Payload:
    """The bot restarted under a run: it confirms the requirement again (``confirming``) or goes on,
    and the question above that still takes an answer (``open_question``, cut) is named."""
    text = texts.RUN_RESTARTED_CONFIRMING if confirming else texts.RUN_RESTARTED_GOING_ON
    if open_question.strip():
        text += texts.RESTART_OPEN_QUESTION.format(question=escape(clip(" ".join(open_question.split()), 200)))
    return {"text": text}


def verdict_message(state: str, reason: str = "", failed: Sequence[str] = (), round: int | None = None) -> Payload:
    """The judge's verdict of one round: achieved; not yet with the failed checks; unreachable.

    Anything else ("", "unclear") is shown as no clear verdict, counted as not yet (as the
    engine counts it). For unreachable, the question with its choices follows separately.
    """
    head = texts.VERDICT_HEAD.get(state, texts.VERDICT_UNCLEAR)
    head = head.format(round=round if round is not None else "?")
    body = reason.strip()
    checks = [f for f in (str(x).strip() for x in failed) if f]
    if checks:
        body += ("\n\n" if body else "") + texts.FAILED_CHECKS + "\n" + "\n".join(f"• {f}" for f in checks)
    note = texts.CHOOSE_BELOW if state == "unreachable" else ""
    return _notice(head, body, note=note)


def handoff_notice(phase: HandoffPhase, degraded: bool = False) -> Payload:
    """The context window filling up: ``near`` (warned), ``writing`` the handoff, ``done``. Said
    without token counts or paths: people read what happens, not the window's size."""
    if phase == "near":
        line = texts.CONTEXT_NEAR
    elif phase == "writing":
        line = texts.CONTEXT_FULL
    else:
        line = texts.HANDOFF_DEGRADED if degraded else texts.HANDOFF_DONE
    return _notice(line)


def retry_notice(
    attempt: int, max_attempts: int, delay_s: float, *, kind: str | None = None, error: str | None = None
) -> Payload:
    """The model did not answer (overloaded, rate-limited, network): which try, when the next."""
    why = texts.RETRY_WHY.format(kind=escape(kind)) if kind else ""
    line = texts.RETRY.format(why=why, attempt=attempt, max_attempts=max_attempts, delay=duration(delay_s))
    note = f"`{escape(clip(' '.join(error.split()), 300))}`" if error and error.strip() else ""
    return _notice(line, note=note)


def offline_notice(host: str, port: int | str, waited_s: float) -> Payload:
    """Waiting for the model's endpoint to be reachable again."""
    return _notice(texts.OFFLINE.format(host=escape(str(host)), port=escape(str(port)), waited=duration(waited_s)))


def storm_notice(phase: str, failures: int = 0, every_s: float = 0.0, error: str = "") -> Payload:
    """Waiting out API errors past the retry budget (said once), or the API answering again."""
    if phase != "waiting":
        return _notice(texts.STORM_BACK)
    first = " ".join(error.split())
    why = f" (`{escape(clip(first, 200))}`)" if first else ""
    return _notice(texts.STORM_WAITING.format(failures=failures, why=why, every=duration(every_s)))


def unverifiable_notice(count: int, total: int | str, path: str) -> Payload:
    """Some checks of the goal cannot be verified in this environment (listed in ``path``)."""
    return _notice(texts.UNVERIFIABLE.format(count=count, total=total),
                   note=texts.UNVERIFIABLE_SEE.format(path=escape(clip(path, 500))) if path else "")


def event_notice(event: Event) -> Payload | None:
    """The notice for an engine event, or None for events that only update the status line
    (step, session, turn, result, ask, interrupt, done) and for a task warning with nothing
    unverifiable."""
    match event:
        case VerdictGiven():
            return verdict_message(event.state, event.reason, event.failed, event.round)
        case HandoffEvent():
            return handoff_notice(event.phase, event.degraded)
        case RetryScheduled():
            return retry_notice(event.attempt, event.max_attempts, event.delay_s,
                                kind=event.failure, error=event.error)
        case WaitingOnline():
            return offline_notice(event.host, event.port, event.waited_s)
        case WaitingForApi():
            return storm_notice(event.phase, event.failures, event.every_s, event.error)
        case TaskWarning() if event.unverifiable:
            return unverifiable_notice(len(event.unverifiable), event.total, event.path)
    return None

"""The three knobs of resume shaping: ``TrimPolicy``, ``EphemeralPolicy`` and ``PrunePolicy``.

Kept together, apart from the passes they steer, because a runtime builds all three at once and
hands them to a store (``engine._resume.stores``); each pass reads its own at every ``load()``,
so a policy edited between two loads takes effect on the next one.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EphemeralPolicy", "PrunePolicy", "TrimPolicy"]


@dataclass
class TrimPolicy:
    """Spill tool results older than the ``keep_recent`` newest, whose text exceeds ``min_chars``.

    Spilled text goes to ``<workspace>/<spill_dirname>/<sha256[:16]>.txt`` (inside the workspace;
    a different folder from spill_guard's on purpose: that one is the cut made at once, this one
    the cut made on resume) and is replaced by a pointer line plus the first 400 characters.
    Results of ``exempt_tools`` (subagent reports, plan approvals) are never spilled. The text
    inputs of old Write/Edit calls (those whose result is outside the window) spill the same way,
    to a pointer naming the file written and the spilled copy. With the policy on, written inputs
    a later call read back or changed, views of a file a later call superseded and superseded
    attachments and todo lists are left out too (``engine._resume.shrink``), and so is the
    thinking of turns before the window (``engine._resume.reasoning``).
    """

    keep_recent: int = 20
    min_chars: int = 2000
    spill_dirname: str = ".flower/spill"
    enabled: bool = True
    # Beyond the spec: what a coordinator needs most is never spilled. A subagent's report (up
    # to 35k characters measured) is the work it bought; a plan approval is the person's decision.
    exempt_tools: tuple[str, ...] = ("Agent", "Task", "ExitPlanMode")


@dataclass
class EphemeralPolicy:
    """Expire the results of ephemeral Bash commands (``is_ephemeral``) older than the newest few.

    Only Bash results whose command ``is_ephemeral``; Read is left alone (a file's content does
    not go stale enough to mislead). ``keep_recent`` newest ephemeral results stay. Older ones
    whose text is at most ``max_chars`` long have their content replaced by ``text`` (``{age}``
    how many model turns ago; ``{cmd}``, the command, only if a host's own text asks for it);
    the content is dropped, not spilled, since re-running a glance is cheap. A result is expired
    only when the note is shorter than it (else expiry makes the context bigger), and never when
    the command prints a value the run may use again (``yields_value``: ``date``, ``pwd``...).
    A longer ephemeral result (a big ``git diff``) is not dropped: it is left to the trim pass,
    which spills it where it can be read back.
    Age: the number of assistant responses (distinct API message ids) written after the result.
    """

    enabled: bool = True
    keep_recent: int = 6
    max_chars: int = 2000
    # Departure from the spec's "[{cmd} 的结果已过期…]": the tool call just above the result
    # already shows the command, so repeating it made expiry add characters (issue 15).
    text: str = ""  # "": the language in effect's EXPIRED_TEXT (engine._lang), read when a load expires one


@dataclass
class PrunePolicy:
    """What ``PruningSessionStore`` leaves out on load.

    ``keep_denials``: how many of the newest denied calls stay (None keeps all). One, not zero:
    the newest stops the model retrying the same blocked command in the same round, while a pile
    of older ones teaches it helplessness (it stopped trying even the allowed ``git status``).
    ``interrupted_text`` carries no detail on purpose: the model needs "interrupted here", not why.
    """

    keep_denials: int | None = 1
    drop_api_errors: bool = True
    neutralize_interrupted: bool = True
    interrupted_text: str = ""  # "": the language in effect's INTERRUPTED_RESULT (engine._lang)

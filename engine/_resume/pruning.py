"""The prune pass: on resume, leave out what was an error rather than work.

Three cuts in one pass over the entries ``load()`` returns (the stored rows never change), the
last pass of ``PruningSessionStore`` and its PostgreSQL twin (``engine._resume.passes``):

- synthetic API-error messages are dropped (``isApiErrorMessage``, model ``<synthetic>``): left
  in, the leaf of the session is "API Error: ..." and the resumed model thinks it is discussing a
  network failure;
- denied tool calls (hook, permission rule, no approver) are dropped except the newest
  ``keep_denials``, the ``tool_use`` and its ``tool_result`` together so every call keeps its
  result; a person's refusal of one call is never dropped, in any CLI version (``is_denial``);
- the result left by an interruption has its body replaced by a neutral note (the entry stays).

Dropping an entry re-links its children to the nearest surviving ancestor: the CLI walks the
``parentUuid`` chain back from the leaf, and a broken link loses all earlier history on resume.

Markers, as the bundled CLI (2.1.332) writes them: a denial (PreToolUse hook ``deny``, or
``can_use_tool`` refusing) is an ``is_error`` result on an entry with ``toolDenialKind``
``"permission-rule"`` and ``toolUseResult`` ``"Error: <reason>"`` (a hook's reason reads
``"PreToolUse:<Tool> hook error: <reason>"``); an interrupted call is an ``is_error`` result
"The user doesn't want to proceed with this tool use... Correction to the text above: this call
was stopped while running..." with ``toolDenialKind`` ``"user-rejected"``, followed by a user text
"[Request interrupted by user for tool use]" (left as is).
"""

from __future__ import annotations

import json
import re
from typing import Any

from engine._lang import words
from engine._resume.chain import resume_chain
from engine._resume.entries import Entry, blocks_of, drop_calls, leave_out, result_text, tool_results
from engine._resume.policies import PrunePolicy

__all__ = ["is_api_error", "is_denial", "is_interruption", "is_person_refusal", "prune_entries"]

DENIAL_KINDS = frozenset({"permission-rule", "user-rejected", "automode-blocked"})
INTERRUPTION_KINDS = frozenset({"interrupted", "cancelled"})
INTERRUPTION_PREFIXES = (
    "[Request interrupted",  # "[Request interrupted by user for tool use]"
    "The user doesn't want to take this action right now.",  # cancelled along with the turn
    "[Tool call interrupted:",  # the session ended before the result was recorded
    "[Tool call did not complete:",  # the turn was ended to deliver a message
    "[Agent call interrupted:",
)
STOPPED_WHILE_RUNNING = "Correction to the text above: this call was stopped while running"
PERSON_REFUSED = "The user doesn't want to proceed with this tool use"
_PERSON_REFUSED_RESULTS = ("User rejected tool use",)  # the toolUseResult CLI 1.x/2.0 write
_HOOK_DENIAL = re.compile(r"^PreToolUse:\S+ hook error: ")


def is_api_error(entry: Entry) -> bool:
    """A synthetic assistant message the CLI wrote for a failed API call."""
    if entry.get("type") != "assistant":
        return False
    if entry.get("isApiErrorMessage") is True:
        return True
    message = entry.get("message")
    if not isinstance(message, dict) or message.get("model") != "<synthetic>":
        return False
    texts = [b.get("text", "") for b in blocks_of(entry) or [] if isinstance(b, dict)]
    return "error" in entry or any(str(t).startswith("API Error") for t in texts)


def is_interruption(entry: Entry, block: dict[str, Any]) -> bool:
    """A tool result the CLI wrote because the call was interrupted, not because it finished."""
    if entry.get("toolDenialKind") in INTERRUPTION_KINDS:
        return True
    text = result_text(block)
    if not block.get("is_error") or text is None:
        return False  # a successful `cat` of this very file must not match
    return text.startswith(INTERRUPTION_PREFIXES) or STOPPED_WHILE_RUNNING in text


def is_person_refusal(entry: Entry, block: dict[str, Any]) -> bool:
    """A person said no to this one call (the CLI's "The user doesn't want to proceed with this
    tool use..."), in any CLI version: 2.1.x marks it ``toolDenialKind`` ``user-rejected``, 1.x
    and 2.0 write ``toolUseResult`` "User rejected tool use" or nothing at all."""
    if not block.get("is_error") or is_interruption(entry, block):
        return False
    text = result_text(block) or ""
    return text.startswith(PERSON_REFUSED) or entry.get("toolUseResult") in _PERSON_REFUSED_RESULTS


def is_denial(entry: Entry, block: dict[str, Any]) -> bool:
    """A tool call refused before it ran by a hook, a permission rule or a missing approval.

    A person's refusal (``is_person_refusal``) is not one, whatever the CLI version: it is a
    decision about one edit that the model must keep seeing, or it redoes what was refused; the
    keep-one rule is for the hook and policy denials whose pile teaches helplessness.
    """
    if not block.get("is_error") or is_interruption(entry, block) or is_person_refusal(entry, block):
        return False
    kind = entry.get("toolDenialKind")
    if kind is not None:
        return kind in DENIAL_KINDS
    # Transcripts without toolDenialKind: recognise a hook's refusal by its wording.
    return bool(_HOOK_DENIAL.match(result_text(block) or ""))


def prune_entries(
    entries: list[Entry], policy: PrunePolicy, *, shown: list[Entry] | None = None
) -> tuple[list[Entry], dict[str, int]]:
    """The entries to show on resume, and counts: api_errors, denials, interrupted, pruned_chars.

    Only ``shown`` (default: ``resume_chain(entries).shown``, the chain the CLI resumes) is
    classified and cut; entries off it stay as they are. Edits kept entries in place (block
    removal, neutral notes, re-linked parents, over every entry so no link dangles).
    """
    if shown is None:
        shown = resume_chain(entries).shown
    report = {"api_errors": 0, "denials": 0, "interrupted": 0, "pruned_chars": 0}
    dropped: list[Entry] = []
    if policy.drop_api_errors:
        for entry in shown:
            if is_api_error(entry):
                dropped.append(entry)
                report["api_errors"] += 1
                report["pruned_chars"] += len(json.dumps(entry.get("message"), ensure_ascii=False))
    # Classify before editing: a neutralized result no longer reads as an interruption.
    found = list(tool_results(shown))
    denials = [(e, b) for e, b in found if is_denial(e, b)]
    if policy.neutralize_interrupted:
        interrupted = policy.interrupted_text or words().INTERRUPTED_RESULT
        for entry, block in found:
            text = result_text(block)
            if is_interruption(entry, block) and text != interrupted:
                report["pruned_chars"] += max(len(text or "") - len(interrupted), 0)
                block["content"] = interrupted  # no detail: "stopped here" is enough
                report["interrupted"] += 1
    # One stays, not zero: it stops a retry of the same blocked call; a pile teaches helplessness.
    keep = len(denials) if policy.keep_denials is None else max(policy.keep_denials, 0)
    old = denials[: max(len(denials) - keep, 0)]
    report["denials"] = len(old)
    report["pruned_chars"] += drop_calls(shown, {b.get("tool_use_id") for _, b in old}, dropped)
    return leave_out(entries, shown, dropped), report

"""A person's refusal of one call is kept on resume, the same for every CLI version (issue 15)."""

from __future__ import annotations

import pytest

from engine._resume.policies import PrunePolicy
from engine._resume.pruning import is_denial, is_person_refusal, prune_entries
from tests.engine.stores.shapes import Transcript, bash, results_of

REFUSED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
           "it was a file edit, the new_string was NOT written to the file). STOP what you are doing "
           "and wait for the user to tell you how to proceed.")
# How each CLI generation marks the same refusal next to that text.
MARKS = {
    "1.0.53": {},
    "2.0.42": {"toolUseResult": "User rejected tool use"},
    "2.1.119": {"toolDenialKind": "user-rejected", "toolUseResult": "User rejected tool use"},
}


@pytest.mark.parametrize("version", MARKS)
def test_refusals_stay_and_are_not_counted_as_denials(version):
    t = Transcript(version=version)
    for i in range(3):
        t.turn(("Edit", {"file_path": f"/w/{i}.py", "old_string": "a", "new_string": "b"}, REFUSED),
               is_error=True, extra=MARKS[version])
        t.user("[Request interrupted by user for tool use]")
        t.user("not that, try another way")
    t.turn(bash("rm -rf build", "PreToolUse:Bash hook error: no"), is_error=True,
           extra={"toolDenialKind": "permission-rule"} if version.startswith("2.1") else {})
    t.say("done")
    kept, report = prune_entries(t.entries, PrunePolicy(keep_denials=0))
    bodies = [b["content"] for b in results_of(kept)]
    assert bodies == [REFUSED] * 3  # the hook's denial went, the person's three refusals stayed
    assert report["denials"] == 1 and report["interrupted"] == 0


def test_a_missing_approval_is_still_a_denial():
    entry = {"type": "user", "toolDenialKind": "user-rejected"}
    block = {"type": "tool_result", "tool_use_id": "t", "is_error": True,
             "content": "Claude requested permissions to use WebFetch, but you haven't granted it yet."}
    assert is_denial(entry, block) and not is_person_refusal(entry, block)


def test_an_interrupted_call_is_not_a_refusal():
    entry = {"type": "user", "toolDenialKind": "user-rejected"}
    block = {"type": "tool_result", "tool_use_id": "t", "is_error": True, "content":
             REFUSED + " Correction to the text above: this call was stopped while running."}
    assert not is_person_refusal(entry, block) and not is_denial(entry, block)

"""PruningSessionStore: API errors, old denials and interruption debris stay out; the chain holds.

Fixtures are real CLI transcripts (tests/engine/stores/data) recorded against the fake model: a
529 answered with a synthetic error message, a PreToolUse hook denial, an interrupted Bash call,
and a turn with two parallel tool calls.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import SessionStore
from claude_agent_sdk.testing import run_session_store_conformance

from engine._resume.entries import relink
from engine._resume.policies import EphemeralPolicy, PrunePolicy, TrimPolicy
from engine._resume.pruning import is_api_error, is_denial, is_interruption, prune_entries
from engine._resume.stores import PruningSessionStore
from tests.engine.stores.backends import Backend

DATA = Path(__file__).parent / "data"
KEY = {"project_key": "proj", "session_id": "sess-1"}
NOTE = "[上一轮在此中断,这个工具结果没有产生]"


def load_sample(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines() if line]


def chain(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Root-to-leaf by parentUuid from the last message entry; fails on a dangling link."""
    by_uuid = {e["uuid"]: e for e in entries if e.get("uuid")}
    leaf = [e for e in entries if e.get("type") in ("user", "assistant", "attachment")][-1]
    out = [leaf]
    while out[-1].get("parentUuid"):
        assert out[-1]["parentUuid"] in by_uuid, f"dangling parentUuid {out[-1]['parentUuid']}"
        out.append(by_uuid[out[-1]["parentUuid"]])
    return out[::-1]


def calls_and_results(entries: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    uses, results = [], []
    for e in entries:
        content = (e.get("message") or {}).get("content")
        for b in content if isinstance(content, list) else []:
            if b.get("type") == "tool_use":
                uses.append(b["id"])
            elif b.get("type") == "tool_result":
                results.append(b["tool_use_id"])
    return uses, results


def assert_paired(entries: list[dict[str, Any]]) -> None:
    uses, results = calls_and_results(entries)
    assert sorted(uses) == sorted(results), "every tool_use keeps its tool_result and back"


def all_links_resolve(entries: list[dict[str, Any]]) -> None:
    uuids = {e["uuid"] for e in entries if e.get("uuid")}
    for e in entries:
        for name in ("parentUuid", "logicalParentUuid", "leafUuid"):
            assert e.get(name) is None or e[name] in uuids, f"{e['type']}.{name} -> {e[name]}"


def denial_session(n: int) -> list[dict[str, Any]]:
    """The recorded hook denial repeated ``n`` times in a row (call, denial, attachment), then text."""
    sample = load_sample("pretooluse_hook_deny")
    head = [e for e in sample if e["type"] in ("user", "attachment")][:11]
    call, denied, after = (next(e for e in sample if e.get("uuid", "").startswith(p))
                           for p in ("93540f12", "c6f2edef", "997aa2fe"))
    final = next(e for e in sample if e.get("uuid", "").startswith("b8a188d0"))
    out, parent = copy.deepcopy(head), head[-1]["uuid"]
    for i in range(n):
        c, d, a = copy.deepcopy(call), copy.deepcopy(denied), copy.deepcopy(after)
        c.update(uuid=f"call-{i}", parentUuid=parent)
        c["message"]["id"] = f"msg_{i}"
        c["message"]["content"][0].update(id=f"toolu_{i}", input={"command": f"rm -rf build{i}"})
        d.update(uuid=f"deny-{i}", parentUuid=f"call-{i}", sourceToolAssistantUUID=f"call-{i}")
        d["message"]["content"][0]["tool_use_id"] = f"toolu_{i}"
        a.update(uuid=f"att-{i}", parentUuid=f"deny-{i}")
        out += [c, d, a]
        parent = f"att-{i}"
    final = copy.deepcopy(final)
    final["parentUuid"] = parent
    return out + [final, {"type": "last-prompt", "lastPrompt": "clean up", "leafUuid": final["uuid"]}]


# -- classifiers on the recorded shapes --------------------------------------------------------


def _first_result(entries):
    for e in entries:
        content = (e.get("message") or {}).get("content")
        for b in content if isinstance(content, list) else []:
            if b.get("type") == "tool_result":
                return e, b
    raise AssertionError("no tool result")


def test_the_recorded_markers_classify_as_expected():
    errors = [e for e in load_sample("api_error_529") if is_api_error(e)]
    assert len(errors) == 1 and errors[0]["message"]["model"] == "<synthetic>"
    deny = _first_result(load_sample("pretooluse_hook_deny"))
    assert is_denial(*deny) and not is_interruption(*deny)
    intr = _first_result(load_sample("interrupted_bash"))
    assert is_interruption(*intr) and not is_denial(*intr)
    ok = _first_result(load_sample("tool_use_write_bash_git"))
    assert not is_denial(*ok) and not is_interruption(*ok)
    assert not any(is_api_error(e) for e in load_sample("tool_use_write_bash_git"))


@pytest.mark.parametrize(
    "fields, content, denial, interruption",
    [
        ({"toolDenialKind": "permission-rule"}, "Writes are not allowed here", True, False),
        # a person's refusal is kept in every CLI version (issue 15): not a prunable denial
        ({"toolDenialKind": "user-rejected", "toolUseResult": "User rejected tool use"},
         "The user doesn't want to proceed with this tool use. The tool use was rejected.", False, False),
        ({}, "PreToolUse:Bash hook error: rm is not allowed", True, False),  # no toolDenialKind
        ({"toolDenialKind": "interrupted"}, "[Tool call interrupted: the session ended]", False, True),
        ({"toolDenialKind": "cancelled"}, "The user doesn't want to take this action right now.", False, True),
        ({}, "[Request interrupted by user for tool use]", False, True),
        ({}, "[Tool call did not complete: the turn was ended to deliver the message]", False, True),
        ({}, "Exit code 1\nnot a git repository", False, False),  # a failed command is neither
    ],
)
def test_denial_and_interruption_markers(fields, content, denial, interruption):
    entry = {"type": "user", **fields}
    block = {"type": "tool_result", "tool_use_id": "t", "content": content, "is_error": True}
    assert is_denial(entry, block) is denial
    assert is_interruption(entry, block) is interruption


def test_text_that_only_quotes_a_marker_is_not_debris():
    entry = {"type": "user"}
    block = {"type": "tool_result", "tool_use_id": "t", "is_error": False,
             "content": "[Request interrupted by user] PreToolUse:Bash hook error: x"}
    assert not is_denial(entry, block) and not is_interruption(entry, block)


# -- the three passes --------------------------------------------------------------------------


def test_api_error_is_dropped_and_the_leaf_pointer_moves_to_its_parent():
    entries = load_sample("api_error_529")
    error = next(e for e in entries if is_api_error(e))
    kept, report = prune_entries(entries, PrunePolicy())
    assert report["api_errors"] == 1 and error not in kept
    assert "API Error" not in json.dumps(kept)
    all_links_resolve(kept)
    assert kept[-1]["type"] == "last-prompt" and kept[-1]["leafUuid"] == error["parentUuid"]
    assert chain(kept)[0]["message"]["content"] == "hello there"


def test_only_the_newest_denial_stays_and_its_pair_with_it():
    entries = denial_session(3)
    kept, report = prune_entries(entries, PrunePolicy())
    assert report["denials"] == 2
    assert calls_and_results(kept) == (["toolu_2"], ["toolu_2"])
    all_links_resolve(kept)
    path = chain(kept)
    assert path[0]["message"]["content"] == "clean up"
    assert [e["uuid"] for e in path if e["uuid"].startswith(("att", "call", "deny"))] == [
        "att-0", "att-1", "call-2", "deny-2", "att-2"
    ]


@pytest.mark.parametrize("keep, left", [(0, 0), (1, 1), (2, 2), (5, 3), (None, 3)])
def test_keep_denials(keep, left):
    kept, report = prune_entries(denial_session(3), PrunePolicy(keep_denials=keep))
    assert len(calls_and_results(kept)[0]) == left and report["denials"] == 3 - left
    assert_paired(kept)
    chain(kept)


def test_a_denied_call_among_parallel_calls_goes_alone():
    entries = load_sample("tool_use_write_bash_git")
    status = next(e for e in entries if e["type"] == "user" and "On branch" in json.dumps(e))
    status["toolDenialKind"] = "permission-rule"
    status["message"]["content"][0].update(is_error=True, content="PreToolUse:Bash hook error: no")
    kept, report = prune_entries(entries, PrunePolicy(keep_denials=0))
    assert report["denials"] == 1
    uses, _ = calls_and_results(kept)
    assert len(uses) == 3 and "git status" not in json.dumps(kept)  # Write, the long Bash, ls -la
    assert_paired(kept)
    all_links_resolve(kept)
    assert chain(kept)[0]["message"]["content"] == "do the thing"


def test_an_interrupted_result_gets_the_neutral_note_and_stays():
    entries = load_sample("interrupted_bash")
    kept, report = prune_entries(entries, PrunePolicy())
    assert report == {**report, "interrupted": 1, "denials": 0}
    entry, block = _first_result(kept)
    assert block["content"] == NOTE and block["is_error"] is True
    assert block["tool_use_id"] == "toolu_fake000100b40fe48893f0"
    assert len(kept) == len(entries)
    assert "[Request interrupted by user for tool use]" in json.dumps(kept)  # the user line stays
    assert "STOP what you are doing" not in json.dumps(kept)


def test_relink_walks_past_several_dropped_ancestors():
    entries = [
        {"uuid": "d", "parentUuid": "c"},
        {"uuid": "e", "parentUuid": None, "logicalParentUuid": "c"},
        {"type": "summary", "leafUuid": "c"},
        {"uuid": "f", "parentUuid": "x"},  # not dropped: untouched
    ]
    relink(entries, {"c": "b", "b": "a"})
    assert [e.get("parentUuid") for e in entries] == ["a", None, None, "x"]
    assert entries[1]["logicalParentUuid"] == "a" and entries[2]["leafUuid"] == "a"


def test_policies_switch_each_pass_off():
    entries = load_sample("api_error_529") + load_sample("interrupted_bash")
    kept, report = prune_entries(
        copy.deepcopy(entries), PrunePolicy(drop_api_errors=False, neutralize_interrupted=False)
    )
    assert kept == entries and report["api_errors"] == report["interrupted"] == 0


# -- the store ---------------------------------------------------------------------------------


async def test_store_prunes_on_load_and_the_rows_stay(tmp_path, backend: Backend):
    # Three denials, then the recorded interruption, then the recorded 529, as one chain.
    original = denial_session(3)
    interrupted = load_sample("interrupted_bash")[11:]
    interrupted[0]["parentUuid"] = original[-2]["uuid"]
    error = [e for e in load_sample("api_error_529") if is_api_error(e)]
    error[0]["parentUuid"] = interrupted[-2]["uuid"]
    original += interrupted + error
    store = backend.pruning(tmp_path)
    await store.append(KEY, copy.deepcopy(original))
    loaded = await store.load(KEY)
    r = store.last_report
    assert (r["api_errors"], r["denials"], r["interrupted"]) == (1, 2, 1)
    report = store.trim_report()
    assert "1 API errors dropped" in report and "2 old denied calls dropped" in report
    assert "1 interrupted results neutralized" in report
    assert_paired(loaded)
    all_links_resolve(loaded)
    assert chain(loaded)[0]["message"]["content"] == "clean up"
    assert chain(loaded)[-1]["message"]["content"][0]["text"] == "Resumed after the interrupt."
    raw = backend.raw()
    assert await raw.load(KEY) == original
    raw.close()
    store.close()


async def test_store_with_every_policy_off_is_transparent(tmp_path):
    original = load_sample("interrupted_bash")
    store = PruningSessionStore(
        tmp_path / "s.db", tmp_path, TrimPolicy(enabled=False), EphemeralPolicy(enabled=False),
        PrunePolicy(keep_denials=None, drop_api_errors=False, neutralize_interrupted=False),
    )
    await store.append(KEY, copy.deepcopy(original))
    assert await store.load(KEY) == original
    store.close()


async def test_conformance(tmp_path):
    n = itertools.count()

    def make():
        i = next(n)
        return PruningSessionStore(tmp_path / f"c{i}.db", tmp_path / f"ws{i}")

    await run_session_store_conformance(make)
    # nothing was skipped: every optional method is a real implementation, not the Protocol's
    for name in ("list_sessions", "list_session_summaries", "delete", "list_subkeys"):
        assert getattr(PruningSessionStore, name) is not getattr(SessionStore, name)

"""Sessions built from a real CLI transcript (tests/engine/stores/data, recorded from the bundled
CLI against the fake model): the recorded prompt, one model turn per tool call, a final text.

``build_session`` copies the recorded ``git status`` call and result for every call it is given
(``shapes.bash`` makes a Bash one); ``results`` reads the tool results back, in file order.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
KEY = {"project_key": "proj", "session_id": "sess-1"}
_ids = itertools.count()


def load_sample(name: str) -> list[dict[str, Any]]:
    """A recorded transcript from ``data/<name>.jsonl``."""
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines() if line]


def build_session(calls: list[tuple[str, dict[str, Any], Any]]) -> list[dict[str, Any]]:
    """The recorded prompt, one model turn per ``(tool, input, result content)``, a final text.

    Each call and result entry is a copy of the recorded ``git status`` pair, re-identified.
    """
    sample = load_sample("tool_use_write_bash_git")
    prompt = sample[0]
    call_t = next(e for e in sample if e["type"] == "assistant" and "git status" in json.dumps(e))
    use_id = call_t["message"]["content"][0]["id"]
    result_t = next(e for e in sample if e["type"] == "user" and use_id in json.dumps(e))
    final_t = sample[-2] if sample[-1]["type"] != "assistant" else sample[-1]
    entries, parent = [copy.deepcopy(prompt)], prompt["uuid"]
    for tool, inp, content in calls:
        n = next(_ids)
        call, result = copy.deepcopy(call_t), copy.deepcopy(result_t)
        call.update(uuid=f"a-{n}", parentUuid=parent)
        call["message"]["id"] = f"msg_{n}"
        call["message"]["content"] = [{"type": "tool_use", "id": f"toolu_{n}", "name": tool, "input": inp}]
        result.update(uuid=f"u-{n}", parentUuid=f"a-{n}", sourceToolAssistantUUID=f"a-{n}")
        result["message"]["content"] = [
            {"tool_use_id": f"toolu_{n}", "type": "tool_result", "content": content, "is_error": False}
        ]
        entries += [call, result]
        parent = f"u-{n}"
    final = copy.deepcopy(final_t)
    final.update(uuid="final", parentUuid=parent)
    return entries + [final]


def results(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        b for e in entries if e["type"] == "user" and isinstance(e["message"]["content"], list)
        for b in e["message"]["content"] if b.get("type") == "tool_result"
    ]

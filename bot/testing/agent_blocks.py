"""Slack's blocks for agents, checked as Slack documents them: ``plan`` with ``task_card`` tasks,
``task_card`` on its own, and ``context_actions`` with ``feedback_buttons`` / ``icon_button``.

From docs.slack.dev/reference/block-kit: a plan has a plain ``title`` and optional ``tasks``; a
task card needs ``task_id`` and ``title``, its ``status`` is one of pending / in_progress /
complete / error, its ``details`` and ``output`` are one ``rich_text`` each, its ``sources`` URL
elements. A context_actions block holds 1 to 5 feedback_buttons or icon_button elements; each
feedback button has a plain_text ``text`` of at most 75 characters and a ``value`` of at most 2,000.
"""

from __future__ import annotations

from typing import Callable

AGENT_BLOCKS = {"plan", "task_card", "context_actions"}
TASK_STATUSES = {"pending", "in_progress", "complete", "error"}
MAX_CONTEXT_ACTIONS = 5
MAX_FEEDBACK_TEXT = 75
MAX_VALUE = 2_000
MAX_ID = 255

Problems = list[str]


def agent_block_problems(block: dict, where: str) -> Problems:
    """Every way ``block`` (one of ``AGENT_BLOCKS``) breaks Slack's rules, json-pointer located."""
    check: Callable[[dict, str], Problems] = {"plan": _plan, "task_card": _task_card,
                                              "context_actions": _context_actions}[block["type"]]
    return check(block, where)


def _string(problems: Problems, value: object, where: str, *, limit: int | None = None) -> None:
    if not isinstance(value, str) or not value:
        problems.append(f"must provide a non-empty string [json-pointer:{where}]")
    elif limit is not None and len(value) > limit:
        problems.append(f"must be less than {limit + 1} characters [json-pointer:{where}]")


def _plan(block: dict, where: str) -> Problems:
    problems: Problems = []
    _string(problems, block.get("title"), f"{where}/title")
    tasks = block.get("tasks")
    if tasks is None:
        return problems
    if not isinstance(tasks, list):
        return problems + [f"must be an array [json-pointer:{where}/tasks]"]
    seen: set[str] = set()
    for i, task in enumerate(tasks):
        at = f"{where}/tasks/{i}"
        if not isinstance(task, dict) or task.get("type", "task_card") != "task_card":
            problems.append(f"must be a task_card [json-pointer:{at}]")
            continue
        problems.extend(_task_card(task, at))
        if task.get("task_id") in seen:
            problems.append(f"duplicate task_id [json-pointer:{at}/task_id]")
        seen.add(task.get("task_id"))
    return problems


def _task_card(task: dict, where: str) -> Problems:
    problems: Problems = []
    _string(problems, task.get("task_id"), f"{where}/task_id")
    _string(problems, task.get("title"), f"{where}/title")
    if task.get("status") is not None and task["status"] not in TASK_STATUSES:
        problems.append(f"must be one of {sorted(TASK_STATUSES)} [json-pointer:{where}/status]")
    for name in ("details", "output"):
        if task.get(name) is not None:
            problems.extend(_rich_text(task[name], f"{where}/{name}"))
    sources = task.get("sources")
    if sources is not None and (not isinstance(sources, list)
                                or any(not isinstance(s, dict) or s.get("type") != "url" or not s.get("url")
                                       for s in sources)):
        problems.append(f"must be an array of url source elements [json-pointer:{where}/sources]")
    return problems


def _rich_text(obj: object, where: str) -> Problems:
    if not isinstance(obj, dict) or obj.get("type") != "rich_text":
        return [f"must be a rich_text object [json-pointer:{where}]"]
    elements = obj.get("elements")
    if not isinstance(elements, list) or not elements:
        return [f"must provide elements [json-pointer:{where}/elements]"]
    return [f"must be a rich_text element [json-pointer:{where}/elements/{i}]"
            for i, e in enumerate(elements) if not isinstance(e, dict) or not str(e.get("type", "")).startswith("rich_text_")]


def _context_actions(block: dict, where: str) -> Problems:
    problems: Problems = []
    elements = block.get("elements")
    if not isinstance(elements, list) or not elements:
        return [f"must provide elements [json-pointer:{where}/elements]"]
    if len(elements) > MAX_CONTEXT_ACTIONS:
        problems.append(f"no more than {MAX_CONTEXT_ACTIONS} items allowed [json-pointer:{where}/elements]")
    action_ids: set[str] = set()
    for j, element in enumerate(elements):
        at = f"{where}/elements/{j}"
        kind = element.get("type") if isinstance(element, dict) else None
        if kind == "feedback_buttons":
            for side in ("positive_button", "negative_button"):
                problems.extend(_feedback_button(element.get(side), f"{at}/{side}"))
        elif kind == "icon_button":
            _string(problems, element.get("icon"), f"{at}/icon")
            problems.extend(_plain_text(element.get("text"), f"{at}/text", MAX_FEEDBACK_TEXT))
        else:
            problems.append(f"must be a feedback_buttons or icon_button element [json-pointer:{at}/type]")
            continue
        action_id = element.get("action_id")
        if action_id is not None:
            _string(problems, action_id, f"{at}/action_id", limit=MAX_ID)
            if action_id in action_ids:
                problems.append(f"duplicate action_id [json-pointer:{at}/action_id]")
            action_ids.add(action_id)
    return problems


def _feedback_button(button: object, where: str) -> Problems:
    if not isinstance(button, dict):
        return [f"must provide a button object [json-pointer:{where}]"]
    problems = _plain_text(button.get("text"), f"{where}/text", MAX_FEEDBACK_TEXT)
    _string(problems, button.get("value"), f"{where}/value", limit=MAX_VALUE)
    label = button.get("accessibility_label")
    if label is not None:
        _string(problems, label, f"{where}/accessibility_label", limit=MAX_FEEDBACK_TEXT)
    return problems


def _plain_text(obj: object, where: str, limit: int) -> Problems:
    if not isinstance(obj, dict) or obj.get("type") != "plain_text":
        return [f"must be a plain_text text object [json-pointer:{where}]"]
    problems: Problems = []
    _string(problems, obj.get("text"), f"{where}/text", limit=limit)
    return problems

"""What every session store writes: a key split into columns, a batch turned into JSON rows.

Shared by the SQLite and PostgreSQL stores, so both store the same text for the same entry and
refuse the same bad batches with the same words.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from claude_agent_sdk import SessionKey, SessionStoreEntry

from engine._stores.sqlite_db import StoreError

__all__ = ["JSON_DUMPS", "parse_rows", "serialize_batch", "split_key"]

JSON_DUMPS: dict[str, Any] = {"separators": (",", ":")}  # compact; ASCII, so lone surrogates survive


def split_key(key: Mapping[str, Any]) -> tuple[str, str, str]:
    """(project_key, session_id, subpath), with ``''`` for the main transcript."""
    return key["project_key"], key["session_id"], key.get("subpath") or ""


def serialize_batch(key: SessionKey, entries: list[SessionStoreEntry]) -> list[tuple[str | None, str]]:
    """(uuid, json) per entry; raises ``StoreError`` before anything is written (no half batches)."""
    label = "/".join(p for p in split_key(key) if p)
    rows: list[tuple[str | None, str]] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise StoreError(
                f"entry {i} of the batch for {label!r} is a {type(entry).__name__}, not a dict "
                f"({entry!r:.80}); nothing from this batch was written. Append JSON objects."
            )
        try:
            data = json.dumps(entry, **JSON_DUMPS)
        except (TypeError, ValueError) as exc:
            raise StoreError(
                f"entry {i} of the batch for {label!r} cannot be stored as JSON ({exc}); nothing "
                "from this batch was written. Pass only JSON values (dict, list, str, int, float, "
                "bool, None)."
            ) from exc
        uuid = entry.get("uuid")
        rows.append((uuid if isinstance(uuid, str) else None, data))
    return rows


def parse_rows(datas: list[str]) -> list[Any]:
    """The entries of a chunk of stored JSON texts, in one parse (far cheaper than one per row)."""
    return json.loads("[" + ",".join(datas) + "]") if datas else []

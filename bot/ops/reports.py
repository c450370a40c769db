"""``flower-bot usage`` and ``flower-bot audit``: the ledger and the audit trail, for whoever runs flower.

They read the bot's store (``bot.db`` or ``FLOWER_DATABASE_URL``) and nothing else of the settings
(``bot.settings.config.load_store_config``: no Slack token; a bad policy file is only a warning), so an
operator reads them while the bot itself cannot start. They print to standard output:
spend summed by channel, person, thread or model (``--format table``, ``csv`` or ``json``), and
every recorded action in order. ``--since`` takes a UTC date (``2026-12-01``); without it, all.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from bot.settings.config import Config
from bot.store.factory import open_bot_store

__all__ = ["GROUPS", "report"]

GROUPS = ("channel", "user", "thread", "model")


def _since(text: str | None) -> float:
    if not text:
        return 0.0
    try:
        return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        raise SystemExit(f"flower-bot: --since must be a date like 2026-12-01 (UTC); got {text!r}.") from None


def _parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="flower-bot", description="flower's usage ledger and audit trail")
    sub = top.add_subparsers(dest="command", required=True)
    usage = sub.add_parser("usage", help="what the runs spent, summed")
    usage.add_argument("--since", help="from this UTC date on (YYYY-MM-DD); default: everything")
    usage.add_argument("--by", choices=GROUPS, default="channel", help="sum by (default: channel)")
    usage.add_argument("--format", choices=("table", "csv", "json"), default="table")
    audit = sub.add_parser("audit", help="who started, stopped, restarted, bound, limited, opened or rated what")
    audit.add_argument("--since", help="from this UTC date on (YYYY-MM-DD); default: everything")
    audit.add_argument("--format", choices=("csv", "json"), default="csv")
    return top


def _render(rows: list[dict[str, Any]], columns: Sequence[str], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue()
    cells = [list(columns)] + [[str(r[c]) for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    return "".join("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() + "\n" for row in cells)


async def report(config: Config, argv: Sequence[str]) -> str:
    """The text ``flower-bot <argv>`` prints (``argv`` starts with ``usage`` or ``audit``)."""
    args = _parser().parse_args(list(argv))
    store = open_bot_store(config)
    try:
        since = _since(args.since)
        if args.command == "audit":
            rows = [{"at": datetime.fromtimestamp(a.at, timezone.utc).isoformat(timespec="seconds"),
                     "user": a.user, "action": a.action, "channel": a.channel, "thread": a.thread_ts,
                     "detail": a.detail} for a in await store.audit_since(since)]
            return _render(rows, ("at", "user", "action", "channel", "thread", "detail"), args.format)
        sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0, 0])
        for row in await store.usage_since(since):
            group = {"channel": row.thread.channel, "user": row.user, "model": row.model,
                     "thread": f"{row.thread.channel}/{row.thread.thread_ts}"}[args.by]
            entry = sums[group or "-"]
            entry[0] += row.cost_usd
            entry[1] += row.tokens
            entry[2] += 1
        rows = [{args.by: k, "cost_usd": round(v[0], 6), "tokens": int(v[1]), "sessions": int(v[2])}
                for k, v in sorted(sums.items(), key=lambda kv: -kv[1][0])]
        return _render(rows, (args.by, "cost_usd", "tokens", "sessions"), args.format)
    finally:
        await store.aclose()

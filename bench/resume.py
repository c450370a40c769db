"""Resume on real sessions (issue 15): what the model is shown, against the raw chain, per session.

Each transcript of the corpus (``bench.corpus``: real public Claude Code sessions, rebuilt from
their recorded sources) is appended to a ``PruningSessionStore`` with every policy on, as
``StarterRun`` builds it, then loaded as a resume would. Per session and in sum:

- shown / raw: characters of the chain the CLI resumes after ``load()`` against before it
  (``engine._resume.chain.shown_chars``), and the chain's share of the whole file;
- chain: entries reachable from the leaf (walked, history before compactions included), and
  whether the loaded chain is intact (same leaf; every shown entry that ``load()`` kept is still
  reachable);
- each policy's counts (``last_report``);
- time: a warm ``load()`` against a plain JSON parse of the same file (median of ``--repeats``).

Targets: shown <= 0.5 of raw in sum, chains intact, no load error, load <= 2x parse (median).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import median, table
from engine._resume.chain import resume_chain, shown_chars
from engine._resume.policies import EphemeralPolicy, PrunePolicy, TrimPolicy
from engine._resume.stores import PruningSessionStore

TARGET_SHOWN = 0.5
TARGET_LOAD = 2.0
COUNTS = ("expired", "stale_views", "reruns", "spilled", "inputs_spilled", "shrunk", "attachments", "todos",
          "thinking", "api_errors", "denials", "interrupted")


def _parse(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _clock(fn) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


async def measure(path: Path, root: Path, repeats: int) -> dict[str, Any]:
    """Every figure for one transcript."""
    entries = _parse(path)
    sid = next((e["sessionId"] for e in entries if e.get("sessionId")), path.stem)
    key = {"project_key": "bench", "session_id": sid}
    before = resume_chain(entries)
    ws = root / path.stem
    ws.mkdir()
    store = PruningSessionStore(root / f"{path.stem}.db", ws, policy=TrimPolicy(enabled=True),
                                ephemeral=EphemeralPolicy(), prune=PrunePolicy())
    await store.append(key, entries)
    out: dict[str, Any] = {"name": path.stem, "entries": len(entries), "error": ""}
    try:
        loaded = await store.load(key)  # the first resume writes the spill files
    except Exception as exc:  # a load error is a result here, not a crash of the benchmark
        out["error"] = f"{type(exc).__name__}: {exc}"
        store.close()
        return out
    report = dict(store.last_report)
    after = resume_chain(loaded)
    out.update(
        file_chars=path.stat().st_size, raw=report.get("shown_before", 0), shown=report.get("shown_after", 0),
        walked=before.walked, shown_entries=len(before.shown),
        broken=before.broken, intact=_intact(before.shown, after.shown, loaded)
        and (after.leaf or {}).get("uuid") == (before.leaf or {}).get("uuid"),
        **{name: report.get(name, 0) for name in COUNTS},
    )
    assert shown_chars(before.shown) == out["raw"]
    out["images"] = _image_chars(before.shown)  # never trimmed: the same in the raw and the shown chain
    parse_s, load_s = [], []
    for _ in range(repeats):  # interleaved, so drift on a shared machine hits both alike
        parse_s.append(_clock(lambda: _parse(path)))
        gc.collect()
        start = time.perf_counter()
        await store.load(key)
        load_s.append(time.perf_counter() - start)
    out["parse_ms"], out["load_ms"] = median(parse_s) * 1e3, median(load_s) * 1e3
    store.close()
    return out


def _image_chars(entries: list[dict[str, Any]]) -> int:
    """Characters of the image blocks (base64) among ``entries``' message content, nested ones too."""
    def walk(part: Any) -> int:
        if isinstance(part, list):
            return sum(walk(b) for b in part)
        if isinstance(part, dict):
            if part.get("type") == "image":
                return len(json.dumps(part, ensure_ascii=False))
            return walk(part.get("content"))
        return 0
    return sum(walk((e.get("message") or {}).get("content")) for e in entries if isinstance(e.get("message"), dict))


def _intact(before: list[dict[str, Any]], after: list[dict[str, Any]], loaded: list[dict[str, Any]]) -> bool:
    """Every entry shown before that ``load()`` kept is still on the chain after it."""
    kept = {e.get("uuid") for e in loaded}
    return {e.get("uuid") for e in before if e.get("uuid") in kept} == {e.get("uuid") for e in after}


def _report(rows: list[dict[str, Any]]) -> str:
    ok = [r for r in rows if not r["error"]]
    raw, shown = sum(r["raw"] for r in ok), sum(r["shown"] for r in ok)
    ratios = [r["load_ms"] / r["parse_ms"] for r in ok]
    body = [[r["name"][:40], r["entries"], f"{r['file_chars']:,}", f"{r['walked']}/{r['entries']}",
             f"{r['raw']:,}", f"{r['shown']:,}", f"{r['shown'] / max(r['raw'], 1):.3f}",
             ("yes" if r["intact"] else "NO") + (" (file cut before its compaction)" if r["broken"] else ""), *(r[c] for c in COUNTS),
             f"{r['parse_ms']:.1f}", f"{r['load_ms']:.1f}", f"{r['load_ms'] / r['parse_ms']:.2f}x"]
            for r in ok]
    body += [[r["name"][:40], r["entries"], "LOAD ERROR", r["error"][:60]] + [""] * (len(COUNTS) + 7) for r in rows if r["error"]]
    total_ratio = shown / max(raw, 1)
    images = sum(r["images"] for r in ok)
    load_median = median(ratios) if ratios else float("nan")
    summary = [
        f"- sessions: {len(rows)}; load errors: {len(rows) - len(ok)}",
        f"- shown / raw chain in sum: {shown:,} / {raw:,} = {total_ratio:.3f} "
        f"(target <= {TARGET_SHOWN}: {'met' if total_ratio <= TARGET_SHOWN else 'MISSED'})",
        f"- images (base64, a fixed token cost each whatever their length; never trimmed): {images:,} "
        f"characters; without them shown / raw is {(shown - images) / max(raw - images, 1):.3f}",
        f"- chains intact: {sum(r['intact'] for r in ok)}/{len(ok)}",
        f"- load / JSON parse: median {load_median:.2f}x, worst {max(ratios, default=0):.2f}x "
        f"(target <= {TARGET_LOAD}x median: {'met' if load_median <= TARGET_LOAD else 'MISSED'})",
        f"- the raw chain is {raw / max(sum(r['file_chars'] for r in ok), 1):.3f} of the files' size",
    ]
    return "\n".join(summary) + "\n\n" + table(
        ["session", "entries", "file chars", "walked/entries", "raw chain", "shown", "shown/raw",
         "intact", *COUNTS, "parse ms", "load ms", "load/parse"], body)


def run(corpus: Path, repeats: int = 3) -> str:
    """Measure every ``*.jsonl`` in ``corpus`` and return the report as Markdown."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-resume-") as tmp:
        for path in sorted(corpus.glob("*.jsonl")):
            rows.append(asyncio.run(measure(path, Path(tmp), repeats)))
    return _report(rows)


def main(argv: list[str] | None = None) -> int:
    """``python -m bench resume CORPUS [--repeats 3]`` (build CORPUS with ``python -m bench corpus``)."""
    parser = argparse.ArgumentParser(prog="python -m bench resume", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path, help="folder of transcripts (python -m bench corpus DEST)")
    parser.add_argument("--repeats", type=int, default=3, help="timed loads per session (default 3)")
    args = parser.parse_args(argv)
    print(run(args.corpus, max(1, args.repeats)))
    return 0

"""Session store benchmark (issue 2): append, resume-load and load memory at 1k / 10k / 50k entries.

Side by side in one run, on the same realistic entries (``bench.transcripts``):

- append, 100 entries a batch: ``SqliteSessionStore`` (fresh file each time) vs the SDK's
  ``InMemorySessionStore``;
- resume load: ``PruningSessionStore`` with every policy on (trim, ephemeral expiry, prune) vs
  plain ``SqliteSessionStore.load`` vs ``InMemorySessionStore.load`` vs parsing the same entries
  from a JSONL file (``[json.loads(l) for l in f]``, the floor). The pruning store's first load
  (it writes the spill files) is reported apart from the warm ones;
- peak Python memory while loading (tracemalloc) against the transcript's size as JSONL.

Every figure is the median of ``--repeats`` runs. Targets: append >= 20,000 entries/s; the
all-policies load of 10k entries <= 3x the JSONL parse; load peak <= 2x the transcript's size.
``--profile`` splits one all-policies load at 10k into its stages instead, and compares the
store's read path with a chunked one (the fix for the memory peak).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from claude_agent_sdk import InMemorySessionStore

from bench import mb, median, table
from bench.transcripts import generate
from engine._resume.expire import expire_ephemeral
from engine._resume.policies import EphemeralPolicy, PrunePolicy, TrimPolicy
from engine._resume.pruning import prune_entries
from engine._resume.spill import spill_results
from engine._resume.stores import PruningSessionStore
from engine._stores.batch import split_key as _split
from engine._stores.sqlite import SqliteSessionStore, _load_rows

SIZES = (1_000, 10_000, 50_000)
BATCH = 100
TARGET_APPEND = 20_000  # entries/s
TARGET_LOAD_RATIO = 3.0  # all-policies load / JSONL parse, at 10k entries
TARGET_PEAK_RATIO = 2.0  # load peak / JSONL bytes


def _key(entries: list[dict[str, Any]]) -> dict[str, str]:
    return {"project_key": "bench-project", "session_id": entries[0]["sessionId"]}


def _pruning(db: Path, workspace: Path) -> PruningSessionStore:
    return PruningSessionStore(db, workspace, policy=TrimPolicy(enabled=True),
                               ephemeral=EphemeralPolicy(), prune=PrunePolicy())


async def _append_all(store: Any, key: dict[str, str], entries: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    for i in range(0, len(entries), BATCH):
        await store.append(key, entries[i : i + BATCH])
    return time.perf_counter() - start


async def _timed(load: Callable[[], Awaitable[Any]]) -> float:
    gc.collect()
    start = time.perf_counter()
    result = await load()
    elapsed = time.perf_counter() - start
    del result
    return elapsed


async def _peak(load: Callable[[], Awaitable[Any]]) -> int:
    """Peak bytes Python allocated while ``load`` ran (its result included: the SDK keeps it)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = await load()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak


def _parse_jsonl(path: Path) -> Callable[[], Awaitable[list[Any]]]:
    async def load() -> list[Any]:
        with path.open(encoding="utf-8") as f:
            return [json.loads(line) for line in f]
    return load


async def bench_size(n: int, repeats: int, root: Path) -> dict[str, float]:
    """Every measurement for one transcript size; returns medians (seconds, bytes, entries/s)."""
    entries = generate(n)
    key = _key(entries)
    jsonl = root / "transcript.jsonl"
    with jsonl.open("w", encoding="utf-8") as f:
        for entry in entries:
            f.write(json.dumps(entry, separators=(",", ":"), ensure_ascii=False) + "\n")
    out: dict[str, float] = {"n": n, "jsonl_bytes": jsonl.stat().st_size}

    sqlite_s, memory_s = [], []
    for r in range(repeats):
        db = root / f"append-{r}" / "sessions.db"  # a fresh file each time; the last one is loaded
        store = SqliteSessionStore(db)
        sqlite_s.append(await _append_all(store, key, entries))
        await store.aclose()
        memory_s.append(await _append_all(InMemorySessionStore(), key, entries))
    out["append_sqlite"] = n / median(sqlite_s)
    out["append_memory"] = n / median(memory_s)

    memory = InMemorySessionStore()
    await memory.append(key, entries)
    workspace = root / "workspace"
    workspace.mkdir()
    plain, pruning = SqliteSessionStore(db), _pruning(db, workspace)
    loads: dict[str, Callable[[], Awaitable[Any]]] = {
        "jsonl": _parse_jsonl(jsonl),
        "memory": lambda: memory.load(key),
        "sqlite": lambda: plain.load(key),
        "pruning": lambda: pruning.load(key),
    }
    out["load_pruning_cold"] = await _timed(loads["pruning"])  # writes the spill files
    times: dict[str, list[float]] = {name: [] for name in loads}
    for _ in range(repeats):  # interleaved, so drift on a shared machine hits every column alike
        for name, load in loads.items():
            times[name].append(await _timed(load))
    for name, values in times.items():
        out[f"load_{name}"] = median(values)
    for name in ("jsonl", "sqlite", "pruning"):
        out[f"peak_{name}"] = median([await _peak(loads[name]) for _ in range(max(1, repeats // 2))])
    await plain.aclose()
    await pruning.aclose()
    return out


def _report(results: list[dict[str, float]]) -> str:
    append_rows, load_rows, peak_rows = [], [], []
    for r in results:
        n = f"{int(r['n']):,}"
        append_rows.append([n, f"{r['append_sqlite']:,.0f}", f"{r['append_memory']:,.0f}",
                            f"{r['append_memory'] / r['append_sqlite']:.1f}x",
                            "met" if r["append_sqlite"] >= TARGET_APPEND else "MISSED"])
        ratio = r["load_pruning"] / r["load_jsonl"]
        verdict = ("met" if ratio <= TARGET_LOAD_RATIO else "MISSED") if r["n"] == 10_000 else "-"
        load_rows.append([n, mb(r["jsonl_bytes"]), *(f"{r[f'load_{k}'] * 1e3:.1f}" for k in (
            "jsonl", "memory", "sqlite", "pruning", "pruning_cold")),
            f"{r['load_sqlite'] / r['load_jsonl']:.2f}x", f"{ratio:.2f}x", verdict])
        peaks = [r[f"peak_{k}"] / r["jsonl_bytes"] for k in ("jsonl", "sqlite", "pruning")]
        peak_rows.append([n, mb(r["jsonl_bytes"]), *(mb(r[f"peak_{k}"]) for k in (
            "jsonl", "sqlite", "pruning")), *(f"{p:.2f}x" for p in peaks),
            "met" if peaks[2] <= TARGET_PEAK_RATIO else "MISSED"])
    return "\n\n".join([
        f"Append, {BATCH} entries a batch (entries/s; target >= {TARGET_APPEND:,} for sqlite)",
        table(["entries", "SqliteSessionStore", "InMemorySessionStore", "in-memory / sqlite",
               "target"], append_rows),
        f"Resume load (ms; target: all policies <= {TARGET_LOAD_RATIO:g}x JSONL parse at 10k)",
        table(["entries", "JSONL MB", "JSONL parse", "InMemory.load", "Sqlite.load",
               "Pruning.load (all policies)", "Pruning first load", "sqlite / JSONL",
               "all policies / JSONL", "target"], load_rows),
        f"Peak Python memory while loading (tracemalloc, MB; target <= {TARGET_PEAK_RATIO:g}x the JSONL)",
        table(["entries", "JSONL MB", "JSONL parse", "Sqlite.load", "Pruning.load",
               "parse / JSONL", "sqlite / JSONL", "all policies / JSONL", "target"], peak_rows),
    ])


def profile(n: int = 10_000) -> str:
    """The stages of one warm all-policies load, timed apart (what dominates the load), and the
    store's read path against a chunked parse (time and peak memory, no policies)."""
    entries = generate(n)
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        store = _pruning(root / "sessions.db", root / "ws")
        key = _key(entries)
        asyncio.run(store.append(key, entries))
        asyncio.run(store.load(key))  # write the spill files once, as a first resume would
        stages: dict[str, list[float]] = {}

        def stage(name: str, fn: Callable[[], Any]) -> Any:
            start = time.perf_counter()
            value = fn()
            stages.setdefault(name, []).append(time.perf_counter() - start)
            return value

        sql = ("SELECT e.data FROM meta m JOIN entries e ON e.key_id = m.id "
               "WHERE m.project_key = ? AND m.session_id = ? AND m.subpath = '' ORDER BY e.seq")
        spill_dir = store._spill
        def fetch_all():
            return store._call(lambda conn: conn.execute(sql, tuple(key.values())).fetchall())

        def read_whole():  # the store's read before it parsed in chunks
            return json.loads("[" + ",".join(d for (d,) in fetch_all()) + "]")

        for _ in range(3):  # a whole read split into its stages, then the passes
            gc.collect()
            rows = stage("SQLite query (fetch rows)", fetch_all)
            text = stage("join rows into one JSON array", lambda: "[" + ",".join(d for (d,) in rows) + "]")
            loaded = stage("json.loads", lambda: json.loads(text))
            del rows, text
            stage("expire_ephemeral", lambda: expire_ephemeral(loaded, store.ephemeral))
            stage("spill_results (files exist)", lambda: spill_results(loaded, store.policy, spill_dir))
            stage("prune_entries", lambda: prune_entries(loaded, store.prune))
            del loaded
        size = sum(len(json.dumps(e, separators=(",", ":"), ensure_ascii=False).encode()) + 1
                   for e in entries)
        del entries
        variants = {  # the read as the store does it, and the candidate fix for its memory peak
            "whole (fetchall, join, one json.loads)": read_whole,
            "chunked (fetchmany(200), one json.loads a chunk)": lambda: store._call(_chunked, sql, key),
            "as the store reads now": lambda: store._call(_load_rows, _split(key)),
        }
        rows_out = []
        for name, fn in variants.items():
            ms = median([_clock(fn) for _ in range(3)]) * 1e3
            rows_out.append([name, f"{ms:.1f}", f"{_traced_peak(fn) / size:.2f}x"])
        store.close()
    medians = {name: median(values) for name, values in stages.items()}
    total = sum(medians.values())
    return table(["stage (median of 3)", "ms", "share"],
                 [[name, f"{s * 1e3:.1f}", f"{s / total:.0%}"] for name, s in medians.items()]
                 ) + "\n\n" + table(["read path (no policies)", "ms", "peak / JSONL"], rows_out)


def _chunked(conn: Any, sql: str, key: dict[str, str]) -> list[Any]:
    out: list[Any] = []
    cursor = conn.execute(sql, tuple(key.values()))
    while rows := cursor.fetchmany(200):
        out.extend(json.loads("[" + ",".join(d for (d,) in rows) + "]"))
    return out


def _clock(fn: Callable[[], Any]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _traced_peak(fn: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        result = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del result
    return peak


def run(sizes: tuple[int, ...] = SIZES, repeats: int = 3) -> str:
    """Run every size (one temp folder each) and return the report as Markdown tables."""
    results = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
            start = time.perf_counter()
            results.append(asyncio.run(bench_size(n, repeats if n < 50_000 else max(1, repeats - 1),
                                                  Path(tmp))))
            print(f"  store: {n:,} entries measured in {time.perf_counter() - start:.0f}s", flush=True)
    return _report(results)


def main(argv: list[str] | None = None) -> int:
    """``python -m bench store [--sizes 1000,10000] [--repeats 3] [--profile]``."""
    parser = argparse.ArgumentParser(prog="python -m bench store", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES),
                        help="comma-separated transcript sizes in entries (default %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (default 3)")
    parser.add_argument("--profile", action="store_true",
                        help="only split one 10k all-policies load into its stages")
    args = parser.parse_args(argv)
    if args.profile:
        print(profile())
        return 0
    sizes = tuple(int(s) for s in args.sizes.split(",") if s.strip())
    print(run(sizes, max(1, args.repeats)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""ShapedStore: one wrapper runs one ordered pass list over either backend; the exported stores are just that.

What each pass cuts is tested with the pass (test_trim, test_prune, test_shrink...); here: that the
named stores are a backend plus ``TRIMMING`` or ``PRUNING``, that the list runs in its order with
switched-off passes adding nothing, and that the wrapper stands in for its backend.
"""

from __future__ import annotations

import copy
from pathlib import Path

from engine._resume.passes import PRUNING, TRIMMING, Load, Pass
from engine._resume.policies import EphemeralPolicy, PrunePolicy, TrimPolicy
from engine._resume.shaped import ShapedStore
from engine._resume.stores import (
    PruningPostgresSessionStore,
    PruningSessionStore,
    TrimmingPostgresSessionStore,
    TrimmingSessionStore,
)
from engine._stores.postgres import PostgresSessionStore
from engine._stores.sqlite import SqliteSessionStore
from tests.engine.stores.backends import Backend
from tests.engine.stores.recorded import KEY, build_session
from tests.engine.stores.shapes import bash

PRUNING_ORDER = ["expire", "stale_views", "reruns", "shrink_written", "spill_folder", "spill_results",
                 "spill_inputs", "images", "todos", "attachments", "thinking", "prune"]


def test_the_order_is_one_list_and_pruning_is_trimming_then_prune():
    assert [p.name for p in PRUNING] == PRUNING_ORDER
    assert PRUNING[:-1] == TRIMMING


def test_each_named_store_is_a_backend_and_a_list(tmp_path: Path):
    made = [TrimmingSessionStore(tmp_path / "a.db", tmp_path), PruningSessionStore(tmp_path / "b.db", tmp_path),
            TrimmingPostgresSessionStore("postgresql://u@/db?host=/nowhere", tmp_path),
            PruningPostgresSessionStore("postgresql://u@/db?host=/nowhere", tmp_path)]
    backends = [SqliteSessionStore, SqliteSessionStore, PostgresSessionStore, PostgresSessionStore]
    for store, backend in zip(made, backends):
        assert type(store.backend) is backend and isinstance(store, backend) and isinstance(store, ShapedStore)
        assert store.passes == (PRUNING if "Pruning" in type(store).__name__ else TRIMMING)
        store.close()
    assert made[0].path == tmp_path / "a.db" and made[2].url.startswith("postgresql://")  # the backend's
    assert isinstance(made[1], TrimmingSessionStore) and isinstance(made[3], TrimmingPostgresSessionStore)
    assert not isinstance(made[0], PostgresSessionStore) and not isinstance(made[2], SqliteSessionStore)


async def test_passes_run_in_list_order_and_a_switched_off_one_adds_nothing(tmp_path: Path, backend: Backend):
    ran: list[str] = []

    def step(name: str, on: bool = True) -> Pass:
        def run(load: Load) -> dict[str, int]:
            ran.append(name)
            return {name: len(load.shown)}
        return Pass(name, run, lambda _load: on)

    original = build_session([bash("ls", "x" * 80)] * 3)
    store = ShapedStore(backend.raw(), [step("b"), step("off", on=False), step("a")], tmp_path)
    await store.append(KEY, copy.deepcopy(original))
    assert await store.load(KEY) == original  # these passes edit nothing
    assert ran == ["b", "a"] and "off" not in store.last_report
    assert store.last_report["b"] == store.last_report["a"] > 0
    assert store.last_report["shown_before"] == store.last_report["shown_after"]
    assert await store.load({**KEY, "session_id": "never"}) is None and ran == ["b", "a"]
    await store.aclose()


async def test_the_wrapper_with_the_pruning_list_is_the_pruning_store(tmp_path: Path):
    session = build_session([bash("git status", "On branch main\n" * 8)] * 9 + [bash("make", "m" * 5000)] * 22)
    policies = (TrimPolicy(keep_recent=2), EphemeralPolicy(keep_recent=1), PrunePolicy(keep_denials=0))
    named = PruningSessionStore(tmp_path / "a.db", tmp_path, *policies)
    wrapped = ShapedStore(SqliteSessionStore(tmp_path / "b.db"), PRUNING, tmp_path, *policies)
    for store in (named, wrapped):
        await store.append(KEY, copy.deepcopy(session))
    assert await named.load(KEY) == await wrapped.load(KEY) != session
    assert named.last_report == wrapped.last_report and named.trim_report() == wrapped.trim_report()
    named.close()
    wrapped.close()

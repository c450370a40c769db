"""The engine's shape, read from its source with ``ast``: the ``flower`` command is a front end
like the bot (it imports only the engine's public faces), and no two of the engine's packages
import each other, however roundabout.

Every ``import`` and ``from ... import`` statement counts, wherever it is written (module level,
inside a function, under ``if TYPE_CHECKING:``): each one is a dependency a reader follows.
"""

from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
ENGINE = ROOT / "engine"
FACES = ("engine", "engine.events", "engine.lang", "engine.host", "engine.authoring")
CLI = "engine._cli"


@dataclass(frozen=True)
class Import:
    """One module an import statement loads, and where the statement is written."""

    source: str  # the importing module, dotted
    where: str  # file:line
    target: str  # the module it loads, relative imports resolved
    statement: str


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _modules() -> dict[str, Path]:
    """Every module under ``engine/``, dotted (a package by its ``__init__.py``)."""
    found = {}
    for path in sorted(ENGINE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> list[Import]:
    """Every import statement of ``name``, one ``Import`` per module it loads (``from pkg import
    sub`` loads ``pkg.sub`` when that is a module, else ``pkg``)."""
    found = []
    where = path.relative_to(ROOT).as_posix()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [Import(name, f"{where}:{node.lineno}", a.name, f"import {a.name}") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(package[: len(package) - (node.level - 1)] + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append(Import(name, f"{where}:{node.lineno}", sub if sub in MODULES else base,
                                    f"from {'.' * node.level}{node.module or ''} import {alias.name}"))
    return sorted(found, key=lambda i: int(i.where.rsplit(":", 1)[1]))


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


# -- the flower command is a front end --------------------------------------------------------------


def test_the_flower_command_imports_only_the_engines_public_faces():
    wrong = [f"{imp.where}: `{imp.statement}` loads {imp.target}"
             for name, found in IMPORTS.items() if _within(name, CLI)
             for imp in found
             if _within(imp.target, "engine") and imp.target not in FACES and not _within(imp.target, CLI)]
    assert wrong == [], (
        "engine/_cli is a front end, like the bot: it imports the engine's public faces only "
        f"({', '.join(FACES)}), besides its own modules; import each name from its face, or export "
        "it from the face it belongs to:\n" + "\n".join(wrong))


def test_the_scan_sees_the_command_and_its_imports():
    cli = [name for name in MODULES if _within(name, CLI)]
    assert {"engine._cli.command", "engine._cli.view", "engine._cli.words"} <= set(cli)
    faces = {imp.target for name in cli for imp in IMPORTS[name]}
    assert {"engine", "engine.events", "engine.lang", "engine.host", "engine.authoring"} <= faces


# -- no package cycles ---------------------------------------------------------------------------------


def package_of(module: str) -> str:
    """The node a module counts in: its first two dotted parts (``engine._stores.sqlite`` ->
    ``engine._stores``); a top-level module (``engine._events``, a face) is its own, and the
    package's ``__init__`` is ``engine``."""
    return ".".join(module.split(".")[:2])


def package_graph(imports: dict[str, list[Import]]) -> dict[str, dict[str, Import]]:
    """Package -> the packages it imports, each with the first import (in file order) that does."""
    graph: dict[str, dict[str, Import]] = {}
    for name, found in sorted(imports.items()):
        edges = graph.setdefault(package_of(name), {})
        for imp in found:
            if _within(imp.target, "engine") and package_of(imp.target) != package_of(name):
                edges.setdefault(package_of(imp.target), imp)
    return graph


def components(graph: dict[str, dict[str, Import]]) -> list[set[str]]:
    """The strongly connected components of more than one package: each holds a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = set()
            while True:
                w = stack.pop()
                members.add(w)
                if w == v:
                    break
            if len(members) > 1:
                out.append(members)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def shortest_cycle(graph: dict[str, dict[str, Import]], start: str, members: set[str]) -> list[str]:
    """The shortest chain start -> ... -> start within one component."""
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph.get(v, {})):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if w in members and w not in previous:
                previous[w] = v
                queue.append(w)
    raise AssertionError(f"{start} is in a component but on no cycle")


def cycles(graph: dict[str, dict[str, Import]]) -> list[str]:
    """Each component's shortest cycle from each member, once per distinct chain, every import
    named where it is written; the last one is the import that closes the cycle."""
    chains: dict[frozenset[tuple[str, str]], str] = {}
    for members in components(graph):
        for start in sorted(members):
            cycle = shortest_cycle(graph, start, members)
            edges = frozenset(zip(cycle, cycle[1:]))
            if edges not in chains:
                steps = [f"{a} ({graph[a][b].where}: `{graph[a][b].statement}`)" for a, b in zip(cycle, cycle[1:])]
                chains[edges] = " -> ".join([*steps, cycle[-1]]) + f"  [closed by {graph[cycle[-2]][start].where}]"
    return list(chains.values())


def test_no_two_packages_of_the_engine_import_each_other():
    found = cycles(package_graph(IMPORTS))
    assert found == [], (
        "package cycles in engine/ (move the shared piece to the lower package, or pass a callable):\n"
        + "\n".join(found))


def test_the_cycle_finder_names_the_import_that_closes_a_cycle():
    a = Import("engine._stores.archive", "engine/_stores/archive.py:19", "engine._resume.stores", "from x import y")
    b = Import("engine._resume.stores", "engine/_resume/stores.py:20", "engine._stores.sqlite", "from z import w")
    c = Import("engine._run.runtime", "engine/_run/runtime.py:1", "engine._stores.sqlite", "from v import u")
    graph = package_graph({"engine._stores.archive": [a], "engine._resume.stores": [b], "engine._run.runtime": [c]})
    assert components(graph) == [{"engine._resume", "engine._stores"}]
    assert cycles(graph) == [
        "engine._resume (engine/_resume/stores.py:20: `from z import w`) -> "
        "engine._stores (engine/_stores/archive.py:19: `from x import y`) -> "
        "engine._resume  [closed by engine/_stores/archive.py:19]"]

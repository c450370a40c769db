"""The bot/engine contract, read from the source with ``ast``: who may import what, no cycles, sizes.

Every ``import`` and ``from ... import`` statement counts, wherever it is (module level, inside a
function, under ``if TYPE_CHECKING:``), because each one is a dependency a reader has to follow.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "bot")
TEST_KITS = ("engine.testing", "bot.testing")
MAX_LINES = 400


def _parse(path: Path) -> ast.Module:
    """``path``'s syntax tree. CPython 3.11 can raise a spurious "AST constructor recursion depth
    mismatch" SystemError in a process whose threads parsed before (python/cpython#106905, fixed
    in 3.12): the same parse is tried again then, once."""
    source = path.read_text(encoding="utf-8")
    try:
        return ast.parse(source, filename=str(path))
    except SystemError:
        return ast.parse(source, filename=str(path))


@dataclass(frozen=True)
class Module:
    """One ``.py`` file under a package: its dotted name, its path and whether it is a package."""

    name: str
    path: Path
    is_package: bool

    @property
    def where(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    @property
    def production(self) -> bool:
        return not any(_within(self.name, kit) for kit in TEST_KITS)


@dataclass(frozen=True)
class Import:
    """One imported name as Python resolves it: ``target`` is the module the statement loads."""

    source: Module
    line: int
    target: str  # dotted module name, relative imports resolved
    statement: str  # the statement as written, for messages

    @property
    def at(self) -> str:
        return f"{self.source.where}:{self.line}"


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found[".".join(parts)] = Module(".".join(parts), path, is_package)
    return found


MODULES = _modules()


def _resolve_base(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module a ``from`` statement names (``from ..x import y`` -> ``pkg.x``)."""
    if node.level == 0:
        return node.module or ""
    package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    if node.level - 1 > len(package):
        raise AssertionError(f"{module.where}:{node.lineno}: relative import goes above the top package")
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: Module) -> list[Import]:
    """Every import statement in ``module``, one ``Import`` per module it loads."""
    tree = _parse(module.path)
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(module, node.lineno, alias.name, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_base(module, node)
            dots = "." * node.level
            for alias in node.names:
                statement = f"from {dots}{node.module or ''} import {alias.name}"
                # ``from pkg import submodule`` loads the submodule; ``from pkg import name`` loads pkg.
                sub = f"{base}.{alias.name}"
                target = sub if sub in MODULES else base
                found.append(Import(module, node.lineno, target, statement))
    return sorted(found, key=lambda i: i.line)


IMPORTS = {name: _imports(module) for name, module in MODULES.items()}


def _ours(target: str) -> str | None:
    """The longest module of ours that ``target`` names (``engine.x.Y`` -> ``engine.x``), or None."""
    parts = target.split(".")
    while parts:
        name = ".".join(parts)
        if name in MODULES:
            return name
        parts.pop()
    return None


def test_the_scan_sees_both_packages():
    assert "engine" in MODULES and "bot" in MODULES
    assert sum(len(found) for found in IMPORTS.values()) > 100


# The engine's public faces: the top level (the spec's API and what front ends need beyond it),
# and four named submodules: the typed events, the language, what hosts reuse and what workflow
# authors compose (each declares its own ``__all__``).
ENGINE_FACES = ("engine", "engine.events", "engine.lang", "engine.host", "engine.authoring")


def test_the_bot_imports_only_the_engines_public_faces():
    wrong = [
        f"{imp.source.name} ({imp.at}): `{imp.statement}` reaches into {imp.target!r}; "
        "import it from one of the engine's faces, `from engine import X` (a front end's), "
        "`from engine.events import X`, `from engine.lang import X`, `from engine.host import X` or "
        "`from engine.authoring import X` (export it there if it is not yet)"
        for name, found in IMPORTS.items() if _within(name, "bot")
        for imp in found if _within(imp.target, "engine") and imp.target not in ENGINE_FACES
    ]
    assert wrong == [], "\n".join(wrong)


def test_the_flower_command_imports_only_the_engines_public_faces():
    """``engine/_cli`` is a second front end, like the bot: besides its own modules it imports the
    engine's public faces only."""
    cli = [name for name in IMPORTS if _within(name, "engine._cli")]
    assert {"engine._cli.command", "engine._cli.view", "engine._cli.words"} <= set(cli)  # the scan sees it
    wrong = [
        f"{imp.at}: `{imp.statement}` loads {imp.target}; import it from one of {', '.join(ENGINE_FACES)} "
        "(export it from the face it belongs to if it is not yet)"
        for name in cli for imp in IMPORTS[name]
        if _within(imp.target, "engine") and imp.target not in ENGINE_FACES and not _within(imp.target, "engine._cli")
    ]
    assert wrong == [], "\n".join(wrong)


def test_no_name_has_two_faces():
    """Each public name is declared in exactly one face's ``__all__`` and resolves there (how many
    the top level holds beyond the spec's names is tests/engine/test_public_api.py's, which reads
    the spec)."""
    import importlib

    faces = {face: importlib.import_module(face) for face in ENGINE_FACES}
    unresolved = [f"{face}.{n}" for face, module in faces.items() for n in module.__all__ if not hasattr(module, n)]
    assert unresolved == []
    where: dict[str, list[str]] = {}
    for face, module in faces.items():
        for n in module.__all__:
            where.setdefault(n, []).append(face)
    twice = {n: faces_of for n, faces_of in where.items() if len(faces_of) > 1}
    assert twice == {}, f"names exported more than once (keep each in one face): {twice}"


def _bot_layers() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The layer map ``bot/__init__.py``'s docstring draws, highest first: (layer, its packages)."""
    import bot

    doc = bot.__doc__ or ""
    rows = doc[doc.index("    layer     packages"):].splitlines()[1:]
    layers = []
    for row in rows:
        if not row.startswith("    ") or not row.strip():
            break
        name, *rest = row.split()
        layers.append((name, tuple(word for word in rest if word.startswith("bot."))))
    return tuple(layers)


# A module may import its own layer and those below it, never one above; it belongs to the layer
# whose package holds it.
BOT_LAYERS = _bot_layers()


def test_the_layer_map_is_read_from_the_code():
    assert [name for name, _ in BOT_LAYERS] == ["wiring", "inbound", "runs", "outbound", "render", "ops", "store",
                                               "settings", "clients", "core"]


def _layer(name: str) -> int | None:
    return next((i for i, (_, prefixes) in enumerate(BOT_LAYERS) if any(_within(name, p) for p in prefixes)), None)


def test_every_bot_module_has_a_layer():
    unplaced = [m.where for name, m in MODULES.items()
                if _within(name, "bot") and name != "bot" and m.production and _layer(name) is None]
    assert unplaced == [], "modules in no layer of BOT_LAYERS (add them to one):\n" + "\n".join(unplaced)


def test_no_bot_import_runs_up_a_layer():
    wrong = []
    for name, found in IMPORTS.items():
        if not MODULES[name].production or (mine := _layer(name)) is None:
            continue
        for imp in found:
            target = _ours(imp.target)
            theirs = _layer(target) if target is not None and MODULES[target].production else None
            if theirs is not None and theirs < mine:
                wrong.append(f"{imp.at}: `{imp.statement}`: {BOT_LAYERS[mine][0].split(':')[0]} imports "
                             f"{BOT_LAYERS[theirs][0].split(':')[0]}, a layer above it; move the shared part down")
    assert wrong == [], "\n".join(wrong)


def test_no_two_modules_share_a_file_name():
    """A name names one thing, across both packages: ``threads.py`` in three folders meant three
    things (``__init__`` and ``__main__`` are Python's names, not ours; a private ``_events.py``
    behind its public face ``events.py`` is one thing, told apart by the underscore)."""
    seen: dict[str, list[str]] = {}
    for module in MODULES.values():
        if module.production and not module.is_package:
            seen.setdefault(module.path.stem, []).append(module.where)
    wrong = [f"{' and '.join(paths)} share the name {short}.py; rename one by what it holds"
             for short, paths in sorted(seen.items()) if len(paths) > 1 and short != "main"]
    assert wrong == [], "\n".join(wrong)


def test_the_bots_root_holds_at_most_four_modules():
    """Everything else lives in the package of its layer: a newcomer reads the layers off the folders."""
    root = sorted(p.name for p in (ROOT / "bot").glob("*.py"))
    assert len(root) <= 4, f"bot/ holds {len(root)} modules ({', '.join(root)}); move the new one into its layer's package"


def _package(name: str) -> str:
    """The package a module counts in for package cycles: ``bot.runs.jobs`` -> ``bot.runs``; a
    module at a package's top (``bot.main``, ``engine._tree``) is its own node."""
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else name


def test_no_two_packages_import_each_other():
    """Folders read as layers only if no two of them lean on each other, even through others."""
    edges: dict[str, dict[str, Import]] = {}
    for src, targets in _graph().items():
        edges.setdefault(_package(src), {})
        for target, imp in targets.items():
            if _package(src) != _package(target):
                edges[_package(src)].setdefault(_package(target), imp)
    cycles = _cycles(edges)
    assert cycles == [], "packages that import each other (each import named where it is written):\n" + "\n".join(cycles)


def test_every_bot_error_is_a_flower_error_drawn_in_the_tree():
    """One error tree: each error the bot defines is a FlowerError, defined in ``bot/errors.py`` and
    drawn in its docstring."""
    import importlib

    from engine import FlowerError

    tree = importlib.import_module("bot.errors").__doc__ or ""
    wrong = []
    for name, module in MODULES.items():
        if not _within(name, "bot") or not module.production or name == "bot.__main__":
            continue
        for attr, value in vars(importlib.import_module(name)).items():
            if (isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == name
                    and not attr.startswith("_")):
                if name != "bot.errors":
                    wrong.append(f"{module.where}: {attr} is defined outside the error tree; move it to bot/errors.py")
                elif not issubclass(value, FlowerError):
                    wrong.append(f"{module.where}: {attr} is no FlowerError; derive it from engine.FlowerError")
                elif f" {attr}" not in tree:
                    wrong.append(f"{module.where}: {attr} is missing from the error tree in its docstring")
    assert wrong == [], "\n".join(wrong)


def test_the_engines_events_import_nothing_of_the_engine():
    """The typed events are the engine's lowest module: everything reports through them."""
    wrong = [f"{imp.at}: `{imp.statement}`" for imp in IMPORTS["engine._events"]
             if _within(imp.target, "engine") and imp.target != "engine._errors"]
    assert wrong == [], "\n".join(wrong)


def test_production_code_never_imports_a_test_kit():
    wrong = [
        f"{imp.source.name} ({imp.at}): `{imp.statement}` loads the test kit {imp.target!r}; "
        "production code must not depend on it (move what it needs out of the kit)"
        for name, found in IMPORTS.items() if MODULES[name].production
        for imp in found if any(_within(imp.target, kit) for kit in TEST_KITS)
    ]
    assert wrong == [], "\n".join(wrong)


def _graph() -> dict[str, dict[str, Import]]:
    """Production module -> the production modules it imports, each with its first import."""
    graph: dict[str, dict[str, Import]] = {}
    for name, found in IMPORTS.items():
        if not MODULES[name].production:
            continue
        edges = graph.setdefault(name, {})
        for imp in found:
            target = _ours(imp.target)
            if target and target != name and MODULES[target].production:
                edges.setdefault(target, imp)
    return graph


def _components(graph: dict[str, dict[str, Import]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (a cycle each)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                members.append(w)
                if w == v:
                    break
            if len(members) > 1:
                out.append(sorted(members))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _shortest_cycle(graph: dict[str, dict[str, Import]], start: str, members: set[str]) -> list[str]:
    """The shortest path start -> ... -> start inside one component."""
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph[v]):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if w not in previous:
                previous[w] = v
                queue.append(w)
    raise AssertionError(f"{start} is in a component but on no cycle")  # cannot happen


def _cycles(graph: dict[str, dict[str, Import]]) -> list[str]:
    """Each distinct shortest cycle of ``graph``, as ``a (file:line) -> b (file:line) -> a``."""
    chains: dict[frozenset[tuple[str, str]], str] = {}
    for members in _components(graph):
        for start in members:
            cycle = _shortest_cycle(graph, start, set(members))
            edges = frozenset(zip(cycle, cycle[1:]))
            if edges in chains:
                continue
            steps = [f"{a} ({graph[a][b].at}: `{graph[a][b].statement}`)" for a, b in zip(cycle, cycle[1:])]
            chains[edges] = " -> ".join([*steps, cycle[-1]])
    return list(chains.values())


def test_the_import_graph_has_no_cycle():
    cycles = _cycles(_graph())
    assert cycles == [], "import cycles (each import named where it is written):\n" + "\n".join(cycles)


def test_the_cycle_finder_reports_a_chain():
    a, b = MODULES["engine"], MODULES["bot"]
    imp_ab, imp_ba = Import(a, 1, "bot", "import bot"), Import(b, 2, "engine", "import engine")
    graph = {"engine": {"bot": imp_ab}, "bot": {"engine": imp_ba}}
    assert _components(graph) == [["bot", "engine"]]
    assert _shortest_cycle(graph, "bot", {"bot", "engine"}) == ["bot", "engine", "bot"]


def test_no_production_module_is_over_the_size_limit():
    wrong = []
    for module in MODULES.values():
        if not module.production:
            continue
        lines = len(module.path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            wrong.append(f"{module.name} ({module.where}:{MAX_LINES + 1}): {lines} lines, over the "
                         f"{MAX_LINES}-line limit from line {MAX_LINES + 1} on; split it by concern")
    assert wrong == [], "\n".join(wrong)


@pytest.mark.timeout(120)
def test_importing_both_packages_is_silent_with_warnings_as_errors():
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", "import bot, engine"],
        cwd=ROOT, capture_output=True, text=True, timeout=110,
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # this checkout's code, not an installed copy
    )
    assert (done.returncode, done.stderr) == (0, ""), (
        f"`python -W error -c 'import bot, engine'` exited {done.returncode}; the traceback names the "
        f"module and line:\n{done.stderr}"
    )


def _test_module(name: str) -> bool:
    """A test module's name (``tests.bot.test_store``) or a conftest's, by its last dotted part."""
    last = name.rsplit(".", 1)[-1]
    return last.startswith("test_") or last == "conftest"


def test_no_test_file_imports_a_test_module():
    """What test files share lives outside them: a test module imported by another is imported a
    second time (its tests and fixtures come along, under a second name), and moving it breaks the
    importer. Every ``.py`` under tests/, each import statement wherever it is."""
    wrong = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        tree = _parse(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = "." * node.level + (node.module or "")
                # ``from tests.bot import test_repos`` loads a test module too
                names = [base, *(f"{base}.{alias.name}" if base.strip(".") else base + alias.name
                                 for alias in node.names)]
            else:
                continue
            wrong += [f"{path.relative_to(ROOT).as_posix()}:{node.lineno}: `{ast.unparse(node)}` imports {name!r}, "
                      "a test_*.py or conftest.py; move the shared part into a helpers module (tests/helpers/, "
                      "tests/bot/helpers/, or one beside the tests that is no test_*.py), a shared fixture "
                      "into the conftest.py of the folder that needs it"
                      for name in dict.fromkeys(names) if _test_module(name)]
    assert wrong == [], "\n".join(wrong)

"""The public API as the spec writes it, read off the spec itself: every name of the spec's API
(``from flower import Runtime, ...`` there, ``from engine import Runtime, ...`` here) imports from
``engine`` and is in its ``__all__``; the top level adds at most 15 names beyond them (what the
front ends need); each other face (engine.events, engine.lang, engine.host, engine.authoring)
declares its own ``__all__``, every name of which imports; every error is exported from the top.

The spec is the folder ``../shared/spec/`` beside the checkout (README, Architecture). Its API
page says it covers "os 62 símbolos públicos do __all__ de topo", but its index table was lost in
the export: the list is read from what the pages still say (``spec_names`` below, rule by rule),
60 names; the other two of the original page's index, ``normalize`` and ``Ask``, are described by
no page here (the engine's typed events and its ``Question``/``Answer`` stand where they stood).
"""

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

import engine
import engine.authoring
import engine.events
import engine.host
import engine.lang

FACES = ("engine", "engine.events", "engine.lang", "engine.host", "engine.authoring")
SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec"
BEYOND_THE_SPEC = 15  # names the top level may hold beyond the spec's: what the front ends need
LOST_FROM_THE_INDEX = {"normalize", "Ask"}  # in the original page's index; no page here has them

# The continuity pages describe resilience's three probes in prose, each with its arguments.
PROBES = {
    "reachable": "reachable(host, port, timeout=5.0)",
    "endpoint": "decidido por endpoint()",
    "classify": 'classify(text) retorna "transient" / "fatal" / "unknown"',
}
IDENT = r"[A-Za-z_]\w*"


@cache
def _pages() -> dict[str, str]:
    if not SPEC.is_dir():
        pytest.skip(f"the spec is not beside this checkout ({SPEC.name}/ in ../shared/); these tests read it")
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(SPEC.glob("*.txt"))}


def _api_page() -> str:
    """The page whose title is "API Python"."""
    (page,) = [text for text in _pages().values() if text.startswith("API Python")]
    return page


def _headings(page: str) -> list[str]:
    return [line[:-1].strip() for line in page.splitlines() if line.endswith("¶")]


def _example_imports() -> list[list[str]]:
    """Each ``from flower import a, b`` line of every page, as its names."""
    found = re.findall(r"^from flower import ([^#\n]+)", "\n".join(_pages().values()), re.MULTILINE)
    return [[name.strip() for name in names.split(",")] for names in found]


@cache
def spec_names() -> frozenset[str]:
    """The spec's public names, each rule reading the text that states it."""
    page, pages = _api_page(), _pages()
    names: set[str] = set()
    # 1. the examples' imports (the API page's first line of code among them)
    for line in _example_imports():
        names.update(line)
    # 2. every heading of the API page that names code: ``clarify_step()``, ``isolated() /
    #    wants_isolation()``, or ``Workbench`` when the page shows ``class Workbench`` or ``Runtime(``
    headings = _headings(page)
    for text in headings:
        if re.fullmatch(rf"{IDENT}\(\)(?:\s*/\s*{IDENT}\(\))*", text):
            names.update(re.findall(r"(\w+)\(\)", text))
        elif re.fullmatch(IDENT, text) and re.search(rf"^(?:class {text}\b|{text}\()", page, re.MULTILINE):
            names.add(text)
    # 3. "Os cinco textos de regras": the five constants are in __all__; the page names two of them
    #    (WORKER_RULES, JUDGE_RULES), one per role of the role factory: <ROLE>_RULES
    assert "As cinco constantes estão em __all__" in page and {"WORKER_RULES", "JUDGE_RULES"} <= set(
        re.findall(r"\b[A-Z]+_RULES\b", page))
    factory = headings[headings.index("Fábrica de papéis") + 1: headings.index("Os cinco textos de regras")]
    roles = [text[:-2] for text in factory if re.fullmatch(rf"{IDENT}\(\)", text)]
    assert len(roles) == 5, roles
    names.update(f"{role.upper()}_RULES" for role in roles)
    # 4. what the ready-made steps share: the ctx keys they write and read, the resume prompt
    names.update(re.findall(r"ctx\[([A-Z][A-Z_]*)\]", page))
    names.update(re.findall(r"\bresume_prompt = ([A-Z][A-Z_]*)\b", page))
    # 5. the sections the API page lost, described by the continuity pages (the spec's README)
    (lost,) = re.findall(r"Missing sections \(([^)]*)\)", (SPEC / "README.md").read_text(encoding="utf-8"))
    names.update(name.strip() for name in lost.split(","))
    # 6. resilience's probes, which the continuity pages give with their arguments
    continuity = "\n".join(text for text in pages.values() if text != page)
    for name, sentence in PROBES.items():
        assert sentence in continuity, f"the continuity pages no longer say {sentence!r}; read them again"
        names.add(name)
    return frozenset(names)


def _not_exported() -> set[str]:
    """What the API page says is NOT in the top-level ``__all__``: the names in each paragraph
    that says so (``não exportad...``, ``não no __all__ de topo``) and in the code block after it."""
    found: set[str] = set()
    paragraphs = _api_page().split("\n\n")
    for i, text in enumerate(paragraphs):
        if "não exportad" in text or "não no __all__ de topo" in text:
            block = paragraphs[i + 1] if text.rstrip().endswith(":") else ""
            for part in (text, block):
                found.update(re.findall(r"\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b", part))
                found.update(re.findall(r"\b([a-z_]\w*)\(", part))
                found.update(re.findall(r"\b(\w+)\s+= ", part))
    return found


def test_the_list_read_off_the_spec_is_its_62_names_but_the_two_no_page_describes():
    (count,) = re.findall(r"esgota os (\d+) símbolos públicos do __all__ de topo", _api_page())
    names = spec_names()
    assert len(names) + len(LOST_FROM_THE_INDEX) == int(count), sorted(names)
    assert not LOST_FROM_THE_INDEX & names
    # the spec's parameters and internal constants are no names of the API (``worker(isolate=...)``)
    assert "isolate" not in names and {"BULKY", "WORKER_TOOLS", "is_overflow", "Ctx"} <= _not_exported()


def test_every_name_of_the_spec_imports_from_engine_and_is_in_its_all():
    missing = sorted(name for name in spec_names() if not hasattr(engine, name))
    assert missing == [], f"the spec's names that do not import from engine: {missing}"
    undeclared = sorted(spec_names() - set(engine.__all__))
    assert undeclared == [], f"the spec's names missing from engine.__all__ (engine/__init__.py): {undeclared}"


def test_the_top_level_adds_at_most_15_names_beyond_the_spec():
    beyond = [name for name in engine.__all__ if name not in spec_names()]
    assert len(beyond) <= BEYOND_THE_SPEC, (
        f"engine.__all__ holds {len(beyond)} names beyond the spec's, over {BEYOND_THE_SPEC}: {beyond}; "
        "keep there only what a front end needs, the rest in engine.events, engine.lang, engine.host "
        "or engine.authoring")


def test_what_the_spec_says_is_not_exported_stays_off_the_top_level():
    said = _not_exported()
    assert said & set(engine.__all__) == set()
    assert said & spec_names() == set()


def test_the_specs_example_imports_work_as_written():
    lines = _example_imports()
    assert ["Runtime", "Workflow", "Step", "coordinator", "worker"] in lines  # the API page's first
    for names in lines:
        namespace: dict[str, object] = {}
        exec(f"from engine import {', '.join(names)}", namespace)  # the spec's own line
        assert all(namespace[name] is getattr(engine, name) for name in names)


def test_every_name_in_all_imports():
    for face in FACES:
        module = importlib.import_module(face)
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == [], face
        assert len(module.__all__) == len(set(module.__all__)), face


def test_the_spec_names_authoring_once_held_still_import_from_it_as_the_same_objects():
    for name in ("coordinator", "worker", "starter_flow", "HumanChannel", "PruningSessionStore", "Lineage"):
        assert getattr(engine.authoring, name) is getattr(engine, name)
        assert name not in engine.authoring.__all__  # declared once, in engine


def test_the_hosts_plumbing_is_public_in_engine_host():
    for name in ("SqliteFile", "open_sqlite", "immediate", "PgDatabase", "Migration", "redact",
                 "write_text_atomic", "write_json_atomic", "beneath", "human_tokens"):
        assert name in engine.host.__all__


def test_the_postgres_stores_are_public_and_need_asyncpg_only_when_used():
    for name in ("PostgresSessionStore", "TrimmingPostgresSessionStore", "PruningPostgresSessionStore"):
        assert name in engine.authoring.__all__
    # the postgres extra is optional: importing the engine (any face) must not load the driver
    done = subprocess.run([sys.executable, "-c", "import sys, engine, engine.host, engine.authoring; "
                           "print('asyncpg' in sys.modules)"],
                          capture_output=True, text=True, timeout=110)
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr


def _exception_classes(package: str) -> dict[str, type[BaseException]]:
    """Every exception class defined (not just imported) in a module under ``package``."""
    root = importlib.import_module(package)
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        if package == "engine" and info.name.startswith("engine.testing"):
            continue  # the test kit exports its own errors, from engine.testing
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException)
                    and value.__module__ == module.__name__):
                found[f"{module.__name__}.{name}"] = value
    return found


def test_every_exception_class_of_the_engine_is_exported():
    errors = _exception_classes("engine")
    assert "engine._errors.FlowerError" in errors
    missing = [where for where, cls in errors.items() if getattr(engine, cls.__name__, None) is not cls
               or cls.__name__ not in engine.__all__]
    assert missing == [], f"exception classes not exported from engine/__init__.py: {missing}"


def test_the_test_kit_exports_its_own_exceptions():
    import engine.testing

    errors = _exception_classes("engine.testing")
    missing = [where for where, cls in errors.items() if cls.__name__ not in engine.testing.__all__]
    assert missing == [], f"exception classes not exported from engine/testing/__init__.py: {missing}"


def test_every_engine_error_derives_from_flower_error_and_is_in_the_drawn_tree():
    from engine import _errors

    errors = {**_exception_classes("engine"), **_exception_classes("engine.testing")}
    outside = [where for where, cls in errors.items() if not issubclass(cls, engine.FlowerError)]
    assert outside == [], f"engine exceptions not derived from FlowerError: {outside}"
    undrawn = [where for where, cls in errors.items() if cls.__name__ not in (_errors.__doc__ or "")]
    assert undrawn == [], f"exceptions missing from the tree in engine/_errors.py's docstring: {undrawn}"

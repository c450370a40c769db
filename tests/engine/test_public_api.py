"""The public API is declared once per face: engine/__init__.py for front ends, engine/host.py for
hosts, engine/authoring.py for workflow authors; every name in each __all__ imports, every error is
exported from the top level."""

import importlib
import inspect
import pkgutil
import subprocess
import sys

import engine
import engine.authoring
import engine.host

FACES = ("engine", "engine.host", "engine.authoring")


def test_every_name_in_all_imports():
    for face in FACES:
        module = importlib.import_module(face)
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == [], face
        assert len(module.__all__) == len(set(module.__all__)), face


def test_spec_names_are_public():
    """The spec's names, each in the face of whoever uses it: a front end's (and the spec's quick
    use, ``Runtime, Workflow, Step, AgentSpec, wake_state``) at the top, an author's in authoring."""
    for name in ("Runtime", "Workflow", "Step", "StepAbort", "wake_state", "AgentSpec", "Brief",
                 "Goal", "Verdict", "Event", "Resilience"):
        assert name in engine.__all__
    for name in ("StepResult", "starter_flow", "coordinator", "worker", "clarify", "judge", "oracle",
                 "build_options", "HandoffPolicy", "Handoff", "Workbench", "SqliteSessionStore",
                 "PruningSessionStore", "is_ephemeral", "HumanChannel", "Lineage"):
        assert name in engine.authoring.__all__


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

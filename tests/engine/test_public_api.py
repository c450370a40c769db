"""The public API is declared once, in engine/__init__.py: every name in __all__ imports, every error is exported."""

import importlib
import inspect
import pkgutil
import subprocess
import sys

import engine


def test_every_name_in_all_imports():
    module = importlib.import_module("engine")
    missing = [name for name in engine.__all__ if not hasattr(module, name)]
    assert missing == []
    assert len(engine.__all__) == len(set(engine.__all__))


def test_spec_names_are_public():
    for name in ("Runtime", "StepResult", "Workflow", "Step", "StepAbort", "starter_flow",
                 "wake_state", "coordinator", "worker", "clarify", "judge", "oracle",
                 "AgentSpec", "build_options", "HandoffPolicy", "Brief", "Goal", "Verdict",
                 "Handoff", "Workbench", "SqliteSessionStore", "PruningSessionStore",
                 "is_ephemeral", "HumanChannel", "Event", "Lineage", "Resilience"):
        assert name in engine.__all__


def test_the_postgres_stores_are_public_and_need_asyncpg_only_when_used():
    for name in ("PostgresSessionStore", "TrimmingPostgresSessionStore", "PruningPostgresSessionStore"):
        assert name in engine.__all__
    # the postgres extra is optional: importing the engine must not load the driver
    done = subprocess.run([sys.executable, "-c", "import sys, engine; print('asyncpg' in sys.modules)"],
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

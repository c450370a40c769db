"""The public API is declared once, in engine/__init__.py: every name in __all__ imports."""

import importlib

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

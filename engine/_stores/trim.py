"""Where ``TrimPolicy`` and ``EphemeralPolicy`` used to live, kept for two importers only.

The shaping passes and their policies moved to ``engine._resume``. ``engine._run.runtime`` and
``engine._flow.starter_run`` were being edited by someone else at the time, so their imports were
left pointing here; once they import from ``engine._resume.policies``, delete this file and
``engine._stores.prune``.
"""

from __future__ import annotations

from engine._resume.policies import EphemeralPolicy, TrimPolicy

__all__ = ["EphemeralPolicy", "TrimPolicy"]

"""Where ``PrunePolicy`` used to live, kept for one importer only.

The shaping passes and their policies moved to ``engine._resume``. ``engine._run.runtime`` was
being edited by someone else at the time, so its import was left pointing here; once it imports
from ``engine._resume.policies``, delete this file and ``engine._stores.trim``.
"""

from __future__ import annotations

from engine._resume.policies import PrunePolicy

__all__ = ["PrunePolicy"]

"""Append rows to one manifest from a separate process (concurrency test)."""

import sys
import time

from engine._run.manifest import Manifest, StepResult

path, label, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = Manifest(path)
results = []
for i in range(count):
    results.append(StepResult(step=f"{label}-{i}", ok=True, started_at=time.time()))
    m.write(results)

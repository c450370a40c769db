"""Benchmarks: run on demand (``python -m bench [name]``), never as tests; figures go to RESULTS.md.

Each benchmark compares side by side in one run and reports ratios, because the machines are
shared and noisy: absolute times drift between runs, ratios much less. Shared helpers live here:
the machine description (read at run time), medians, and table formatting.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["load_average", "machine", "mb", "median", "table"]


def _ram_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None  # not POSIX: the description says "unknown" instead


def _cli_version() -> str:
    """The bundled Claude Code CLI's own ``--version``, else the version the SDK says it bundles."""
    import claude_agent_sdk
    from claude_agent_sdk._cli_version import __cli_version__

    cli = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if cli.is_file():
        try:
            out = subprocess.run([str(cli), "--version"], capture_output=True, text=True, timeout=60)
            if out.returncode == 0 and out.stdout.strip():
                return out.stdout.strip().split()[0]
        except (OSError, subprocess.SubprocessError):
            pass  # fall back to the version the SDK records for its bundled binary
    return __cli_version__


def machine() -> dict[str, str]:
    """Cores, RAM, OS, Python, SDK and CLI versions of the machine running the benchmark."""
    import claude_agent_sdk

    ram = _ram_bytes()
    return {
        "cores": str(os.cpu_count() or "unknown"),
        "ram": f"{ram / 2**30:.1f} GiB" if ram else "unknown",
        "os": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "claude-agent-sdk": claude_agent_sdk.__version__,
        "claude code cli": _cli_version(),
        "load average at start": load_average(),
    }


def load_average() -> str:
    """The 1/5/15-minute load averages now: how busy the shared machine was during a run."""
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def median(values: Sequence[float]) -> float:
    """The median of repeated measurements (robust to one slow outlier on a shared machine)."""
    return statistics.median(values)


def mb(n_bytes: float) -> str:
    """Bytes as megabytes with one decimal."""
    return f"{n_bytes / 1e6:.1f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table (pastes straight into RESULTS.md)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def print_machine() -> None:
    """Print the machine description as one line per field (for pasting into RESULTS.md)."""
    for name, value in machine().items():
        print(f"- {name}: {value}")
    sys.stdout.flush()

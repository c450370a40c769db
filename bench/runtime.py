"""Runtime overhead benchmark (issue 3): one scripted step through the raw SDK and through Runtime.

The step: 20 tool calls (7 Write, 7 Read, 6 Bash, one of them printing ~14k characters so the
workbench's spill guard has work) then a final text, served by the offline fake model
(``engine.testing.FakeModel``) to the real bundled CLI. Four ways to run it, in rotating order
(each mode takes each slot in turn) in one run, after one untimed warm-up each:

- ``raw``: ``claude_agent_sdk.query()`` with the ``claude_code`` preset system prompt, the same
  allowed tools and ``permission_mode="acceptEdits"``, no session store (the CLI's own files);
- ``raw+store``: the same plus our ``SqliteSessionStore`` as the SDK's session store;
- ``runtime-nowb``: ``engine.Runtime(workbench=False).run(spec, prompt)``: pruning store, the
  tool whitelist hook, the plugin;
- ``runtime``: ``Runtime(workspace=..., run_dir=..., workbench=True)``: also the workbench hooks
  (spill, index) and the workbench block in the system prompt. The target compares this to raw.
- ``runtime+sandbox``: the same in ``engine.Sandbox`` (issue 12: what the Slack bot runs): every
  Bash command under bubblewrap with its network proxy, the file tools behind the fence hook.

The two middle modes say where an overhead comes from. Each run is a fresh worker process
(``--worker``), so its memory figures are its own: peak RSS of the worker plus its CLI process,
sampled every 20 ms (psutil if installed, else /proc), and the high-water marks the kernel kept
(VmHWM of the worker, ``ru_maxrss`` of its reaped children).
Wall time runs from just before the step (a Runtime's construction included, imports not: they
happen once a process) to its end. The raw worker never imports ``engine``. Target: Runtime adds
<= 10% wall time and <= 20 MB of peak memory over raw.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench import median, table

TOOLS = ["Write", "Read", "Bash"]
TARGET_WALL = 0.10  # Runtime may add at most 10% wall time
TARGET_MB = 20.0  # and at most 20 MB of peak memory
SAMPLE_S = 0.02
_RUN_IDS = itertools.count()
MODES = {"raw": "query(), CLI's own files", "raw+store": "query() + SqliteSessionStore",
         "runtime-nowb": "Runtime, workbench=False", "runtime": "Runtime, workbench=True",
         "runtime+sandbox": "Runtime, workbench=True, sandboxed"}
_BASH = ["git status", "ls -la", "wc -l *.txt", "seq 1 3000", "git status --short", "ls"]


def script(ws: Path) -> list[Any]:
    """The 21 replies of the step: 20 tool calls (Write, Read, Bash interleaved), then a text."""
    from engine.testing import text, tool_use

    replies = []
    for i in range(20):  # W R B W R B ... W R: 7 Write, 7 Read (of the file just written), 6 Bash
        n, kind = i // 3, i % 3
        if kind == 0:
            body = "".join(f"line {k} of file {n}\n" for k in range(40))
            replies.append(tool_use("Write", {"file_path": str(ws / f"f{n}.txt"), "content": body}))
        elif kind == 1:
            replies.append(tool_use("Read", {"file_path": str(ws / f"f{n}.txt")}))
        else:
            replies.append(tool_use("Bash", {"command": _BASH[n], "description": "look"}))
    replies.append(text("Done: files written, read back and checked."))
    return replies


# -- the worker (one run, in its own process) ------------------------------------------------


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (the CLI). Not grandchildren: a tool's shell, forked from the
    CLI, shows the CLI's pages as its own RSS until it execs, so summing them double-counts."""
    try:
        import psutil
    except ImportError:
        kids: list[int] = []
        try:
            for task in Path(f"/proc/{pid}/task").iterdir():
                kids += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            pass  # a thread ended while we listed: its children show under another or are gone
        return kids
    try:
        kids = psutil.Process(pid).children()
        # a sandboxed CLI runs under bubblewrap (its own view, engine/_run/sandbox.py): count the CLI
        return [k for c in kids for k in (_children(c.pid) if c.name() == "bwrap" else [c.pid])]
    except psutil.Error:
        return []


def _rss(pid: int) -> int:
    """Resident bytes of ``pid`` now; 0 once it has exited."""
    try:
        import psutil
    except ImportError:
        return _status_bytes(pid, "VmRSS")
    try:
        return psutil.Process(pid).memory_info().rss
    except psutil.Error:
        return 0


def _status_bytes(pid: int | str, field: str) -> int:
    """A memory field (``VmRSS``, ``VmHWM``) of /proc/<pid>/status in bytes; 0 if unreadable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass  # the process exited while we looked, or there is no /proc
    return 0


class _Sampler(threading.Thread):
    """Samples this process's RSS plus its children's until stopped; ``peak`` is the largest sum.

    Listing children scans every process on the machine (about 1 ms with psutil, holding the
    GIL part of it), so the list is refreshed every 10th sample only. Measured: listing at every
    sample, the Runtime showed +11% wall time over raw; listing every 10th, +1% (RESULTS.md).
    """

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0
        self.done = threading.Event()

    def run(self) -> None:
        me, pids, n = os.getpid(), [os.getpid()], 0
        while not self.done.wait(SAMPLE_S):
            if n % 10 == 0:
                pids = [me, *_children(me)]
            n += 1
            self.peak = max(self.peak, sum(_rss(p) for p in pids))


async def _raw(ws: Path, prompt: str, run_dir: Path | None) -> bool:
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

    store = None
    if run_dir is not None:  # "raw+store": only our store added, to isolate the mirror's cost
        from engine._stores.sqlite import SqliteSessionStore

        store = SqliteSessionStore(run_dir / "sessions.db")
    options = ClaudeAgentOptions(
        system_prompt={"type": "preset", "preset": "claude_code"}, allowed_tools=list(TOOLS),
        permission_mode="acceptEdits", cwd=str(ws), session_store=store,
    )
    ok = False
    try:
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, ResultMessage):
                ok = not message.is_error
    finally:
        if store is not None:
            store.close()
    return ok


async def _runtime(ws: Path, prompt: str, run_dir: Path, workbench: bool, sandboxed: bool = False) -> bool:
    from engine import AgentSpec, Runtime, Sandbox

    fence = Sandbox(deny_read=(ws.parent,), domains=("pypi.org",)) if sandboxed else None
    rt = Runtime(workspace=ws, run_dir=run_dir, workbench=workbench, sandbox=fence)
    spec = AgentSpec(name="bench", instructions="", allowed_tools=list(TOOLS),
                     permission_mode="acceptEdits")
    try:
        result = await rt.run(spec, prompt)
    finally:
        rt.close()
    return result.ok and result.attempts == 1


def worker(mode: str, ws: Path, prompt: str, run_dir: Path) -> dict[str, Any]:
    """Run the step once in this process; wall time, memory figures and whether it succeeded."""
    import claude_agent_sdk  # noqa: F401  imports happen once a process, not once a step

    if mode != "raw":
        import engine  # noqa: F401
    sampler = _Sampler()
    sampler.start()
    start = time.perf_counter()  # from here: Runtime construction (if any) and the step
    if mode.startswith("raw"):
        ok = asyncio.run(_raw(ws, prompt, run_dir if mode == "raw+store" else None))
    else:
        ok = asyncio.run(_runtime(ws, prompt, run_dir, workbench=mode != "runtime-nowb",
                                  sandboxed=mode == "runtime+sandbox"))
    wall = time.perf_counter() - start
    sampler.done.set()
    sampler.join()
    # VmHWM, not ru_maxrss, for this process: ru_maxrss keeps the spawning parent's peak across
    # exec (a driver holding a 50k-entry transcript would show up here).
    hwm = _status_bytes("self", "VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"mode": mode, "ok": ok, "wall_s": wall, "peak_rss": sampler.peak, "hwm_self": hwm,
            "hwm_children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}


# -- the driver --------------------------------------------------------------------------------


def _clean_env(extra: dict[str, str]) -> dict[str, str]:
    """This environment without inherited Claude/Anthropic/flower settings, plus ``extra``."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE", "FLOWER_", "SLACK_"))}
    return {**env, **extra}


def _one(fm: Any, mode: str, root: Path, tag: str) -> dict[str, Any]:
    ws = root / f"ws-{tag}"
    ws.mkdir()
    run_dir = ws / "runs"  # where a workspace keeps it (so the workbench is inside, not external)
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    marker = f"[bench step {next(_RUN_IDS):03d}]"  # closed by "]": never a prefix of another run's
    rule = fm.rule(*script(ws), when=marker, name=tag)
    env = _clean_env(fm.offline_env(root / f"config-{tag}"))
    cmd = [sys.executable, "-m", "bench.runtime", "--worker", mode, "--workspace", str(ws),
           "--run-dir", str(run_dir), "--prompt", f"{marker}: write the files, read them, check."]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} worker {tag} failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    written = sum(1 for _ in ws.glob("f*.txt"))
    if not out["ok"] or rule.calls != 21 or written != 7:
        raise RuntimeError(f"{mode} run {tag} did not follow the script: ok={out['ok']}, "
                           f"{rule.calls}/21 replies served, {written}/7 files written. "
                           f"stderr: {proc.stderr[-1500:]}")
    return out


def run(repeats: int = 10) -> str:
    """Warm up, then ``repeats`` rounds of every mode in rotating order; the report as Markdown."""
    from engine.testing import FakeModel

    got: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="bench-runtime-") as tmp, FakeModel() as fm:
        root = Path(tmp)
        for mode in MODES:
            _one(fm, mode, root, f"warm-{mode}")
        for i in range(repeats):
            order = list(MODES)[i % len(MODES):] + list(MODES)[: i % len(MODES)]  # every slot
            for mode in order:
                got[mode].append(_one(fm, mode, root, f"{mode}-{i}"))
            print(f"  runtime: round {i + 1}/{repeats} done", flush=True)
    return _report(got)


def _report(got: dict[str, list[dict[str, Any]]]) -> str:
    def med(mode: str, field: str) -> float:
        return median([r[field] for r in got[mode]])

    wall = {m: med(m, "wall_s") for m in got}
    peak = {m: med(m, "peak_rss") / 2**20 for m in got}
    rows = [[m, MODES[m], len(got[m]), f"{wall[m]:.2f}", f"{wall[m] / wall['raw']:.3f}x",
             " / ".join(f"{r['wall_s']:.2f}" for r in got[m]), f"{peak[m]:.0f}",
             f"{peak[m] - peak['raw']:+.1f}", f"{med(m, 'hwm_self') / 2**20:.0f}",
             f"{med(m, 'hwm_children') / 2**20:.0f}"] for m in MODES]
    extra_wall = wall["runtime"] / wall["raw"] - 1
    paired = median([a["wall_s"] / b["wall_s"] for a, b in zip(got["runtime"], got["raw"])]) - 1
    extra_mb = peak["runtime"] - peak["raw"]
    hwm = {m: (med(m, "hwm_self") + med(m, "hwm_children")) / 2**20 for m in got}
    verdict = [
        ["wall time, runtime / raw (ratio of medians)", f"{1 + extra_wall:.3f}x ({extra_wall:+.1%})",
         f"<= +{TARGET_WALL:.0%}", "met" if extra_wall <= TARGET_WALL else "MISSED"],
        ["the same, median of per-round ratios", f"{1 + paired:.3f}x ({paired:+.1%})",
         "(cross-check)", ""],
        ["peak RSS worker+CLI (sampled), runtime - raw", f"{extra_mb:+.1f} MiB",
         f"<= {TARGET_MB:g} MB", "met" if extra_mb * 2**20 <= TARGET_MB * 1e6 else "MISSED"],
        ["high-water marks worker + CLI, runtime - raw", f"{hwm['runtime'] - hwm['raw']:+.1f} MiB",
         "(cross-check)", ""],
    ]
    return "\n\n".join([
        "One step of 20 tool calls + a final text (medians; wall in s, memory in MiB)",
        table(["mode", "what runs", "runs", "wall", "vs raw", "each run", "peak RSS worker+CLI",
               "vs raw", "HWM worker", "HWM CLI"], rows),
        table(["figure", "measured", "target", "verdict"], verdict),
    ])


def main(argv: list[str] | None = None) -> int:
    """``python -m bench runtime [--repeats 10]`` (``--worker`` is the internal one-run mode)."""
    parser = argparse.ArgumentParser(prog="python -m bench runtime", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=10, help="rounds: runs of each mode (default 10)")
    parser.add_argument("--worker", choices=list(MODES), help=argparse.SUPPRESS)
    parser.add_argument("--workspace", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--run-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--prompt", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.workspace, args.prompt, args.run_dir)))
        return 0
    print(run(max(1, args.repeats)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

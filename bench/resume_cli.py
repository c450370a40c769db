"""Resume real sessions through the real CLI (issue 15): what the model is sent, without and with our store.

``python -m bench resume`` measures what ``load()`` returns (``engine._resume.chain.shown_chars``);
this benchmark checks that figure against what the bundled CLI really sends. Each session (by
default the 3 largest ``*.jsonl`` of the corpus, ``bench.corpus``) is appended twice under its own
session id: to a plain ``SqliteSessionStore`` (what the CLI sends without our policies) and to the
store a ``Runtime`` builds with ``StarterRun``'s settings (every policy on). Each is then resumed
with ``claude_agent_sdk.query(resume=..., session_store=...)`` and the prompt ``Go on.`` against
the offline model (``engine.testing.FakeModel``), and the first request of the resumed turn is read
(``bench.request_figures``):

- request: characters of its ``messages`` as JSON, the messages, and the characters per block
  kind (tool_use inputs, tool_result contents, text, thinking), and the whole body;
- history: the same JSON without what the CLI adds to the new turn (its ``<system-reminder>``
  blocks and the prompt): the part ``load()`` decides; its contents alone are ``shown_chars``'s
  measure, so "history content/shown" says how well the store's figure predicts the request;
- side by side per session: the requests' trimmed/raw ratio and the store's shown/raw ratio
  (``bench resume``'s figure), and what the CLI did on its own (calls or texts of the loaded chain
  missing from the request, block kinds it left out, the model it chose, other requests it made,
  an error or a refusal to resume, word for word).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench import load_average, machine, table
from bench.request_figures import COMMAND_OUTPUT, KINDS, json_len, sent

Entry = dict[str, Any]
PROMPT = "Go on."
_LEAKY = ("ANTHROPIC_", "CLAUDE", "FLOWER_", "SLACK_")


def parse(path: Path) -> list[Entry]:
    """The entries of a transcript file (blank lines skipped)."""
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# -- one resume through the CLI -----------------------------------------------------------------


async def _resume(fm: Any, store: Any, ws: Path, sid: str, prompt: str) -> dict[str, Any]:
    """Resume ``sid`` from ``store`` once: the requests it made, the session it ran, any error word for word."""
    from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, ResultMessage, SystemMessage, query

    start, t0 = len(fm.requests), time.perf_counter()
    got: dict[str, Any] = {"error": "", "session": ""}
    options = ClaudeAgentOptions(cwd=str(ws), env=dict(fm.env), resume=sid, session_store=store)
    try:
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, SystemMessage) and message.subtype == "init":
                got["session"] = message.data.get("session_id", "")
            elif isinstance(message, AssistantMessage) and message.error:
                got["error"] = f"assistant error {message.error}: " + " ".join(
                    getattr(b, "text", "") for b in message.content)[:300]
            elif isinstance(message, ResultMessage) and message.is_error and not got["error"]:
                got["error"] = f"result {message.subtype}: {str(message.result)[:300]}"
    except Exception as exc:  # a refusal to resume is a finding here, not a crash of the benchmark
        got["error"] = got["error"] or f"{type(exc).__name__}: {str(exc)[:300]}"
    got["seconds"] = time.perf_counter() - t0
    got["requests"] = fm.requests[start:]
    return got


def _other_requests(requests: list[Any]) -> list[str]:
    """The requests of a resumed turn beyond its first model request, briefly."""
    from engine.testing.match import COMPACTION_MARKER

    out = []
    for r in [r for r in requests if r.is_message][1:]:
        what = "compaction" if COMPACTION_MARKER in r.prompt else f"prompt {r.prompt[-60:]!r}"
        out.append(f"model request #{r.index} ({what}, {json_len(r.messages):,} chars)")
    others = Counter(f"{r.method} {r.path}" for r in requests if not r.is_message)
    return out + [f"{n} x {what}" for what, n in sorted(others.items())]


async def resume_session(fm: Any, entries: list[Entry], root: Path, name: str,
                         prompt: str = PROMPT) -> dict[str, Any]:
    """Resume one transcript through the real CLI from a plain store and from the Runtime's store.

    ``fm`` is a started ``FakeModel`` whose ``env`` points the CLI at it (``fm.offline_env``) and
    which answers every request (``fm.fallback(text("ok"))``); this process's ``CLAUDE_CONFIG_DIR``
    must be that env's (the SDK's transcript mirror reads it here). The session id is the
    transcript's own (its file name's stem when no entry names one); ``root/name`` holds the
    workspace (the CLI's cwd) and both stores. Returns ``raw`` and ``trimmed`` (``sent`` figures
    plus ``loaded``: ``shown_chars`` of the chain ``load()`` returned, ``error``, ``session``,
    ``seconds``, ``other``) and ``report``: the Runtime store's ``last_report`` for the CLI's load.
    """
    from claude_agent_sdk import project_key_for_directory

    from engine._flow.starter_run import StarterRun
    from engine._resume.chain import resume_chain, shown_chars
    from engine._run.runtime import Runtime
    from engine._stores.sqlite import SqliteSessionStore

    sid = next((e["sessionId"] for e in entries if e.get("sessionId")), name)
    home = root / name
    ws, run_dir = home / "ws", home / "runs"
    ws.mkdir(parents=True)
    key = {"project_key": project_key_for_directory(ws), "session_id": sid}
    raw = SqliteSessionStore(home / "raw.db")
    # The Runtime builds its store itself, from StarterRun's own settings: the very store a run
    # resumes from, whatever its policies become.
    rt = Runtime(workspace=ws, run_dir=run_dir, **StarterRun(ws, run_dir=run_dir, env=fm.env)._runtime_kw)
    out: dict[str, Any] = {"name": name, "entries": len(entries), "session_id": sid}
    try:
        for label, store in (("raw", raw), ("trimmed", rt.store)):
            await store.append(key, entries)
            chain = resume_chain(await store.load(key) or []).shown
            got = await _resume(fm, store, ws, sid, prompt)
            first = next((r for r in got["requests"] if r.is_message), None)
            models = [e["message"].get("model") for e in chain
                      if e.get("type") == "assistant" and isinstance(e.get("message"), dict)]
            row = {"loaded": shown_chars(chain), "chain_entries": len(chain), "error": got["error"],
                   "session": got["session"], "seconds": got["seconds"], "other": _other_requests(got["requests"]),
                   "leaf_model": models[-1] if models else ""}
            if first is not None and isinstance(first.body, dict):
                row.update(sent(first.body, chain, prompt))
            out[label] = row
        out["report"] = dict(rt.store.last_report)
    finally:
        raw.close()
        rt.close()
    return out


# -- the report ---------------------------------------------------------------------------------


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.3f}" if b else "n/a"


_KIND_NAMES = {"blank_text": "whitespace-only text"}


def _findings(row: dict[str, Any], sid: str) -> list[str]:
    """What the CLI did on its own with this resume, in words."""
    out = []
    if row["error"]:
        out.append(f"error: {row['error']}")
    if row["session"] and row["session"] != sid:
        out.append(f"the CLI ran session {row['session']}, not {sid}")
    if "chars" not in row:
        return out + ["no model request was made"]
    if not row["prompt_reached"]:
        out.append("the prompt is not a block of the last user message")
    if row["calls_missing"] or row["calls_extra"] or row["texts_missing"]:
        out.append(f"of the loaded chain, {row['calls_missing']} tool calls and {row['texts_missing']} texts are "
                   f"not in the request (first text: {row['text_missing_example']!r}); "
                   f"{row['calls_extra']} calls in the request are not on the chain")
    else:
        out.append("every tool call and text of the loaded chain is in the request")
    if row["chain_messages"] != row["history_messages"]:
        out.append(f"{row['chain_messages']} message entries on the chain went as {row['history_messages']} "
                   "messages (consecutive entries of one role merged)")
    if row["command_output"]:
        out.append(f"{row['command_output']:,} chars of slash-command output ({COMMAND_OUTPUT}) sent")
    for kind, (chain, request) in row["kinds_changed"].items():
        out.append(f"{_KIND_NAMES.get(kind, kind)} blocks: {chain} on the chain, {request} sent")
    same = "the same as" if row["model"] == row["leaf_model"] else "not"
    out.append(f"model {row['model']!r} ({same} the chain's last assistant message's)")
    out.append(f"the CLI added {row['added']:,} chars to the new turn (reminders, prompt); "
               f"system {row['system']:,}, tools {row['tools']:,} chars")
    return out + ([f"also sent: {what}" for what in row["other"]] or ["no other request"])


def report(rows: list[dict[str, Any]]) -> str:
    """The rows of ``resume_session`` as Markdown: sizes side by side, then per store, then findings."""
    ok = [r for r in rows if "chars" in r["raw"] and "chars" in r["trimmed"]]
    sums = {(s, k): sum(r[s][k] for r in ok) for s in ("raw", "trimmed") for k in ("chars", "history", "body")}
    shown_before = sum(r["report"].get("shown_before", 0) for r in ok)
    shown_after = sum(r["report"].get("shown_after", 0) for r in ok)
    summary = [
        f"- sessions resumed: {len(ok)}/{len(rows)} (both stores)",
        f"- request (messages JSON) trimmed / raw in sum: {sums['trimmed', 'chars']:,} / {sums['raw', 'chars']:,} "
        f"= {_ratio(sums['trimmed', 'chars'], sums['raw', 'chars'])}",
        f"- history (the request without the CLI's additions to the new turn) trimmed / raw in sum: "
        f"{sums['trimmed', 'history']:,} / {sums['raw', 'history']:,} = "
        f"{_ratio(sums['trimmed', 'history'], sums['raw', 'history'])}",
        f"- `bench resume` shown / raw (load()) in sum: {shown_after:,} / {shown_before:,} = "
        f"{_ratio(shown_after, shown_before)}",
        f"- whole request body (messages, system prompt, tools) trimmed / raw in sum: {sums['trimmed', 'body']:,} / "
        f"{sums['raw', 'body']:,} = {_ratio(sums['trimmed', 'body'], sums['raw', 'body'])}",
    ]
    sizes = [[r["name"][:40], r["entries"], f"{r['raw']['chars']:,}", f"{r['trimmed']['chars']:,}",
              _ratio(r["trimmed"]["chars"], r["raw"]["chars"]), _ratio(r["trimmed"]["history"], r["raw"]["history"]),
              _ratio(r["report"].get("shown_after", 0), r["report"].get("shown_before", 0))] for r in ok]
    per_store = [[r["name"][:40], s, r[s]["chain_entries"], f"{r[s]['loaded']:,}", f"{r[s]['history']:,}",
                  _ratio(r[s]["history_content"], r[s]["loaded"]), r[s]["messages"],
                  *(f"{r[s][k]:,}" for k in KINDS), f"{r[s]['added']:,}", f"{r[s]['body']:,}", f"{r[s]['seconds']:.1f}"]
                 for r in ok for s in ("raw", "trimmed")]
    findings = [f"- {r['name']} ({s}): " + "; ".join(_findings(r[s], r["session_id"]))
                for r in rows for s in ("raw", "trimmed")]
    findings += [f"- {r['name']}: the CLI's load() showed {r['report'].get('shown_after', 0):,} chars, the "
                 f"benchmark's own load before it {r['trimmed']['loaded']:,}"
                 for r in rows if r["report"].get("shown_after") != r["trimmed"]["loaded"]]
    return "\n".join([
        *summary, "",
        table(["session", "entries", "raw request", "trimmed request", "request trimmed/raw",
               "history trimmed/raw", "bench resume shown/raw"], sizes), "",
        table(["session", "store", "chain entries", "load() shown", "request history", "history content/shown",
               "messages", *KINDS, "CLI added", "whole body", "seconds"], per_store), "",
        "What the CLI did on its own:", "", *findings,
    ])


# -- the run ------------------------------------------------------------------------------------


async def _run(paths: list[Path], root: Path) -> list[dict[str, Any]]:
    from engine.testing import FakeModel, text

    rows = []
    with FakeModel() as fm:
        os.environ.update(fm.offline_env(root / "claude-config"))  # the SDK's mirror reads it here
        fm.fallback(text("ok"))  # the resumed turn, and anything the CLI asks on the side
        for path in paths:
            rows.append(await resume_session(fm, parse(path), root, path.stem))
            print(f"  resume-cli: {path.name} done", flush=True)
    return rows


def run(corpus: Path, sessions: int = 3) -> str:
    """Resume the ``sessions`` largest ``*.jsonl`` of ``corpus`` both ways; the report as Markdown.

    This process's environment is restored afterwards: nothing from the shell (a real key, a base
    URL, ``CLAUDE*`` settings) reaches the CLIs while it runs.
    """
    paths = sorted(corpus.glob("*.jsonl"), key=lambda p: p.stat().st_size, reverse=True)[:sessions]
    if not paths:
        raise SystemExit(f"python -m bench resume-cli: no *.jsonl in {str(corpus)!r}; build the corpus "
                         "there first with `python -m bench corpus DEST`.")
    saved = dict(os.environ)
    try:
        for name in [n for n in os.environ if n.startswith(_LEAKY)]:
            del os.environ[name]
        with tempfile.TemporaryDirectory(prefix="bench-resume-cli-") as tmp:
            return report(asyncio.run(_run(paths, Path(tmp))))
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main(argv: list[str] | None = None) -> int:
    """``python -m bench resume-cli CORPUS [--sessions 3]`` (build CORPUS with ``python -m bench corpus``)."""
    parser = argparse.ArgumentParser(prog="python -m bench resume-cli", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path, help="folder of transcripts (python -m bench corpus DEST)")
    parser.add_argument("--sessions", type=int, default=3, help="how many of the largest to resume (default 3)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    for name, value in machine().items():
        print(f"- {name}: {value}")
    print(run(args.corpus, max(1, args.sessions)))
    print(f"\n(resume-cli: {time.perf_counter() - started:.0f} s; load average at the end: {load_average()})")
    return 0

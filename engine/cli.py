"""The ``flower`` command: the starter workflow in a terminal, continuing where it left off.

    flower "写个 md 转 html 的脚本"     first time: confirm, set the goal, work
    flower "顺便支持代码块高亮"          same folder again: one more sentence, same conversation
    flower                              say nothing: continue (asks first when run in a terminal)
    flower --new "另一件事"              archive brief, goal and lineage; start fresh
    flower once "prompt" [--resume ID]  a single agent, no workflow and no lineage

Exit codes: 0 the goal was achieved (or the step passed), 1 the run ended without achieving it,
2 bad usage (such as an empty request in a fresh folder), 130 interrupted with Ctrl-C twice.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import threading
from pathlib import Path

from dotenv import load_dotenv

from engine._agents.roles import WORKER_TOOLS
from engine._agents.spec import AgentSpec
from engine._cli_view import TerminalView, wake_banner
from engine._flow.starter import EMPTY_ASK
from engine._flow.starter_run import StarterRun
from engine._human.transports import TerminalTransport
from engine._run import signals
from engine._run.credentials import CredentialsError
from engine._run.run_lock import WorkspaceBusyError
from engine._run.runtime import Runtime

EXIT_OK, EXIT_NOT_ACHIEVED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
WAKE_QUESTION = "接着上次? 直接回车 = 接着做;也可以说点新的;/new = 重开一件事(Ctrl-C 退出)"
NEW_QUESTION = "要做什么? 一句话就够,回车开始(Ctrl-C 退出)"
INTERRUPT_QUESTION = "\n已打断。想补充什么?回车 = 照原样继续;再按一次 Ctrl-C 退出"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="flower",
        description=__doc__,
        epilog="exit codes: 0 achieved, 1 not achieved / failed, 2 bad usage, 130 Ctrl-C twice",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("ask", nargs="*", help="the request, or one more sentence when continuing")
    p.add_argument("--new", action="store_true", help="archive the last run and start fresh")
    p.add_argument("--no-trim", action="store_true", help="keep old large tool results in context")
    p.add_argument("--rounds", type=int, default=3, help="work rounds the judge allows (per wake)")
    p.add_argument("-r", "--run-dir", default="runs", help="run folder, relative to the current one")
    p.add_argument("-C", "--workspace", default=".", help="the workspace folder (default: here)")
    p.add_argument("--isolate", action="store_true", help="each worker in its own git worktree")
    p.add_argument("--judge-can-run", action="store_true", help="let the judge run commands")
    p.add_argument("--resume", help="with `once`: the session id to continue")
    return p


def _read_line(prompt: str) -> str | None:
    """One line from the person; None on EOF (no terminal, Ctrl-D)."""
    print(prompt, file=sys.stderr)
    try:
        return input("> ")
    except EOFError:
        return None


async def _read_line_async(prompt: str) -> str | None:
    """``_read_line`` on a daemon thread: a second Ctrl-C must be able to exit while it waits
    (asyncio.to_thread's executor would be joined at exit, hanging on the blocked input())."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str | None] = loop.create_future()

    def read() -> None:
        line = _read_line(prompt)
        loop.call_soon_threadsafe(lambda: done.done() or done.set_result(line))

    threading.Thread(target=read, daemon=True).start()
    return await done


class _CtrlC:
    """First Ctrl-C: interrupt the running step and take a word; a second one exits."""

    def __init__(self, run: StarterRun) -> None:
        self.run = run
        self.pressed = 0
        self.exit = asyncio.Event()

    def __call__(self) -> None:
        self.pressed += 1
        if self.pressed > 1 or not self.run.running:
            self.exit.set()
            return
        asyncio.get_running_loop().create_task(self._take_word())

    async def _take_word(self) -> None:
        said = await _read_line_async(INTERRUPT_QUESTION)
        if said is None:
            self.exit.set()
            return
        self.pressed = 0
        self.run.interrupt(said.strip() or "继续")


async def _until_exit(main: asyncio.Future, ctrl_c: _CtrlC) -> int | None:
    stopper = asyncio.ensure_future(ctrl_c.exit.wait())
    done, _ = await asyncio.wait({main, stopper}, return_when=asyncio.FIRST_COMPLETED)
    if main in done:
        stopper.cancel()
        return main.result()
    main.cancel()
    return None


def _starter_run(args: argparse.Namespace) -> StarterRun:
    """The run in this folder; the CLI gets this terminal's environment, in its own process group."""
    return StarterRun(args.workspace, run_dir=args.run_dir, isolate=args.isolate, trim=not args.no_trim,
                      own_process_group=True, transport=TerminalTransport(),
                      flow={"rounds": args.rounds, "judge_can_run": args.judge_can_run})


def _host_setup(workspace: str) -> None:
    """What the ``flower`` command does for its own process (the spec's Runtime did it on
    construction): read ``.env`` from the workspace, then from here, never overriding the shell;
    and record an in-flight step as ``killed-by-signal`` on SIGTERM/SIGHUP."""
    load_dotenv(Path(workspace) / ".env", override=False)
    load_dotenv(Path.cwd() / ".env", override=False)
    signals.install()


async def _run_flow(args: argparse.Namespace, ask: str) -> int:
    run = _starter_run(args)
    view = TerminalView(sys.stderr)
    ctrl_c = _CtrlC(run)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, ctrl_c)
    try:
        ctx = await _until_exit(asyncio.ensure_future(run.run(ask, new=args.new, on_event=view)), ctrl_c)
        if ctx is None:
            print("\n已退出;下次在这里运行 flower 会接着做。", file=sys.stderr)
            return EXIT_INTERRUPTED
        view.summary(ctx, run.runtime.results if run.runtime else [])
        return EXIT_OK if ctx.get("_ok") else EXIT_NOT_ACHIEVED
    finally:
        loop.remove_signal_handler(signal.SIGINT)


async def _run_once(args: argparse.Namespace, prompt: str) -> int:
    rt = Runtime(workspace=args.workspace, run_dir=args.run_dir)
    spec = AgentSpec(name="once", instructions="", allowed_tools=list(WORKER_TOOLS),
                     permission_mode="acceptEdits", workbench=False)
    try:
        result = await rt.run(spec, prompt, resume=args.resume, on_event=TerminalView(sys.stderr))
    finally:
        rt.close()
    print(result.text)
    print(f"session: {result.session_id}", file=sys.stderr)
    return EXIT_OK if result.ok else EXIT_NOT_ACHIEVED


def _decide_ask(args: argparse.Namespace, ask: str) -> tuple[str, bool] | None:
    """The sentence to run with and whether to archive first; None when there is nothing to do."""
    state = _starter_run(args).wake_state()
    if args.new or not state["waking"]:
        if ask:
            return ask, args.new
        if not sys.stdin.isatty():
            return None
        said = _read_line(NEW_QUESTION)
        return (said.strip(), args.new) if said and said.strip() else None
    print(wake_banner(Path(args.workspace), state), file=sys.stderr)
    if ask or not sys.stdin.isatty():
        return ask, False
    said = _read_line(WAKE_QUESTION)
    if said is None:
        return None
    if said.strip() == "/new":
        fresh = _read_line(NEW_QUESTION)
        return (fresh.strip(), True) if fresh and fresh.strip() else None
    return said.strip(), False


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    words = list(args.ask)
    _host_setup(args.workspace)
    try:
        if words and words[0] == "once":
            prompt = " ".join(words[1:]).strip()
            if not prompt:
                print("flower once needs a prompt, e.g. flower once \"list the files\"", file=sys.stderr)
                return EXIT_USAGE
            return asyncio.run(_run_once(args, prompt))
        try:
            decided = _decide_ask(args, " ".join(words).strip())
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED
        if decided is None:
            print(EMPTY_ASK, file=sys.stderr)
            return EXIT_USAGE
        args.new = decided[1]
        return asyncio.run(_run_flow(args, decided[0]))
    except (CredentialsError, WorkspaceBusyError, ValueError) as exc:
        print(f"flower: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())

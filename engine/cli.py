"""The ``flower`` command: the starter workflow in a terminal, continuing where it left off.

    flower "写个 md 转 html 的脚本"     first time: confirm, set the goal, work
    flower "顺便支持代码块高亮"          same folder again: one more sentence, same conversation
    flower                              say nothing: continue (asks first when run in a terminal)
    flower --new "另一件事"              archive brief, goal and lineage; start fresh
    flower once "prompt" [--resume ID]  a single agent, no workflow and no lineage

Exit codes: 0 the goal was achieved (or the step passed), 1 the run ended without achieving it,
2 bad usage (such as an empty request in a fresh folder), 130 interrupted with Ctrl-C twice.

In a terminal, Ctrl-C once asks for a word for the coordinator (``engine._cli_words``: at once
while it works, held for its next turn while the clarifier, the goal setter or the judge runs;
the screen says which, and words held when the judge passes wake the run once more with them).
A second Ctrl-C exits; a word the screen acknowledged is kept until the coordinator's transcript
holds it, so the next ``flower`` in the folder gives it first. Stdin has one reader. Our choice
for typed-ahead text: nothing typed before a question is shown answers it (a terminal's queued
lines are dropped and the question names them; piped input is a script, read in order). At the
wake prompt Ctrl-D exits 0 having started nothing, and Ctrl-C exits 130 with a line saying so.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from dotenv import load_dotenv

from engine._agents.roles import WORKER_TOOLS
from engine._agents.spec import AgentSpec
from engine._cli_view import TerminalView, wake_banner
from engine._cli_words import Words, is_work, running_step
from engine._flow.starter import WORK_STEP
from engine._lang.zh import EMPTY_ASK
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
HOLD_QUESTION = ("\n{step}正在进行,不打断它。想对干活的协调者说什么?它下一轮一开始就会收到;"
                 "回车 = 不说;再按一次 Ctrl-C 退出")
WAKE_AGAIN = "\n<- 这一轮结束了,你的话还没交给干活的协调者;带着它再唤醒一次:{said}"
WAKE_EOF = "\nflower: 没有输入(Ctrl-D),什么也没做。要接着做,直接回车;要说点新的,输入后回车。"
PROMPT_CTRL_C = "\nflower: 已取消(Ctrl-C),什么也没做;下次在这里运行 flower 还能接着做。"
GONE = ("flower: the current folder no longer exists (deleted or moved while this shell was in it). "
        "cd into the workspace again (or pass -C <folder>) and run flower there.")

log = logging.getLogger(__name__)


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
    """One line from the person before the run starts; None on EOF (no terminal, Ctrl-D)."""
    print(prompt, file=sys.stderr)
    try:
        return input("> ")
    except EOFError:
        return None


class _CtrlC:
    """First Ctrl-C: take a word for the coordinator (``Words`` says where it went); a second
    one, or Ctrl-D at that prompt, exits. The word is read through stdin's one shared reader,
    so an open question never takes it (the question is shown again after)."""

    def __init__(self, run: StarterRun, words: Words, transport: TerminalTransport) -> None:
        self.run, self.words, self.transport = run, words, transport
        self.pressed = 0
        self.exit = asyncio.Event()

    def __call__(self) -> None:
        self.pressed += 1
        if self.pressed > 1 or self.run.ended:
            self.exit.set()
            return
        asyncio.get_running_loop().create_task(self._take_word())

    async def _take_word(self) -> None:
        step = running_step(self.run)
        question = INTERRUPT_QUESTION if is_work(step) else HOLD_QUESTION.format(step=step or "这一步")
        print(question, file=sys.stderr)
        print("> ", end="", file=sys.stderr, flush=True)
        line = await self.transport.lines.line()
        if line == "":
            self.exit.set()
            return
        self.pressed = 0
        said = line.strip()
        if said:
            interrupted = self.words.say(self.run, said) == "coordinator"
        elif interrupted := is_work(running_step(self.run)):
            self.run.interrupt("继续")  # Enter: the same session goes on as it was
        else:
            print("  (什么也没说,接着做)", file=sys.stderr)
        if not interrupted:
            self.transport.reshow()  # a question still open waits for its own answer


async def _until_exit(main: asyncio.Future, ctrl_c: _CtrlC) -> int | None:
    stopper = asyncio.ensure_future(ctrl_c.exit.wait())
    done, _ = await asyncio.wait({main, stopper}, return_when=asyncio.FIRST_COMPLETED)
    if main in done:
        stopper.cancel()
        return main.result()
    main.cancel()
    await asyncio.gather(main, return_exceptions=True)  # storage closed before words are settled
    return None


def _starter_run(args: argparse.Namespace, transport: TerminalTransport | None = None) -> StarterRun:
    """The run in this folder; the CLI gets this terminal's environment, in its own process group."""
    return StarterRun(args.workspace, run_dir=args.run_dir, isolate=args.isolate, trim=not args.no_trim,
                      own_process_group=True, transport=transport or TerminalTransport(),
                      flow={"rounds": args.rounds, "judge_can_run": args.judge_can_run})


def _host_setup(workspace: str) -> None:
    """What the ``flower`` command does for its own process (the spec's Runtime did it on
    construction): read ``.env`` from the workspace, then from here, never overriding the shell;
    and record an in-flight step as ``killed-by-signal`` on SIGTERM/SIGHUP."""
    load_dotenv(Path(workspace) / ".env", override=False)
    load_dotenv(Path.cwd() / ".env", override=False)
    signals.install()


async def _run_flow(args: argparse.Namespace, ask: str) -> int:
    """Run until the flow ends; words held for a coordinator that never got its turn (the judge
    passed first) wake the run once more with them, as ``flower "<words>"`` would."""
    view = TerminalView(sys.stderr)
    transport = TerminalTransport()
    words = Words(Path(args.run_dir).resolve(), sys.stderr)
    run = _starter_run(args, transport)
    words.restore(run.wake_state()["steps"].get(WORK_STEP), new=args.new)
    loop = asyncio.get_running_loop()
    try:
        while True:
            ctrl_c = _CtrlC(run, words, transport)
            loop.add_signal_handler(signal.SIGINT, ctrl_c)

            def on_event(event, run=run) -> None:
                view(event)
                words.on_event(run, event)

            ctx = await _until_exit(asyncio.ensure_future(run.run(ask, new=args.new, on_event=on_event)), ctrl_c)
            if ctx is None:
                words.settle()
                words.report_kept()
                print("\n已退出;下次在这里运行 flower 会接着做。", file=sys.stderr)
                return EXIT_INTERRUPTED
            view.summary(ctx, run.runtime.results if run.runtime else [])
            left = words.take_held()
            words.settle()
            if not left or not run.wake_state()["waking"]:
                words.report_kept()
                return EXIT_OK if ctx.get("_ok") else EXIT_NOT_ACHIEVED
            ask, args.new = "\n".join(left), False
            print(WAKE_AGAIN.format(said=" / ".join(left)), file=sys.stderr)
            run = _starter_run(args, transport)
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


@dataclass(frozen=True)
class _Stop:
    """Nothing to run: exit with ``code`` after printing ``line``."""

    code: int
    line: str


def _decide_ask(args: argparse.Namespace, ask: str) -> tuple[str, bool] | _Stop:
    """The sentence to run with and whether to archive first, or why nothing runs."""
    state = _starter_run(args).wake_state()
    if args.new or not state["waking"]:
        if ask:
            return ask, args.new
        if not sys.stdin.isatty():
            return _Stop(EXIT_USAGE, EMPTY_ASK)
        said = _read_line(NEW_QUESTION)
        return (said.strip(), args.new) if said and said.strip() else _Stop(EXIT_USAGE, "\n" + EMPTY_ASK)
    print(wake_banner(Path(args.workspace), state), file=sys.stderr)
    if ask or not sys.stdin.isatty():
        return ask, False
    said = _read_line(WAKE_QUESTION)
    if said is None:  # Ctrl-D: the person left without saying to go on; nothing ran, nothing spent
        return _Stop(EXIT_OK, WAKE_EOF)
    if said.strip() == "/new":
        fresh = _read_line(NEW_QUESTION)
        return (fresh.strip(), True) if fresh and fresh.strip() else _Stop(EXIT_USAGE, "\n" + EMPTY_ASK)
    return said.strip(), False


def _here() -> str | None:
    """The current folder, or None when it was deleted (or moved away) under this shell."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    words = list(args.ask)
    if _here() is None:
        print(GONE, file=sys.stderr)
        return EXIT_USAGE
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
            print(PROMPT_CTRL_C, file=sys.stderr)
            return EXIT_INTERRUPTED
        if isinstance(decided, _Stop):
            print(decided.line, file=sys.stderr)
            return decided.code
        args.new = decided[1]
        try:
            return asyncio.run(_run_flow(args, decided[0]))
        except KeyboardInterrupt:  # before the loop's own Ctrl-C handling was in place
            print("\n已退出;下次在这里运行 flower 会接着做。", file=sys.stderr)
            return EXIT_INTERRUPTED
    except (CredentialsError, WorkspaceBusyError, ValueError) as exc:
        print(f"flower: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except FileNotFoundError as exc:
        if _here() is not None:
            raise
        print(GONE, file=sys.stderr)  # the folder went away while flower ran
        log.debug("the working folder vanished", exc_info=exc)
        return EXIT_NOT_ACHIEVED


if __name__ == "__main__":
    sys.exit(main())

"""The flower command: the starter workflow in a terminal, continuing where it left off.

``main`` is the entry (``engine.cli`` names it for pyproject and ``python -m engine.cli``).

What it prints is ``engine._cli.cli_texts`` (one table per language), its options and help are
``engine._cli.args``, the live progress line is ``engine._cli.progress``.

In a terminal, Ctrl-C once asks for a word for the coordinator (``engine._cli.words``: at once
while it works, held for its next turn while the clarifier, the goal setter or the judge runs;
the screen says which, and words held when the judge passes wake the run once more with them).
A second Ctrl-C exits; a word the screen acknowledged is kept until the coordinator's transcript
holds it, so the next flower in the folder gives it first. Stdin has one reader. Our choice
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

from engine import AgentSpec, CredentialsError, Runtime, StarterRun, WorkspaceBusyError
from engine._cli.args import language, parser
from engine._cli.cli_texts import say
from engine._cli.progress import Progress
from engine._cli.screen import Screen
from engine._cli.view import TerminalView, wake_banner
from engine._cli.words import Words, is_work, running_step
from engine.authoring import WORKER_TOOLS, TerminalTransport
from engine.host import install_signal_rescue
from engine.lang import speaking, starter_step_name, step_names

EXIT_OK, EXIT_NOT_ACHIEVED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
log = logging.getLogger(__name__)


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

    def __init__(self, run: StarterRun, words: Words, transport: TerminalTransport, out: Screen) -> None:
        self.run, self.words, self.transport, self.out = run, words, transport, out
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
        question = say("interrupt_question") if is_work(step) else say(
            "hold_question", step=str(step) if step else say("this_step"))
        print(question, file=self.out)
        print("> ", end="", file=self.out, flush=True)
        line = await self.transport.lines.line()
        if line == "":
            self.exit.set()
            return
        self.pressed = 0
        said = line.strip()
        if said:
            interrupted = self.words.say(self.run, said) == "coordinator"
        elif interrupted := is_work(running_step(self.run)):
            self.run.interrupt(say("go_on"))  # Enter: the same session goes on as it was
        else:
            print(say("nothing_said"), file=self.out)
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
                      flow={"rounds": args.rounds, "judge_can_run": args.judge_can_run},
                      language=args.language)


def _host_setup(workspace: str) -> None:
    """What the ``flower`` command does for its own process (the spec's Runtime did it on
    construction): read ``.env`` from the workspace, then from here, never overriding the shell;
    and record an in-flight step as ``killed-by-signal`` on SIGTERM/SIGHUP."""
    load_dotenv(Path(workspace) / ".env", override=False)
    load_dotenv(Path.cwd() / ".env", override=False)
    install_signal_rescue()


async def _run_flow(args: argparse.Namespace, ask: str) -> int:
    """Run until the flow ends; words held for a coordinator that never got its turn (the judge
    passed first) wake the run once more with them, as ``flower "<words>"`` would."""
    screen = Screen(sys.stderr)
    view = TerminalView(screen)
    transport = TerminalTransport(output=screen)
    words = Words(Path(args.run_dir).resolve(), screen)
    progress = Progress(screen, lambda: transport.lines.reading)
    run = _starter_run(args, transport)
    steps = run.wake_state().steps
    words.restore(next((steps[w] for w in step_names(starter_step_name("work")) if steps.get(w)), None), new=args.new)
    loop = asyncio.get_running_loop()
    ticker = asyncio.ensure_future(progress.run())
    try:
        while True:
            ctrl_c = _CtrlC(run, words, transport, screen)
            loop.add_signal_handler(signal.SIGINT, ctrl_c)
            untold = [args.new]  # --new: the first event says where the last run went

            def on_event(event, run=run, untold=untold) -> None:
                if untold[0]:
                    untold[0] = False
                    view.archived(run.archived)
                view(event)
                progress(event)
                words.on_event(run, event)

            result = await _until_exit(asyncio.ensure_future(run.run(ask, new=args.new, on_event=on_event)), ctrl_c)
            screen.clear()
            if result is None:
                words.settle()
                words.report_kept()
                print(say("exited"), file=screen)
                return EXIT_INTERRUPTED
            view.summary(result, run.runtime.results if run.runtime else [], rounds=args.rounds)
            left = words.take_held()
            words.settle()
            if not left or not run.wake_state().waking:
                words.report_kept()
                return EXIT_OK if result.ok else EXIT_NOT_ACHIEVED
            ask, args.new = "\n".join(left), False
            print(say("wake_again", said=" / ".join(left)), file=screen)
            run = _starter_run(args, transport)
    finally:
        ticker.cancel()
        await asyncio.gather(ticker, return_exceptions=True)
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
    if args.new or not state.waking:
        if ask:
            return ask, args.new
        if not sys.stdin.isatty():
            return _Stop(EXIT_USAGE, say("empty_ask"))
        said = _read_line(say("new_question"))
        return (said.strip(), args.new) if said and said.strip() else _Stop(EXIT_USAGE, "\n" + say("empty_ask"))
    print(wake_banner(Path(args.workspace), state), file=sys.stderr)
    if ask or not sys.stdin.isatty():
        return ask, False
    said = _read_line(say("wake_question"))
    if said is None:  # Ctrl-D: the person left without saying to go on; nothing ran, nothing spent
        return _Stop(EXIT_OK, say("wake_eof"))
    if said.strip() == "/new":
        fresh = _read_line(say("new_question"))
        return (fresh.strip(), True) if fresh and fresh.strip() else _Stop(EXIT_USAGE, "\n" + say("empty_ask"))
    return said.strip(), False


def _here() -> str | None:
    """The current folder, or None when it was deleted (or moved away) under this shell."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        early = language(argv)  # for the help; .env may still choose (read below)
    except ValueError as exc:
        print(f"flower: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with speaking(early):
        args = parser().parse_args(argv)
        if _here() is None:
            print(say("gone"), file=sys.stderr)
            return EXIT_USAGE
    _host_setup(args.workspace)
    try:
        args.language = language(argv)
    except ValueError as exc:  # FLOWER_LANGUAGE from a .env file
        print(f"flower: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with speaking(args.language):
        return _main(args)


def _main(args: argparse.Namespace) -> int:
    words = list(args.ask)
    try:
        if words and words[0] == "once":
            prompt = " ".join(words[1:]).strip()
            if not prompt:
                print(say("once_needs_prompt"), file=sys.stderr)
                return EXIT_USAGE
            return asyncio.run(_run_once(args, prompt))
        try:
            decided = _decide_ask(args, " ".join(words).strip())
        except KeyboardInterrupt:
            print(say("prompt_ctrl_c"), file=sys.stderr)
            return EXIT_INTERRUPTED
        if isinstance(decided, _Stop):
            print(decided.line, file=sys.stderr)
            return decided.code
        args.new = decided[1]
        try:
            return asyncio.run(_run_flow(args, decided[0]))
        except KeyboardInterrupt:  # before the loop's own Ctrl-C handling was in place
            print(say("exited"), file=sys.stderr)
            return EXIT_INTERRUPTED
    except (CredentialsError, WorkspaceBusyError, ValueError) as exc:
        print(f"flower: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except FileNotFoundError as exc:
        if _here() is not None:
            raise
        print(say("gone"), file=sys.stderr)  # the folder went away while flower ran
        log.debug("the working folder vanished", exc_info=exc)
        return EXIT_NOT_ACHIEVED


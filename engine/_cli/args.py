"""The ``flower`` command line: its options, its help, and the language it speaks.

The language is chosen once: ``--lang``, else ``FLOWER_LANGUAGE``, else the locale's language
(``zh_*`` is Chinese, anything else English). A bad value is a usage error naming the value, where
it came from and the choices. The help text is in that language and lists the exit codes once.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence

from engine._cli.cli_texts import say
from engine.lang import LANGUAGE_ENV, check_language, locale_language

__all__ = ["language", "parser"]


def language(argv: Sequence[str], env: Mapping[str, str] = os.environ) -> str:
    """The language of this ``flower`` run (``en`` / ``zh``); ``ValueError`` for a bad value."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--lang")
    flag = early.parse_known_args(list(argv))[0].lang
    if flag is not None:
        return check_language(flag, source="--lang")
    if env.get(LANGUAGE_ENV, "").strip():
        return check_language(env[LANGUAGE_ENV], source=LANGUAGE_ENV)
    return locale_language(env)


def parser() -> argparse.ArgumentParser:
    """The command's parser; its help is in the language in effect (``engine.lang.speaking``)."""
    p = argparse.ArgumentParser(
        prog="flower",
        description=say("help"),
        epilog=say("exit_codes"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("ask", nargs="*", help="the request, or one more sentence when continuing")
    p.add_argument("--new", action="store_true", help="archive the last run and start fresh")
    p.add_argument("--lang", metavar="en|zh",
                   help=f"the language flower speaks (default: {LANGUAGE_ENV}, else the locale)")
    p.add_argument("--no-trim", action="store_true", help="keep old large tool results in context")
    p.add_argument("--rounds", type=int, default=3, help="work rounds the judge allows (per wake)")
    p.add_argument("-r", "--run-dir", default="runs", help="run folder, relative to the current one")
    p.add_argument("-C", "--workspace", default=".", help="the workspace folder (default: here)")
    p.add_argument("--isolate", action="store_true", help="each worker in its own git worktree")
    p.add_argument("--judge-can-run", action="store_true", help="let the judge run commands")
    p.add_argument("--resume", help="with once: the session id to continue")
    return p

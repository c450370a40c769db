"""``python -m bench [name] [options]``: run one benchmark by name, or all of them.

With no name, every benchmark runs with its defaults and the output is one Markdown section
(date, machine, each benchmark's tables) ready to paste into ``bench/RESULTS.md``. With a name,
the remaining arguments go to that benchmark (``python -m bench store --help``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import date

from bench import load_average, machine


def _store(argv: list[str]) -> int:
    from bench import store

    return store.main(argv)


def _runtime(argv: list[str]) -> int:
    from bench import runtime

    return runtime.main(argv)


def _bot(argv: list[str]) -> int:
    from bench import bot

    return bot.main(argv)


def _resume(argv: list[str]) -> int:
    from bench import resume

    return resume.main(argv)


def _resume_cli(argv: list[str]) -> int:
    from bench import resume_cli

    return resume_cli.main(argv)


def _corpus(argv: list[str]) -> int:
    from bench import corpus

    return corpus.main(argv)


def _replicas(argv: list[str]) -> int:
    from bench import replicas

    return replicas.main(argv)


def _walk(argv: list[str]) -> int:
    from bench import walk

    return walk.main(argv)


def _housekeeping(argv: list[str]) -> int:
    from bench import housekeeping

    return housekeeping.main(argv)


BENCHMARKS: dict[str, tuple[Callable[[list[str]], int], str]] = {
    "store": (_store, "session store: append, resume load and load memory (issue 2)"),
    "runtime": (_runtime, "one 20-tool-call step: raw SDK query() vs Runtime.run (issue 3)"),
    "bot": (_bot, "the Slack bot with 0/20/50 runs waiting: ack, first reply, loop lag, memory (issues 5, 6)"),
    "resume": (_resume, "resume on real sessions: shown/raw, chains, policy counts, load/parse (issue 15; needs CORPUS)"),
    "resume-cli": (_resume_cli, "resume real sessions through the real CLI, raw vs trimmed store: what the "
                                "model is sent (issue 15; needs CORPUS)"),
    "corpus": (_corpus, "rebuild the real-session corpus for `resume` from its recorded sources (issue 15)"),
    "housekeeping": (_housekeeping, "bot.db after 100k events with and without housekeeping, the longest "
                                    "transaction (issue 13)"),
    "replicas": (_replicas, "1 and 3 replicas on PostgreSQL and SQLite: claims, notices/s, forwarded events, "
                            "takeover (issue 17)"),
    "walk": (_walk, "the workbench index: refresh cost, and the event loop's lag with a hostile tree (issue 37)"),
}

USAGE = "usage: python -m bench [NAME [OPTIONS]]\n\nBenchmarks (all when no NAME is given):\n" + "\n".join(
    f"  {name:<13} {about}" for name, (_, about) in BENCHMARKS.items()
) + "\n\n`python -m bench NAME --help` lists a benchmark's options. Results: bench/RESULTS.md."


def run_all() -> int:
    """Every benchmark with its defaults, printed as one dated Markdown section."""
    from bench import bot, housekeeping, runtime, store

    started = time.perf_counter()
    print(f"## {date.today().isoformat()}\n")
    for name, value in machine().items():
        print(f"- {name}: {value}")
    sys.stdout.flush()
    sections = []
    sections_to_run = (
        ("Runtime overhead", runtime.run),  # first: the store run grows this process
        ("Session store", store.run),
        ("Where a 10k all-policies load spends its time; a leaner read path", store.profile),
        ("bot.db with and without housekeeping", housekeeping.run),
        ("The Slack bot under load", bot.run),  # last: it sets the offline env while it runs
    )
    for title, fn in sections_to_run:
        t0 = time.perf_counter()
        body = fn()
        sections.append(f"### {title} ({time.perf_counter() - t0:.0f} s)\n\n{body}")
    print("\n" + "\n\n".join(sections))
    print(f"\n(all benchmarks: {time.perf_counter() - started:.0f} s; load average at the end: "
          f"{load_average()})")
    return 0


def main(argv: list[str]) -> int:
    """Dispatch ``argv`` (without the program name)."""
    if not argv:
        return run_all()
    if argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    if argv[0] not in BENCHMARKS:
        print(f"python -m bench: no benchmark named {argv[0]!r}; choose one of "
              f"{', '.join(BENCHMARKS)} (or none to run all).\n\n{USAGE}", file=sys.stderr)
        return 2
    return BENCHMARKS[argv[0]][0](argv[1:])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

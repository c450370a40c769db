"""The whitelist behind ``is_ephemeral``: which simple commands only read and print.

A simple command arrives split into words (quotes removed, no operators left). A verb outside
these tables is not a glance; a whitelisted verb in a state-changing form is refused: ``sed -i``,
``find -delete``, ``git branch -D``, ``git ... --force``, awk's ``system(`` and so on. The
scanner that gets a command line down to these words is ``engine._resume.ephemeral``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["segment_ok", "segment_yields_value"]

# Verbs that only read and print, with any arguments (output goes to stdout only).
_PLAIN = frozenset(
    "ls pwd df du whoami uname id free uptime nproc printenv ps top lsof pgrep cat head tail wc "
    "stat which whereis type grep egrep fgrep cut tr echo diff jq realpath basename dirname".split()
)
_FIND_REFUSED = frozenset(
    "-delete -ok -okdir -exec -execdir -fprint -fprint0 -fprintf -fls".split()
)
_GIT_REFUSED_PREFIXES = ("--force", "--hard", "--prune", "--output", "--exec")
_GIT_READ_ONLY = frozenset(
    "status diff log show rev-parse ls-files ls-tree blame describe shortlog cat-file rev-list "
    "show-ref merge-base name-rev count-objects for-each-ref whatchanged version grep".split()
)
_GIT_SUB_READS = {  # subcommand -> the only sub-subcommands allowed after it
    "stash": {"list", "show"},
    "worktree": {"list"},
    "reflog": {"show"},
    "remote": {"show", "get-url"},
}
_GIT_REF_LIST_FLAGS = {  # flags of `git branch` / `git tag` that keep them in list mode
    "branch": "-a --all -r --remotes -v -vv --verbose -l --list --show-current --column "
    "--no-column --color --no-color -i --ignore-case --no-contains --contains --merged "
    "--no-merged --points-at --sort --format --abbrev --no-abbrev",
    "tag": "-l --list -n --column --no-column --color --no-color -i --ignore-case --contains "
    "--no-contains --merged --no-merged --points-at --sort --format",
}
_GIT_FLAG_WITH_VALUE = frozenset(
    "--contains --no-contains --merged --no-merged --points-at --sort --format".split()
)
_GIT_CONFIG_READS = frozenset("--get --get-all --get-regexp --get-urlmatch --list -l".split())
_GIT_CONFIG_WRITES = frozenset(
    "--add --unset --unset-all --replace-all --edit -e --rename-section --remove-section".split()
)
_DOCKER_READS = {"ps", "images", "inspect", "logs", "version", "info", "image ls", "container ls"}
_KUBECTL_READS = {
    "get", "describe", "logs", "top", "version", "explain", "api-resources", "cluster-info",
    "config get-contexts", "config current-context", "config view",
}
_KUBECTL_GLOBAL_WITH_VALUE = frozenset("-n --namespace --context --cluster --kubeconfig".split())


def segment_ok(words: list[str]) -> bool:
    """Whether one simple command (already split into words) is a whitelisted, read-only form."""
    verb, args = words[0], words[1:]
    if verb in _PLAIN:
        return True
    check = _VERB_CHECKS.get(verb)
    return check is not None and check(args)


# Glances whose output is a value the run may use again, never a state that goes stale: a
# `date` that named the run's output folder, a `mktemp` path, the `pwd` or commit id later calls
# rely on. Expiring one loses the value (a re-run gives another date, another temp file) or
# costs a re-run for nothing (a path does not change). `ls` is not here on purpose: a listing is
# the state of a folder, it does go stale, and a name the run goes on to use appears again in
# the input of the call that uses it.
_VALUE_VERBS = frozenset(
    "date pwd mktemp hostname whoami id uname nproc realpath readlink basename dirname which "
    "whereis type command printenv env echo".split()
)
_GIT_VALUE_SUBS = frozenset("rev-parse describe merge-base show-ref config remote name-rev".split())


def segment_yields_value(words: list[str]) -> bool:
    """Whether one simple command prints a value the run may use again (see ``_VALUE_VERBS``)."""
    verb, args = words[0], words[1:]
    if verb in _VALUE_VERBS:
        return True
    if verb != "git":
        return False
    while args and args[0] in ("--no-pager", "-C"):
        args = args[2:] if args[0] == "-C" else args[1:]
    if not args:
        return False
    return args[0] in _GIT_VALUE_SUBS or (args[0] == "branch" and "--show-current" in args[1:])


def _positional(args: list[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


def _short_cluster_has(arg: str, letter: str) -> bool:
    return arg.startswith("-") and not arg.startswith("--") and letter in arg[1:]


def _sed(args: list[str]) -> bool:
    for a in args:
        if a.startswith(("--in-place", "--file")) or a == "-f" or _short_cluster_has(a, "i"):
            return False  # -i, -ni, -i.bak edit in place; a script file cannot be inspected here
    scripts = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--expression")]
    scripts += [a.split("=", 1)[1] for a in args if a.startswith("--expression=")]
    if not scripts:  # without -e the first operand is the script, the rest are files
        scripts = _positional(args)[:1]
    return not any(_sed_script_writes(s) for s in scripts)


_SED_ONE_ADDRESS = r"(?:\d+|\$|/(?:\\.|[^/])*/)"  # a line number, the last line, or /regex/
_SED_ADDRESS = re.compile(rf"^\s*{_SED_ONE_ADDRESS}(?:\s*,\s*{_SED_ONE_ADDRESS})?\s*!?\s*")
_SED_SUBST_FLAGS = re.compile(r"s(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1([a-zA-Z0-9]*)")


def _sed_script_writes(script: str) -> bool:
    """True when a sed script writes a file (``w``, ``s///w``) or runs a command (``e``)."""
    if any(set(f) & {"w", "e"} for _, f in _SED_SUBST_FLAGS.findall(script)):
        return True
    for piece in re.split(r"[;\n{}]", script):
        body = _SED_ADDRESS.sub("", piece, count=1).lstrip()
        if body[:1] in ("w", "W", "e"):
            return True
    return False


def _awk(args: list[str]) -> bool:
    if any(a == "-f" or a.startswith("--file") for a in args):
        return False  # a program in a file cannot be inspected here
    program = " ".join(_positional(args)[:1])
    if re.search(r"\bsystem\s*\(", program) or re.search(r"\bprintf?\b[^;}\n]*>", program):
        return False
    return not re.search(r"(?<!\|)\|(?!\|)", program)  # `print | "sh"`, `"cmd" | getline`


def _sort(args: list[str]) -> bool:
    return not any(
        a.startswith(("--output", "--compress-program")) or _short_cluster_has(a, "o") for a in args
    )


def _date(args: list[str]) -> bool:
    return not any(
        a.startswith(("-s", "--set")) or (re.fullmatch(r"-[a-zA-Z]*s", a) and a[1] != "I")
        for a in args
    )


def _hostname(args: list[str]) -> bool:
    refused = ("-F", "--file", "-b", "--boot")
    return not _positional(args) and not any(a.startswith(refused) for a in args)


def _git(args: list[str]) -> bool:
    while args and (args[0] == "--no-pager" or args[0] == "-C"):
        args = args[2:] if args[0] == "-C" else args[1:]  # `-c` is refused: it can set a pager
    if not args or any(a.startswith(_GIT_REFUSED_PREFIXES) for a in args):
        return False
    sub, rest = args[0], args[1:]
    if sub in _GIT_READ_ONLY:
        return not (sub == "grep" and any(a in ("-O", "--open-files-in-pager") for a in rest))
    if sub in _GIT_SUB_READS:
        allowed = _GIT_SUB_READS[sub]
        pos = _positional(rest)
        if sub == "remote" and not pos:
            return all(a in ("-v", "--verbose") for a in rest)
        if sub == "reflog" and not pos:
            return True  # bare `git reflog` is `git reflog show`
        return bool(pos) and rest[0] in allowed
    if sub in _GIT_REF_LIST_FLAGS:
        return _git_ref_list(sub, rest)
    if sub == "config":
        return bool(_GIT_CONFIG_READS & set(rest)) and not (_GIT_CONFIG_WRITES & set(rest))
    return False


def _git_ref_list(sub: str, args: list[str]) -> bool:
    """`git branch` / `git tag` in list mode only: a bare name would create a ref."""
    allowed = set(_GIT_REF_LIST_FLAGS[sub].split())
    list_mode = any(a in ("-l", "--list") for a in args)
    i = 0
    while i < len(args):
        a = args[i]
        name = a.split("=", 1)[0]
        if a.startswith("-"):
            if name not in allowed and not (sub == "tag" and re.fullmatch(r"-n\d*", a)):
                return False  # -D -d -m -M -c -C -f -a -s --delete --move --set-upstream-to...
            if name in _GIT_FLAG_WITH_VALUE and "=" not in a:
                i += 1
        elif not list_mode:
            return False
        i += 1
    return True


def _docker(args: list[str]) -> bool:
    return bool(args) and (args[0] in _DOCKER_READS or " ".join(args[:2]) in _DOCKER_READS)


def _kubectl(args: list[str]) -> bool:
    while args and args[0].startswith("-"):
        skip = 2 if args[0] in _KUBECTL_GLOBAL_WITH_VALUE else 1
        args = args[skip:]
    return bool(args) and (args[0] in _KUBECTL_READS or " ".join(args[:2]) in _KUBECTL_READS)


_VERB_CHECKS: dict[str, Callable[[list[str]], bool]] = {
    "sed": _sed, "awk": _awk, "gawk": _awk, "sort": _sort, "date": _date, "hostname": _hostname,
    "git": _git, "docker": _docker, "kubectl": _kubectl,
    "find": lambda a: not _FIND_REFUSED & set(a),
    "rg": lambda a: not any(x.startswith("--pre") for x in a),  # --pre runs a program per file
    "tree": lambda a: "-o" not in a,  # -o writes the listing to a file
    "file": lambda a: not {"-C", "--compile"} & set(a),  # -C compiles a magic file
    "uniq": lambda a: len(_positional(a)) <= 1,  # a second operand is where uniq writes
    "env": lambda a: all(x in ("-0", "--null") for x in a),  # `env VAR=1 cmd` runs cmd
    "command": lambda a: a[:1] in (["-v"], ["-V"]),  # plain `command x` runs x
}

"""``is_ephemeral``: is this Bash command a read-only glance whose output goes stale?

One function serves two callers and must stay one function: ``delegate_guard(allow_glance=True)``
lets the coordinator run exactly these commands itself, and the trimming store expires exactly
these results on resume. Letting a command through without expiring it leaves a stale
``git status`` in context forever (and misleading); expiring without letting it through makes the
coordinator dispatch a subagent (about 4.3k of start-up cost) for an ``ls``.

Decision order (the spec's):

1. empty or only whitespace: False;
2. command substitution (``$(``, backtick, ``<(``, ``>(``) outside single quotes: False;
3. after removing safe redirections (``2>&1``, ``>/dev/null``, ``&> /dev/null``...), any ``>`` or
   ``<`` left: False;
4. after removing ``&&`` ``||`` ``;`` ``|``, a lone ``&`` (background job) left: False;
5. split on ``&&`` ``||`` ``;`` ``|`` (and newlines), and every segment must match the whitelist,
   where the state-changing forms of whitelisted verbs are refused (``sed -i``, ``find -delete``,
   ``git branch -D``, ``git ... --force``, awk ``system(``...).

Operators and quotes are read the shell's way: a ``|`` or ``;`` inside quotes is text, not a pipe.
Anything the scanner cannot read for sure (an unclosed quote) is refused: a wrong False only costs
a subagent dispatch, a wrong True lets the coordinator change state.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

__all__ = ["EphemeralPolicy", "is_ephemeral"]

# Verbs that only read and print, with any arguments (output goes to stdout only).
_PLAIN = frozenset(
    "ls pwd df du whoami uname id free uptime nproc printenv ps top lsof pgrep cat head tail wc "
    "stat which whereis type grep egrep fgrep cut tr echo diff jq realpath basename dirname".split()
)
_END = r"(?=[\s;&|)]|$)"
_SAFE_REDIRECT = re.compile(
    r"\d?>&\d" + _END  # 2>&1, >&2
    + r"|&>>?\s*/dev/null" + _END  # &> /dev/null
    + r"|\d?>>?\s*/dev/null" + _END  # >/dev/null, 2>/dev/null, 1>> /dev/null
    + r"|\d?<\s*/dev/null" + _END  # </dev/null
)
_SEPARATOR = re.compile(r"&&|\|\||;|\||\n")
_SUBSTITUTION = ("$(", "`", "<(", ">(")
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


@dataclass
class EphemeralPolicy:
    """Expire the results of ephemeral Bash commands (``is_ephemeral``) older than the newest few.

    Only Bash results whose command ``is_ephemeral``; Read is left alone (a file's content does
    not go stale enough to mislead). ``keep_recent`` newest ephemeral results stay. Older ones
    whose text is at most ``max_chars`` long have their content replaced by ``text`` (``{cmd}``
    the command, ``{age}`` how many model turns ago); the content is dropped, not spilled, since
    re-running a glance is cheap. A longer ephemeral result (a big ``git diff``) is not dropped:
    it is left to the trim pass, which spills it where it can be read back.
    Age: the number of assistant responses (distinct API message ids) written after the result.
    """

    enabled: bool = True
    keep_recent: int = 6
    max_chars: int = 2000
    text: str = "[{cmd} 的结果已过期(第 {age} 轮前),当前状态可能已变。需要请重新执行]"


def is_ephemeral(cmd: str) -> bool:
    """True when ``cmd`` is a read-only glance (git status, ls, grep...) per the spec's five steps.

    Never raises: a command that cannot be parsed for sure (an unclosed quote) is not ephemeral.
    """
    if not cmd or not cmd.strip():  # 1
        return False
    masked_sq = _mask(cmd, double=False)
    masked = _mask(cmd, double=True)
    if masked is None or masked_sq is None:
        return False
    if any(s in masked_sq for s in _SUBSTITUTION):  # 2: "$(" runs even inside double quotes
        return False
    text, masked = _blank_safe_redirects(cmd, masked)
    if "<" in masked or ">" in masked:  # 3
        return False
    if "&" in re.sub(r"&&|\|\|", "", masked):  # 4: the lone & of a background job
        return False
    segments = []
    start = 0
    for m in _SEPARATOR.finditer(masked):  # 5: split at the operators the shell sees
        segments.append(text[start : m.start()])
        start = m.end()
    segments.append(text[start:])
    words = [_split(s) for s in segments]
    words = [w for w in words if w != []]
    return bool(words) and all(w is not None and _segment_ok(w) for w in words)


def _mask(cmd: str, *, double: bool) -> str | None:
    """``cmd`` with quoted characters (and backslash-escaped ones) replaced by ``_``, same length.

    ``double=False`` masks only single quotes and escapes (what ``$(`` ignores). Returns None for
    an unclosed quote.
    """
    out = []
    quote = ""
    i = 0
    while i < len(cmd):
        c = cmd[i]
        if quote == "'":
            out.append("'" if c == "'" else "_")
            quote = "" if c == "'" else quote
        elif quote == '"':
            if c == "\\" and i + 1 < len(cmd):
                out.append("__")
                i += 2
                continue
            out.append('"' if c == '"' else ("_" if double else c))
            quote = "" if c == '"' else quote
        elif c == "\\":
            out.append("_" * len(cmd[i : i + 2]))
            i += 2
            continue
        else:
            out.append(c)
            quote = c if c in "'\"" else ""
        i += 1
    return None if quote else "".join(out)


def _blank_safe_redirects(text: str, masked: str) -> tuple[str, str]:
    """Blank out the safe redirections in both strings, keeping positions aligned."""
    for m in reversed(list(_SAFE_REDIRECT.finditer(masked))):
        pad = " " * (m.end() - m.start())
        text = text[: m.start()] + pad + text[m.end() :]
        masked = masked[: m.start()] + pad + masked[m.end() :]
    return text, masked


def _split(segment: str) -> list[str] | None:
    try:
        return shlex.split(segment)
    except ValueError:
        return None


def _segment_ok(words: list[str]) -> bool:
    """Whether one simple command (already split into words) is a whitelisted, read-only form."""
    verb, args = words[0], words[1:]
    if verb in _PLAIN:
        return True
    check = _VERB_CHECKS.get(verb)
    return check is not None and check(args)


def _positional(args: list[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


def _short_cluster_has(arg: str, letter: str) -> bool:
    return arg.startswith("-") and not arg.startswith("--") and letter in arg[1:]


def _rg(args: list[str]) -> bool:
    return not any(a.startswith("--pre") for a in args)  # --pre runs a program on every file


def _find(args: list[str]) -> bool:
    return not any(a in _FIND_REFUSED for a in args)


def _sed(args: list[str]) -> bool:
    for a in args:
        if a.startswith(("--in-place", "--file")) or a == "-f" or _short_cluster_has(a, "i"):
            return False  # -i, -ni, -i.bak edit in place; a script file cannot be inspected here
    scripts = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--expression")]
    scripts += [a.split("=", 1)[1] for a in args if a.startswith("--expression=")]
    if not scripts:  # without -e the first operand is the script, the rest are files
        scripts = _positional(args)[:1]
    return not any(_sed_script_writes(s) for s in scripts)


_SED_ADDRESS = re.compile(r"^\s*(?:\d+|\$|/(?:\\.|[^/])*/)(?:\s*,\s*(?:\d+|\$|/(?:\\.|[^/])*/))?\s*!?\s*")
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


def _uniq(args: list[str]) -> bool:
    return len(_positional(args)) <= 1  # a second file name is where uniq writes


def _tree(args: list[str]) -> bool:
    return "-o" not in args


def _file(args: list[str]) -> bool:
    return not any(a in ("-C", "--compile") for a in args)


def _date(args: list[str]) -> bool:
    return not any(
        a.startswith(("-s", "--set")) or (re.fullmatch(r"-[a-zA-Z]*s", a) and a[1] != "I")
        for a in args
    )


def _hostname(args: list[str]) -> bool:
    refused = ("-F", "--file", "-b", "--boot")
    return not _positional(args) and not any(a.startswith(refused) for a in args)


def _env(args: list[str]) -> bool:
    return all(a in ("-0", "--null") for a in args)  # `env VAR=1 cmd` runs a command


def _command(args: list[str]) -> bool:
    return bool(args) and args[0] in ("-v", "-V")  # plain `command x` runs x


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


_VERB_CHECKS = {
    "rg": _rg, "find": _find, "sed": _sed, "awk": _awk, "gawk": _awk, "sort": _sort,
    "uniq": _uniq, "tree": _tree, "file": _file, "date": _date, "hostname": _hostname,
    "env": _env, "command": _command, "git": _git, "docker": _docker, "kubectl": _kubectl,
}

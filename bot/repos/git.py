"""Run ``git`` as a subprocess: no shell, never a prompt, output captured, one error type, and
nothing a repository's own files say may make git run a program.

Every call goes through ``run``: ``git -C <folder> ...`` with stdin closed, ``GIT_TERMINAL_PROMPT=0``
(a URL that needs a password fails at once instead of hanging the bot on an invisible prompt),
ssh in batch mode unless the operator chose their own ssh command, and ``LC_ALL=C`` so git's
messages read the same on every machine.

A thread's agent can write its worktree and, through it, the repository's git folder (objects,
refs, ``config``, ``hooks/``), so the bot treats both as hostile when it runs git there itself:

- Environment (``git_env``): an allow-list, never ``os.environ`` whole: ``PATH``, ``HOME``, ``USER``,
  ``LOGNAME``, ``LANG``, ``LC_*``, ``TZ``, ``TMPDIR``, ``XDG_CONFIG_HOME`` (where git finds the
  operator's global config), ``SSL_CERT_FILE``/``SSL_CERT_DIR`` (https with a private CA), the ssh
  agent, the proxy variables, and ``GIT_*`` except the names that point git at other folders or code
  (``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_CONFIG_PARAMETERS``, ``GIT_EXEC_PATH``, ... see
  ``_GIT_DROPPED``). So no ``SLACK_*``, ``FLOWER_*``, ``ANTHROPIC_*``, ``CLAUDE_*`` or forge token ever
  reaches a program git starts. ``GIT_ASKPASS``, ``GIT_SSH_COMMAND``, ``GIT_PROXY_COMMAND`` and
  ``GIT_CONFIG_GLOBAL`` stay: they are the operator's choices.
- Every call runs with ``--no-pager`` and ``SAFE_CONFIG`` (``-c`` beats every config file): no hook
  (``core.hooksPath=/dev/null``), no fsmonitor, no ``ext::`` URL, no alternate-refs command, no gpg,
  no stepping into submodules; and per subcommand the options in ``_OPTIONS`` (``diff`` without
  external diff or textconv, ``push``/``fetch`` with git's own receive-/upload-pack whatever
  ``remote.<name>.receivepack`` says).
- Keys whose value is a program the operator may really need (``credential.*helper``,
  ``core.askPass``, ``filter.<driver>.*``) are taken from the operator's config files only (system
  and global, where an operator puts them): a value the repository's config (or its worktree config)
  sets is overridden with the operator's, or blanked (``program_overrides``). Read for the
  subcommands that use them (``_READS_PROGRAMS``). So a git-lfs filter must be installed globally
  (``git lfs install``, its default), not with ``--local`` only.
- ssh: ``GIT_SSH_COMMAND`` is always set (the operator's, else ``ssh -o BatchMode=yes``) and git
  prefers it to ``core.sshCommand``, so a ``core.sshCommand`` in any config file is never run; an
  operator picks their ssh with ``GIT_SSH_COMMAND``. ``GIT_PROXY_COMMAND`` defaults to empty for the
  same reason (git then ignores ``core.gitProxy``, which is first-match and cannot be overridden).

Not covered: where a push goes. ``remote.<name>.url``/``pushurl`` and ``url.*.insteadOf`` come from
the repository's config; a rewritten one can send the branch elsewhere, and a local-path target's
own receive hooks run there (git passes no ``-c`` to a local receive-pack).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import threading
from pathlib import Path

from bot.errors import RepoError

GIT_TIMEOUT_S = 600.0

_KEPT = frozenset({"PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "TMPDIR", "XDG_CONFIG_HOME",
                   "SSL_CERT_FILE", "SSL_CERT_DIR", "SSH_AUTH_SOCK", "SSH_AGENT_PID",
                   *(name for proxy in ("http_proxy", "https_proxy", "no_proxy", "all_proxy")
                     for name in (proxy, proxy.upper()))})
# GIT_* names that make git use another repository, object store, config or program than the
# one the bot means: whoever set them, the bot's git calls never take them
_GIT_DROPPED = frozenset({"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
                          "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE",
                          "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXEC_PATH",
                          "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
                          "GIT_SHALLOW_FILE", "GIT_GRAFT_FILE", "GIT_REPLACE_REF_BASE",
                          "GIT_QUARANTINE_PATH", "GIT_PREFIX"})
_GIT_DROPPED_PREFIXES = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")

SAFE_CONFIG = (
    "core.hooksPath=/dev/null",        # no hook runs, whichever hooks folder a config names
    "core.fsmonitor=false",            # status/diff would start the configured fsmonitor program
    "core.alternateRefsCommand=true",  # fetch would run it for each alternate object store
    "protocol.ext.allow=never",        # an ext:: URL is a command line
    "log.showSignature=false",         # log would run gpg.program
    "push.gpgSign=false",              # push would run gpg.program to sign
    "submodule.recurse=false",         # a submodule's git folder is the agent's to plant
)
# options that beat what a repository's config asks for, placed right after the subcommand
_OPTIONS: dict[str, tuple[str, ...]] = {
    "diff": ("--no-ext-diff", "--no-textconv", "--submodule=short"),  # diff.external, textconv, diff.submodule=diff
    "status": ("--ignore-submodules=dirty",),  # no `git status` inside a submodule's (planted) git folder
    "push": ("--no-verify", "--no-signed", "--recurse-submodules=no", "--receive-pack=git-receive-pack"),
    "fetch": ("--no-recurse-submodules", "--upload-pack=git-upload-pack"),
}
# keys naming a program the operator may need: kept from system/global config, never the repository's
_PROGRAM_KEYS = r"^(credential\.(.*\.)?helper|core\.askpass|filter\..*\.(clean|smudge|process|required))$"
_OPERATOR_SCOPES = ("system", "global")
_READS_PROGRAMS = frozenset({"push", "fetch", "status", "worktree"})
_HELPER = re.compile(r"credential\.(.*\.)?helper")


def git_env() -> dict[str, str]:
    """The environment every git call runs with: the allow-list above, made non-interactive.

    Never holds a name outside ``_KEPT``, ``LC_*`` and ``GIT_*`` (minus ``_GIT_DROPPED``).
    """
    env = {name: value for name, value in os.environ.items()
           if name in _KEPT or name.startswith("LC_")
           or (name.startswith("GIT_") and name not in _GIT_DROPPED and not name.startswith(_GIT_DROPPED_PREFIXES))}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    env.setdefault("GIT_PROXY_COMMAND", "")  # set (even empty), it makes git skip core.gitProxy
    env["LC_ALL"] = "C"
    return env


def argv(*args: str, cwd: str | Path | None = None, git_dir: str | Path | None = None,
         config: tuple[str, ...] = ()) -> list[str]:
    """The command line ``run`` runs for ``git *args``: the safe options and config in front.

    ``git_dir``: the git folder to use instead of finding one from ``cwd`` (whose ``.git`` may
    lie); ``cwd`` is then its work tree. Reads the repository's config for the program keys
    (one more quick git call) when ``args[0]`` is in ``_READS_PROGRAMS``. ``config``: the bot's own
    ``key=value`` settings for this call, last (a push's credential helper).
    """
    where = ["--no-pager", *_config(SAFE_CONFIG)]
    if cwd is not None:
        where += ["-C", str(cwd)]
    if git_dir is not None:
        where += [f"--git-dir={git_dir}"] + ([f"--work-tree={Path(cwd).resolve()}"] if cwd is not None else [])
    if not args:
        return ["git", *where]
    extra = program_overrides(where) if args[0] in _READS_PROGRAMS else []
    return ["git", *where, *_config([*extra, *config]), args[0], *_OPTIONS.get(args[0], ()), *args[1:]]


def program_overrides(where: list[str]) -> list[str]:
    """``key=value`` settings that undo the program keys a repository's own config sets.

    ``where``: git's options naming the repository. A credential helper list that the repository
    adds to is reset and refilled with the operator's helpers in their order; any other key gets
    the operator's last value, else a blank one (``false`` for ``filter.<driver>.required``).
    Empty when the repository sets none of them (or git cannot read its config).
    """
    done = subprocess.run(["git", *where, "config", "--show-scope", "-z", "--get-regexp", _PROGRAM_KEYS],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, env=git_env(),
                          timeout=GIT_TIMEOUT_S)
    entries = []
    fields = done.stdout.split("\0") if done.returncode == 0 else []
    for scope, item in zip(fields[0::2], fields[1::2]):
        key, has_value, value = item.partition("\n")
        entries.append((scope, key, value if has_value else None))
    ours = [(key, value) for scope, key, value in entries if scope in _OPERATOR_SCOPES]
    theirs = [key for scope, key, _ in entries if scope not in _OPERATOR_SCOPES]
    out: list[str] = []
    if any(_HELPER.fullmatch(key) for key in theirs):  # an empty helper empties the list so far
        out += ["credential.helper="] + [_setting(k, v) for k, v in ours if _HELPER.fullmatch(k)]
    for key in dict.fromkeys(k for k in theirs if not _HELPER.fullmatch(k)):
        values = [v for k, v in ours if k == key]
        out.append(_setting(key, values[-1]) if values else
                   f"{key}=false" if key.endswith(".required") else f"{key}=")
    return out


def _config(settings: tuple[str, ...] | list[str]) -> list[str]:
    return [part for setting in settings for part in ("-c", setting)]


def _setting(key: str, value: str | None) -> str:
    return key if value is None else f"{key}={value}"  # a bare key is a boolean true, as in the file


def run(*args: str, cwd: str | Path | None = None, git_dir: str | Path | None = None,
        timeout: float = GIT_TIMEOUT_S, config: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """``git [-C cwd] *args`` (see ``argv``); returns the finished process whatever its exit code.

    Raises ``RepoError`` only when git is missing or the call outlives ``timeout`` seconds.
    """
    try:  # a run's commits hold any bytes (a diff's lines): what is no UTF-8 is replaced, never raised
        return subprocess.run(argv(*args, cwd=cwd, git_dir=git_dir, config=config), capture_output=True,
                              encoding="utf-8", errors="replace", stdin=subprocess.DEVNULL, env=git_env(),
                              timeout=timeout)
    except FileNotFoundError as e:
        raise RepoError("the `git` command was not found on PATH. Install git on the machine "
                        "that runs the bot.") from e
    except subprocess.TimeoutExpired as e:
        raise RepoError(f"`git {' '.join(args)}` took longer than {timeout:.0f}s in {cwd}. "
                        "Check the network and the URL, then try again.") from e


def head(*args: str, cwd: str | Path, limit: int, config: tuple[str, ...] = (),
         timeout: float = GIT_TIMEOUT_S) -> tuple[str, bool]:
    """The first ``limit`` bytes of ``git *args``'s output (see ``argv``; bad UTF-8 replaced), and
    whether there was more: git is stopped there. For output whose size a run's commits decide (a
    diff: a few hundred KB of objects are gigabytes of lines), which ``run`` would hold whole.
    Raises ``RepoError`` as ``git`` does when git fails or outlives ``timeout`` seconds."""
    expired: list[bool] = []
    with tempfile.TemporaryFile() as err:  # a file, not a pipe: git never waits on an unread stderr
        try:
            proc = subprocess.Popen(argv(*args, cwd=cwd, config=config), stdout=subprocess.PIPE, stderr=err,
                                    stdin=subprocess.DEVNULL, env=git_env())
        except FileNotFoundError as e:
            raise RepoError("the `git` command was not found on PATH. Install git on the machine "
                            "that runs the bot.") from e
        timer = threading.Timer(timeout, lambda: (expired.append(True), proc.kill()))
        timer.start()
        try:
            assert proc.stdout is not None
            with proc.stdout:
                out = proc.stdout.read(limit + 1)
                if len(out) > limit:
                    proc.kill()  # the rest is never read: git stops here
            code = proc.wait()
        finally:
            timer.cancel()
        if expired:
            raise RepoError(f"`git {' '.join(args)}` took longer than {timeout:.0f}s in {cwd}.")
        if len(out) <= limit and code != 0:
            err.seek(0)
            done = subprocess.CompletedProcess(args, code, "", err.read(64 * 1024).decode("utf-8", "replace"))
            raise RepoError(f"`git {' '.join(args)}` failed in {cwd}: {said(done)}.")
    return out[:limit].decode("utf-8", "replace"), len(out) > limit


def git(*args: str, cwd: str | Path | None = None, git_dir: str | Path | None = None, fix: str = "",
        timeout: float = GIT_TIMEOUT_S, config: tuple[str, ...] = ()) -> str:
    """``run`` that must succeed: returns stdout stripped of trailing newlines.

    Raises ``RepoError`` naming the command, the folder, git's own message and ``fix``.
    """
    done = run(*args, cwd=cwd, git_dir=git_dir, timeout=timeout, config=config)
    if done.returncode != 0:
        where = f" in {cwd}" if cwd is not None else ""
        raise RepoError(f"`git {' '.join(args)}` failed{where}: {said(done)}." + (f" {fix}" if fix else ""))
    return done.stdout.rstrip("\n")
def said(done: subprocess.CompletedProcess[str]) -> str:
    """git's complaint in one line: its ``fatal:``/``error:`` lines (else all output), joined."""
    lines = [line.strip() for line in (done.stderr or done.stdout or "").splitlines() if line.strip()]
    errors = [line.split(":", 1)[1].strip() for line in lines if line.startswith(("fatal:", "error:"))]
    return "; ".join(errors or lines).rstrip(".") or f"exit code {done.returncode}"


def ok(*args: str, cwd: str | Path | None = None) -> bool:
    """True when ``git *args`` exits 0 (for questions such as "does this ref exist?")."""
    return run(*args, cwd=cwd).returncode == 0


def is_work_tree(path: Path) -> bool:
    """True when ``path`` is inside a git working tree (a checkout or a linked worktree)."""
    done = run("rev-parse", "--is-inside-work-tree", cwd=path)
    return done.returncode == 0 and done.stdout.strip() == "true"


def is_bare(path: Path) -> bool:
    """True when ``path`` is a bare repository (no working tree)."""
    done = run("rev-parse", "--is-bare-repository", cwd=path)
    return done.returncode == 0 and done.stdout.strip() == "true"


def has_ref(repo: Path, ref: str) -> bool:
    """True when ``ref`` (a full ref such as ``refs/heads/main``) names a commit in ``repo``."""
    return ok("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=repo)


def valid_branch_name(name: str) -> bool:
    """True when git accepts ``name`` as a branch name (``git check-ref-format --branch``)."""
    return bool(name) and not name.startswith("-") and ok("check-ref-format", "--branch", name)


def status_lines(path: Path, *, git_dir: Path | None = None) -> list[str]:
    """``git status --porcelain`` of ``path``, one changed or untracked file per line.

    ``git_dir``: the worktree's checked git folder, so git never reads ``path/.git``.
    """
    out = git("status", "--porcelain", cwd=path, git_dir=git_dir)
    return [line for line in out.splitlines() if line.strip()]


def remotes(repo: Path) -> list[str]:
    """The names of ``repo``'s remotes, in git's order."""
    return git("remote", cwd=repo).split()

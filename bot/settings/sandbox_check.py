"""The fence around every run the bot starts: its thread's workspace, and nothing of the bot's.

A run's commands and file tools may read and write its own workspace (and, in a bound channel,
the git data its worktree needs); they may not read ``FLOWER_HOME`` otherwise (``bot.db``, other
threads' workspaces, the clones, ``repos.json``), the bot's settings file nor the usual credential
stores of the bot user's home (``~/.ssh``, ``~/.aws``...); they reach only
``FLOWER_SANDBOX_DOMAINS`` over the network. The engine applies it (``engine.Sandbox``) with Claude
Code's own sandbox, which on Linux needs bubblewrap and socat: ``require_sandbox`` checks them at
start, so a missing package stops the bot with the fix instead of failing every run.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

from bot.errors import SandboxUnavailable
from engine import Sandbox

# The model's endpoint is added to these; pip, npm/yarn, cargo, go, gems, maven, and GitHub for
# dependencies fetched from git or release downloads.
REGISTRIES = (
    "pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "registry.yarnpkg.com", "crates.io",
    "index.crates.io", "static.crates.io", "proxy.golang.org", "sum.golang.org", "rubygems.org",
    "repo.maven.apache.org", "repo1.maven.org", "github.com", "codeload.github.com",
    "objects.githubusercontent.com", "raw.githubusercontent.com",
)
DEFAULT_MODEL_HOST = "api.anthropic.com"
# The usual credential stores in the bot user's home: hidden too, though outside FLOWER_HOME.
CREDENTIALS = (".ssh", ".aws", ".azure", ".config/gcloud", ".config/gh", ".netrc", ".git-credentials",
               ".docker", ".kube", ".pypirc", ".gnupg", ".npmrc")
NEEDED = {"bwrap": "bubblewrap", "socat": "socat"}
INSTALL = "apt-get install bubblewrap socat"


def default_domains(model_url: str | None) -> tuple[str, ...]:
    """The hosts a run's commands may reach when ``FLOWER_SANDBOX_DOMAINS`` is unset."""
    host = urlsplit(model_url).hostname if model_url else None
    return (host or DEFAULT_MODEL_HOST, *REGISTRIES)


def require_sandbox() -> None:
    """Raise ``SandboxUnavailable`` unless bubblewrap and socat are installed and bubblewrap can
    make a sandbox here (it cannot in a container without user namespaces, for instance)."""
    missing = [package for command, package in NEEDED.items() if shutil.which(command) is None]
    if missing:
        raise SandboxUnavailable(
            f"the sandbox that fences every run in needs {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed. Install {'it' if len(missing) == 1 else 'them'} "
            f"({INSTALL}), or set FLOWER_SANDBOX=off to run agents unfenced (not for a shared machine).")
    # the namespaces the CLI's own view takes (engine.cli_view), with one for the network as its commands'
    done = subprocess.run(["bwrap", "--unshare-user", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev",
                           "--unshare-net", "true"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        raise SandboxUnavailable(
            f"bubblewrap is installed but cannot make a sandbox here ({said[0]}). Allow unprivileged "
            "user namespaces (sysctl kernel.unprivileged_userns_clone=1; in a container, run it with "
            "--privileged or a seccomp profile that allows them), or set FLOWER_SANDBOX=off.")


def thread_sandbox(home: Path, *, secret_files: tuple[Path, ...], domains: tuple[str, ...],
                   git: tuple[Path, Path, tuple[Path, ...]] | None = None) -> Sandbox:
    """The fence for one thread's run (the engine adds its workspace and its private folders).

    ``git`` is a bound thread's (common git folder, worktree git folder, borrowed object folders),
    taken from the bot's own records, never from the worktree the agent can rewrite: the thread
    repository's objects, refs and reflogs and the worktree's own folder are writable (what
    ``git commit`` needs); its hooks, config and list of borrowed objects are not, so nothing the
    agent writes there runs when the bot uses git; the bound repository's objects it borrows are
    readable only.
    """
    allow_read: tuple[Path, ...] = ()
    allow_write: tuple[Path, ...] = ()
    deny_write: tuple[Path, ...] = ()
    if git is not None:
        common, own, borrowed = git
        allow_read = (common, *borrowed)
        allow_write = tuple(p for p in (own, common / "objects", common / "refs", common / "logs") if p.exists())
        deny_write = tuple(p for p in (common / "objects" / "info",) if p.exists())
    stores = [p for p in (Path.home() / name for name in CREDENTIALS) if p.exists()]
    return Sandbox(deny_read=(home, *secret_files, *stores), allow_read=allow_read, allow_write=allow_write,
                   deny_write=deny_write, domains=domains)

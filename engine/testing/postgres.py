"""A throwaway PostgreSQL cluster for tests: ``initdb`` into a temp folder, a unix socket only.

Shipped with the test kit like the offline model, so a host's own tests get a real server too::

    with PostgresServer() as pg:
        url = pg.create_database()  # postgresql://postgres@/t_1?host=<socket folder, %-encoded>&port=5432
        ...

The binaries come from ``PATH`` or from Debian's ``/usr/lib/postgresql/<version>/bin`` (the
newest version); missing ones raise ``PostgresServerError`` naming the package, because a test
that needs the server must fail loudly, never skip. PostgreSQL refuses to run as root, so as root
the cluster belongs to an unprivileged user (``postgres``, which the package creates) and
``initdb``/``pg_ctl`` run as that user. Durability is off (``fsync``, ``synchronous_commit``,
``full_page_writes``): the cluster is deleted at the end anyway.
"""

from __future__ import annotations

import itertools
import os
import pwd
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

from engine.testing.errors import PostgresServerError

__all__ = ["PostgresServer", "find_binaries"]

START_TIMEOUT = 120  # seconds pg_ctl waits for "accepting connections"; usually well under one
COMMAND_TIMEOUT = 120  # seconds for initdb, one psql statement, or a stop
SUPERUSER = "postgres"  # the cluster's superuser role, whoever owns the files
PORT = 5432  # only names the socket file (.s.PGSQL.5432): nothing listens on TCP
INSTALL = "apt-get install postgresql"
DEBIAN_ROOT = Path("/usr/lib/postgresql")  # Debian keeps each major version's programs in <version>/bin
_NEEDED = ("initdb", "pg_ctl", "psql")


def find_binaries() -> Path:
    """The folder holding ``initdb``, ``pg_ctl`` and ``psql``: from ``PATH``, else Debian's newest.

    Raises ``PostgresServerError`` naming the package to install when there is none.
    """
    on_path = shutil.which("initdb")
    candidates = [Path(on_path).resolve().parent] if on_path else []

    def version(folder: Path) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", folder.parent.name)) or (0,)

    candidates += sorted(DEBIAN_ROOT.glob("*/bin"), key=version, reverse=True)
    for folder in candidates:
        if all(os.access(folder / name, os.X_OK) for name in _NEEDED):
            return folder
    raise PostgresServerError(
        f"PostgreSQL's server programs ({', '.join(_NEEDED)}) are not installed: none on PATH nor "
        f"under /usr/lib/postgresql/<version>/bin. Run: {INSTALL} (or `make test`, which installs it)."
    )


class PostgresServer:
    """One PostgreSQL cluster in a fresh temp folder, listening only on a unix socket in it.

    ``start()`` runs ``initdb`` (trust auth, UTF8, no sync) and ``pg_ctl start``, returning once
    the server accepts connections; ``create_database()`` makes an empty database and returns
    its ``postgresql://`` URL (the socket folder as the ``host`` query parameter); ``restart()``
    cuts every connection and starts it again; ``stop()`` stops it at once (``-m immediate``)
    and deletes the folder. Use it as a context manager. ``start`` and ``stop`` are idempotent.
    Any failure raises ``PostgresServerError`` with the program's own output and, for a failed
    start, the server log. A test process killed with SIGKILL leaves its cluster running.
    """

    def __init__(self, *, user: str | None = None, durable: bool = False) -> None:
        self.bin = find_binaries()
        self.durable = durable  # fsync and synchronous commits on, as a production server (benchmarks)
        self.root: Path | None = None
        self._numbers = itertools.count(1)
        # As root, run as an unprivileged user: PostgreSQL refuses to start as root.
        self.user = user if user is not None else (SUPERUSER if os.geteuid() == 0 else None)

    # -- life cycle ------------------------------------------------------------------------------

    def start(self) -> PostgresServer:
        """initdb and start the cluster; returns self. Calling it again does nothing."""
        if self.root is not None:
            return self
        # Short on purpose: a unix socket path is limited to about 107 bytes.
        root = Path(tempfile.mkdtemp(prefix="flower-pg-"))
        try:
            self._own(root)
            self._as_owner([self.bin / "initdb", "-D", str(root / "data"), "-A", "trust", "-E", "UTF8",
                            "--locale=C", "--no-sync", "-U", SUPERUSER], cwd=root)
            self._pg_ctl(root, "start")
        except BaseException:
            self._stop_and_delete(root)
            raise
        self.root = root
        return self

    def restart(self) -> None:
        """Stop the server (open connections are cut, as when a database server restarts) and start
        it again on the same socket, with every database kept; returns once it accepts connections."""
        root = self.socket_dir
        self._pg_ctl(root, "restart", "-m", "fast")

    def stop(self) -> None:
        """Stop the server at once and delete its folder. Idempotent."""
        root, self.root = self.root, None
        if root is not None:
            self._stop_and_delete(root)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- databases --------------------------------------------------------------------------------

    @property
    def socket_dir(self) -> Path:
        """The folder holding the server's unix socket."""
        if self.root is None:
            raise PostgresServerError("the PostgresServer is not started; call start() or use it in a with block")
        return self.root

    def url(self, database: str = "postgres") -> str:
        """The ``postgresql://`` URL of ``database`` on this server (over its unix socket)."""
        host = quote(str(self.socket_dir), safe="")
        return f"postgresql://{SUPERUSER}@/{database}?host={host}&port={PORT}"

    def create_database(self, name: str | None = None) -> str:
        """Create an empty database (``t_<n>`` unless named) and return its URL."""
        name = name or f"t_{next(self._numbers)}"
        self.sql(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, name_or_url: str) -> None:
        """Drop a database by name or URL, closing any connection still open to it."""
        name = name_or_url.split("?")[0].rsplit("/", 1)[-1]
        self.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def sql(self, statement: str, database: str = "postgres") -> str:
        """Run one SQL statement with ``psql`` as the superuser; returns its unaligned output."""
        return _run([self.bin / "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                     "-h", str(self.socket_dir), "-p", str(PORT), "-U", SUPERUSER, "-d", database,
                     "-c", statement], cwd=self.socket_dir)

    # -- helpers ---------------------------------------------------------------------------------

    def _own(self, root: Path) -> None:
        if self.user is None:
            return
        try:
            owner = pwd.getpwnam(self.user)
        except KeyError:
            raise PostgresServerError(
                f"running as root, the test cluster must belong to an unprivileged user, and there is "
                f"no user {self.user!r}. Run: {INSTALL} (it creates the postgres user), or pass "
                "PostgresServer(user=...) an existing one."
            ) from None
        os.chown(root, owner.pw_uid, owner.pw_gid)

    def _as_owner(self, argv: list[str | Path], *, cwd: Path) -> str:
        if self.user is None:
            return _run(argv, cwd=cwd)
        runuser = shutil.which("runuser")
        prefix = [runuser, "-u", self.user, "--"] if runuser else [
            shutil.which("setpriv") or "setpriv", f"--reuid={self.user}", f"--regid={self.user}", "--init-groups"]
        return _run([*prefix, *argv], cwd=cwd)

    def _pg_ctl(self, root: Path, *action: str) -> None:
        settings = {"listen_addresses": "", "unix_socket_directories": str(root), "port": str(PORT)}
        if not self.durable:  # tests: a crash loses the cluster anyway, so skip every sync
            settings |= {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
        options = " ".join(f"-c {shlex.quote(f'{k}={v}')}" for k, v in settings.items())
        try:
            self._as_owner([self.bin / "pg_ctl", "-D", str(root / "data"), "-l", str(root / "log"),
                            "-w", "-t", str(START_TIMEOUT), "-o", options, *action], cwd=root)
        except PostgresServerError as exc:
            raise PostgresServerError(f"{exc}\nThe server log says:\n{_tail(root / 'log')}") from None

    def _stop_and_delete(self, root: Path) -> None:
        if (root / "data" / "postmaster.pid").exists():
            try:
                self._as_owner([self.bin / "pg_ctl", "-D", str(root / "data"), "-m", "immediate", "-w", "stop"],
                               cwd=root)
            except PostgresServerError:
                pass  # already gone (killed, or never started): deleting the folder is what is left
        shutil.rmtree(root, ignore_errors=True)


def _run(argv: list[str | Path], *, cwd: Path) -> str:
    # The caller's PG* settings (PGHOST, PGDATABASE...) must not redirect a test's server.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    try:
        done = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PostgresServerError(f"{Path(str(argv[0])).name} could not run ({exc}). Run: {INSTALL}") from exc
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip()
        raise PostgresServerError(f"`{shlex.join(str(a) for a in argv)}` exited {done.returncode}:\n{said}")
    return done.stdout


def _tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(no log: {exc})"

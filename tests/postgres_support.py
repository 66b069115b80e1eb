"""A real PostgreSQL server for the tests: Debian's `postgresql` (initdb, pg_ctl), a temporary cluster
on a free port of 127.0.0.1, and MLflow databases in it.

The cluster is made with `initdb` in a temporary folder and started with `pg_ctl`; PostgreSQL refuses
to run as root, so under root (the CI) both run as the `postgres` user Debian's package creates (or
`nobody`), through `runuser`. Each test gets a database of its own, copied from a template database
that MLflow's migrations have already been run in (they take seconds; a copy takes none).

Where PostgreSQL is not installed the tests that need it are skipped with a reason; under CI its
absence fails them (`.ci/run` installs it), as the browser tests do with Chromium.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pathlib
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

from harness.processes import free_port, run_python

# Debian installs each major version's programs in /usr/lib/postgresql/<version>/bin, outside PATH.
PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"
PG_PROGRAMS = ("initdb", "pg_ctl", "postgres")
USER = "pmaplab"
TEMPLATE_DB = "mlflow_template"


def pg_bin() -> pathlib.Path | None:
    """The folder of the newest installed PostgreSQL's initdb, pg_ctl and postgres (PMAP_LAB_PG_BIN when
    set, else Debian's folders, else PATH), or None."""
    override = os.environ.get("PMAP_LAB_PG_BIN")
    candidates = [override] if override else sorted(glob.glob(PG_BIN_GLOB), key=_version_key, reverse=True)
    for folder in candidates:
        if all(os.access(os.path.join(folder, name), os.X_OK) for name in PG_PROGRAMS):
            return pathlib.Path(folder)
    if override:
        return None
    found = shutil.which("pg_ctl")
    if found and all(shutil.which(name) for name in PG_PROGRAMS):
        return pathlib.Path(found).parent
    return None


def _version_key(folder: str) -> tuple[int, ...]:
    version = pathlib.Path(folder).parent.name
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def _run_as() -> str | None:
    """The user the server runs as: None (this one) unless this is root, which PostgreSQL refuses."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    return None


def postgres_missing_reason() -> str | None:
    """Why a PostgreSQL server cannot be started here, or None when it can."""
    if pg_bin() is None:
        return "PostgreSQL is not installed (apt-get install postgresql)"
    try:
        import psycopg2  # noqa: F401
    except ImportError:
        return "psycopg2 is not installed (pip install -r requirements.txt)"
    if os.geteuid() == 0 and (_run_as() is None or shutil.which("runuser") is None):
        return "running as root with neither a postgres nor a nobody user (and runuser) to run PostgreSQL as"
    return None


class PostgresCluster:
    """A PostgreSQL server of its own on 127.0.0.1, in a temporary folder; `stop()` removes both.

    Tuned for tests, not for keeping data: no fsync, no synchronous commit (a crash of the host may
    lose the last writes; a test cluster is thrown away anyway)."""

    def __init__(self) -> None:
        bin_dir = pg_bin()
        assert bin_dir is not None, postgres_missing_reason()
        self.bin = bin_dir
        self.user = _run_as()
        self.port = free_port()
        self.password = secrets.token_hex(16)
        # Under root, in /tmp: the server's user must reach its folder (TMPDIR may be root's own).
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix="pmap-lab-pg-", dir="/tmp" if self.user else None))
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self.started = False
        password_file = self.folder / "password"
        password_file.write_text(self.password + "\n")
        if self.user:
            account = pwd.getpwnam(self.user)
            os.chown(self.folder, account.pw_uid, account.pw_gid)
            os.chown(password_file, account.pw_uid, account.pw_gid)
        try:
            self._run("initdb", "-D", str(self.data), "-U", USER, f"--pwfile={password_file}",
                      "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync")
            password_file.unlink()
            with (self.data / "postgresql.conf").open("a") as conf:
                conf.write(f"listen_addresses = '127.0.0.1'\nport = {self.port}\nunix_socket_directories = ''\n"
                           "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                           "max_connections = 200\nshared_buffers = 32MB\n")
            self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "120", "start")
            self.started = True
            self._create_database(TEMPLATE_DB)
            # MLflow's migrations, in a process of its own: no connection to the template may stay open,
            # or PostgreSQL refuses to copy it.
            migrated = run_python(["-m", "tests.children.migrate_store", self.uri(TEMPLATE_DB, driver="psycopg2")],
                                  timeout=300)
            assert migrated.returncode == 0, f"MLflow's migrations failed:\n{migrated.stderr[-3000:]}"
        except BaseException:
            self.stop()
            raise

    def _run(self, program: str, *args: str) -> subprocess.CompletedProcess:
        command = [str(self.bin / program), *args]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        done = subprocess.run(command, cwd=self.folder, capture_output=True, text=True, timeout=180)
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr[-2000:]}{self.log_tail()}")
        return done

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def uri(self, database: str, driver: str = "") -> str:
        """The MLflow tracking URI of `database` (with the password: show it only through redact_uri)."""
        scheme = f"postgresql+{driver}" if driver else "postgresql"
        return f"{scheme}://{USER}:{self.password}@127.0.0.1:{self.port}/{database}"

    def _connect(self, database: str = "postgres"):
        import psycopg2

        connection = psycopg2.connect(host="127.0.0.1", port=self.port, user=USER, password=self.password,
                                      dbname=database, connect_timeout=10)
        connection.autocommit = True
        return connection

    def _create_database(self, name: str, template: str | None = None) -> None:
        connection = self._connect()
        try:
            with connection.cursor() as cursor:
                cursor.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        finally:
            connection.close()

    def new_store(self) -> str:
        """A new, empty MLflow store (a database of its own, with MLflow's tables); its tracking URI."""
        name = f"mlflow_{secrets.token_hex(6)}"
        self._create_database(name, template=TEMPLATE_DB)
        return self.uri(name)

    def query(self, database: str, sql: str, *args: object) -> list[tuple]:
        """Rows of `sql` in `database`, read straight from the server (not through MLflow)."""
        connection = self._connect(database)
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql, args)
                return cursor.fetchall()
        finally:
            connection.close()

    def pause(self) -> None:
        """Stop the server as a restart does (`-m fast`: clients are disconnected); `resume` starts it again."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "120", "stop")

    def resume(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "120", "start")

    def running(self) -> bool:
        command = [str(self.bin / "pg_ctl"), "-D", str(self.data), "status"]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(command, capture_output=True, timeout=60).returncode == 0

    def stop(self) -> None:
        """Stop the server (at once: nothing in it is kept) and remove its folder."""
        if self.started:
            with contextlib.suppress(Exception):
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "60", "stop")
            self.started = False
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def postgres_cluster() -> Iterator[PostgresCluster]:
    cluster = PostgresCluster()
    try:
        yield cluster
    finally:
        cluster.stop()

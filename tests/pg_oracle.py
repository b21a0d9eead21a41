"""A private PostgreSQL 15 server, the oracle of every test that compares raympp with PostgreSQL.

`PostgresOracle().start()` runs initdb into a fresh directory under /tmp and starts the
server with pg_ctl on a free 127.0.0.1 port (unix socket in the same directory, fsync off,
UTF-8 encoding, C.UTF-8 character classes with byte-order collation, superuser `postgres`,
trust authentication). `connect(dbname)` gives an autocommit psycopg connection set to
TimeZone UTC, IntervalStyle postgres and DateStyle 'ISO, MDY' (raympp's session defaults).
`stop()` runs `pg_ctl stop -m fast` and removes the directory; it is idempotent.

PostgreSQL refuses to run as root. As root the server runs as an unprivileged account:
$RAYMPP_PG_ACCOUNT if set, else the `postgres` account if there is one, else the system
account `raympp-pg`, created on first use (`useradd --system --no-create-home --shell
/usr/sbin/nologin raympp-pg`; a concurrent creation by another process is fine). Not as
root, it runs as the current user.

`Unavailable` (initdb or pg_ctl not on PATH) is the only reason to skip a test;
`StartError` (the binaries are there but the server did not come up) carries the command's
output and the tail of the server log, and is a test failure. The session fixture
`pg_oracle` in tests/conftest.py makes that distinction; tests ask for that fixture.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time

HOST = "127.0.0.1"
SUPERUSER = "postgres"              # the database superuser initdb creates (not the OS account)
ACCOUNT = "raympp-pg"               # the OS account created when running as root without one
ACCOUNT_ENV = "RAYMPP_PG_ACCOUNT"   # forces the OS account to run the server as (as root)
SESSION_SETTINGS = (("TimeZone", "UTC"), ("IntervalStyle", "postgres"),
                    ("DateStyle", "ISO, MDY"))
START_TIMEOUT_S = 60
_ACCOUNT_LOCK = "/tmp/raympp-pg-account.lock"
_USERADD = ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin"]


class Unavailable(Exception):
    """The PostgreSQL binaries are not installed (tests skip)."""


class StartError(Exception):
    """The binaries are installed but the server could not be set up (tests fail)."""


def binaries() -> tuple[str, str] | None:
    """(initdb, pg_ctl) from PATH, or None when either is missing."""
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    return (initdb, pg_ctl) if initdb and pg_ctl else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def server_account() -> pwd.struct_passwd | None:
    """The OS account to run the server as; None when not root (run as ourselves)."""
    if os.geteuid() != 0:
        return None
    wanted = os.environ.get(ACCOUNT_ENV, "").strip()
    if wanted:
        return ensure_account(wanted)
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        return ensure_account(ACCOUNT)


def ensure_account(name: str) -> pwd.struct_passwd:
    """The account `name`, created as a system account without a home if it is missing.

    Idempotent and safe against concurrent test processes: creation is serialized by an
    exclusive lock on a file in /tmp (useradd's own locking is not enough everywhere: in
    containers concurrent useradds were seen to lose each other's updates), and useradd
    failing because the name is taken or /etc/passwd is locked by someone else just means
    looking the account up again.
    """
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    with open(_ACCOUNT_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            last = ""
            for attempt in range(20):
                try:
                    return pwd.getpwnam(name)
                except KeyError:
                    pass
                try:
                    proc = subprocess.run(_USERADD + [name], capture_output=True, text=True,
                                  check=False)
                except OSError as e:
                    raise StartError(f"cannot create the account {name!r} to run PostgreSQL "
                                     f"as: {e}") from None
                if proc.returncode != 0:
                    # 9: the name is taken (created meanwhile), 10: /etc/passwd is locked.
                    last = f"exit {proc.returncode}: {proc.stderr.strip()}"
                    time.sleep(min(0.1 * (attempt + 1), 1.0))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    raise StartError(f"cannot create the account {name!r} to run PostgreSQL as "
                     f"({' '.join(_USERADD + [name])}: {last})")


def _tail(path: str, limit: int = 4000) -> str:
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return "(no server log)"
    return text[-limit:] if text.strip() else "(the server log is empty)"


class PostgresOracle:
    """One private PostgreSQL server (see the module docstring)."""

    def __init__(self, host: str = HOST):
        self.host = host
        self.user = SUPERUSER
        self.port: int | None = None
        self.tmp: str | None = None
        self.account: pwd.struct_passwd | None = None
        self._pg_ctl: str | None = None
        self._running = False

    # --- paths and commands -------------------------------------------------------------

    @property
    def data_dir(self) -> str:
        return os.path.join(self.tmp, "data")

    @property
    def log_path(self) -> str:
        return os.path.join(self.tmp, "server.log")

    def _run(self, args: list[str], check: bool = True) -> subprocess.CompletedProcess:
        """Run a PostgreSQL binary as the server's account, in the server's directory."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["HOME"] = self.tmp
        kw = {}
        if self.account is not None:
            env["USER"] = env["LOGNAME"] = self.account.pw_name
            kw = {"user": self.account.pw_uid, "group": self.account.pw_gid,
                  "extra_groups": []}
        proc = subprocess.run(args, capture_output=True, text=True, cwd=self.tmp, env=env,
                              timeout=START_TIMEOUT_S + 30, check=False, **kw)
        if check and proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, args, proc.stdout,
                                                proc.stderr)
        return proc

    def _failure(self, what: str, exc: BaseException) -> StartError:
        detail = str(exc)
        if isinstance(exc, subprocess.CalledProcessError):
            detail = (f"{' '.join(exc.cmd)} exited with {exc.returncode}\n"
                      f"{(exc.stdout or '').strip()}\n{(exc.stderr or '').strip()}").strip()
        who = self.account.pw_name if self.account else pwd.getpwuid(os.geteuid()).pw_name
        return StartError(f"PostgreSQL {what} failed (as OS user {who!r}, in {self.tmp}):\n"
                          f"{detail}\n--- server log (tail) ---\n{_tail(self.log_path)}")

    # --- life cycle ---------------------------------------------------------------------

    def start(self) -> PostgresOracle:
        """initdb and start; raises Unavailable or StartError (after cleaning up)."""
        found = binaries()
        if found is None:
            raise Unavailable("PostgreSQL binaries (initdb, pg_ctl) are not on PATH")
        initdb, self._pg_ctl = found
        self.account = server_account()
        # Under /tmp, not $TMPDIR: the account must be able to reach the directory.
        root = "/tmp" if os.path.isdir("/tmp") else None
        self.tmp = tempfile.mkdtemp(prefix="raympp-pg-", dir=root)
        try:
            os.chmod(self.tmp, 0o755)
            if self.account is not None:
                os.chown(self.tmp, self.account.pw_uid, self.account.pw_gid)
            self._check_reachable()
            try:
                self._run([initdb, "-D", self.data_dir, "-A", "trust", "-U", SUPERUSER,
                           "-E", "UTF8", "--locale=C.UTF-8", "--lc-collate=C", "--no-sync"])
            except (subprocess.SubprocessError, OSError) as e:
                raise self._failure("initdb", e) from None
            self._start_server()
            atexit.register(self.stop)
            self._check_connect()
        except BaseException:
            self.stop()
            raise
        return self

    def _check_reachable(self) -> None:
        """Every parent of the directory must be searchable by others (the account)."""
        if self.account is None:
            return
        path = os.path.dirname(self.tmp)
        while True:
            if not os.stat(path).st_mode & 0o001:
                raise StartError(f"{path} is not searchable by other users, so the "
                                 f"account {self.account.pw_name!r} cannot reach {self.tmp}")
            parent = os.path.dirname(path)
            if parent == path:
                return
            path = parent

    def _start_server(self) -> None:
        for attempt in range(3):
            port = free_port()
            options = (f"-p {port} -k {self.tmp} -c listen_addresses={self.host} "
                       f"-c fsync=off")
            try:
                self._run([self._pg_ctl, "-D", self.data_dir, "-w", "-t",
                           str(START_TIMEOUT_S), "-l", self.log_path, "-o", options, "start"])
            except (subprocess.SubprocessError, OSError) as e:
                # pg_ctl may leave a half-started server behind: stop it before retrying.
                self._running = True
                self._stop_server()
                if attempt < 2 and "already in use" in _tail(self.log_path):
                    continue   # lost the race for the port: try another
                raise self._failure("start", e) from None
            self.port = port
            self._running = True
            return

    def _check_connect(self) -> None:
        try:
            self.connect().close()
        except Exception as e:  # noqa: BLE001 - psycopg.Error, or psycopg is missing
            raise self._failure("first connection", e) from None

    def connect(self, dbname: str = "postgres", **kwargs):
        """An autocommit psycopg connection with raympp's session defaults."""
        import psycopg

        if not self._running:
            raise RuntimeError("the PostgreSQL oracle is not running")
        conn = psycopg.connect(host=self.host, port=self.port, user=self.user,
                               dbname=dbname, autocommit=True, connect_timeout=30, **kwargs)
        try:
            for name, value in SESSION_SETTINGS:
                conn.execute(f"SET {name} = '{value}'")
        except BaseException:
            conn.close()
            raise
        return conn

    def _stop_server(self) -> None:
        if not self._running:
            return
        self._running = False
        if not os.path.exists(os.path.join(self.data_dir, "postmaster.pid")):
            return
        for mode in ("fast", "immediate"):
            try:
                if self._run([self._pg_ctl, "-D", self.data_dir, "-m", mode, "-w", "stop"],
                             check=False).returncode == 0:
                    return
            except (subprocess.SubprocessError, OSError):
                pass

    def stop(self) -> None:
        """Stop the server (pg_ctl stop -m fast) and remove its directory."""
        try:
            self._stop_server()
        finally:
            if self.tmp is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)
                self.tmp = None
            self.port = None

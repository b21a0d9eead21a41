"""Shared helpers for the raympp benchmarks: servers to compare against, and timing.

- `RaymppServer`: runs `raympp serve` as a subprocess on a free loopback port over a
  temporary data directory; stops it with SIGTERM to the PID it started.
- `PostgresServer`: a throw-away PostgreSQL (initdb into a temporary directory owned by the
  `postgres` user, `pg_ctl start` on a free loopback port, `pg_ctl stop -m fast`, directory
  removed).
- `timed`: warm-up runs, then repeats; reports best and median wall time.

Both servers are context managers and clean up after themselves in `__exit__`, also when
the benchmark fails half way. Nothing here stops a process it did not start.
"""

from __future__ import annotations

import dataclasses
import os
import pwd
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = REPO / ".venv" / "bin"
PG_BIN = Path(os.environ.get("RAYMPP_BENCH_PG_BIN", "/usr/local/bin"))
HOST = "127.0.0.1"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def human_rows(n: int) -> str:
    """10_000_000 -> '10M', 1_500 -> '1500'."""
    for div, suffix in ((1_000_000_000, "B"), (1_000_000, "M"), (1_000, "K")):
        if n >= div and n % div == 0:
            return f"{n // div}{suffix}"
    return str(n)


def parse_rows(text: str) -> int:
    """'10M' / '100m' / '1e7' / '10000000' -> int."""
    t = text.strip().upper().replace("_", "")
    mult = {"K": 1_000, "M": 1_000_000, "B": 1_000_000_000, "G": 1_000_000_000}
    if t and t[-1] in mult:
        return int(float(t[:-1]) * mult[t[-1]])
    return int(float(t))


# --------------------------------------------------------------------------- timing

@dataclasses.dataclass
class Timing:
    times_s: list[float]
    result: Any = None

    @property
    def best_ms(self) -> float:
        return min(self.times_s) * 1e3

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_s) * 1e3


def timed(fn: Callable[[], Any], repeat: int = 3, warmup: int = 1) -> Timing:
    """Run fn `warmup` times untimed, then `repeat` times timed (perf_counter wall time).

    The result of the last timed call is kept so the caller can check answers.
    """
    for _ in range(warmup):
        fn()
    times = []
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return Timing(times, result)


def time_once(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    r = fn()
    return time.perf_counter() - t0, r


# --------------------------------------------------------------------------- subprocesses

def _stop_pid(proc: subprocess.Popen, grace_s: float, what: str) -> None:
    """SIGTERM the PID we started, wait; if it does not end, SIGKILL that PID and then its
    process group (which we created with start_new_session, so it holds only processes
    descended from it, e.g. the private Ray it started)."""
    if proc.poll() is not None:
        return
    log(f"[bench] stopping {what} (pid {proc.pid}) with SIGTERM")
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=grace_s)
        return
    except subprocess.TimeoutExpired:
        log(f"[bench] {what} (pid {proc.pid}) did not stop within {grace_s:.0f}s; SIGKILL")
    except ProcessLookupError:
        return
    try:
        proc.kill()
        proc.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group whose leader is our child
    except (ProcessLookupError, PermissionError):
        pass


class RaymppServer:
    """`raympp serve` on a free loopback port over a temporary data directory.

    with RaymppServer(segments=2) as srv:
        conn = srv.connect()
    """

    def __init__(self, segments: int = 2, port: int | None = None,
                 data_dir: str | None = None, start_timeout_s: float = 300.0,
                 stop_timeout_s: float = 120.0, extra_args: list[str] | None = None,
                 env: dict[str, str] | None = None):
        self.segments = segments
        self.env = dict(env or {})  # extra environment of the server (and its segments)
        self.port = port or free_port()
        self._own_dir = data_dir is None
        self.tmp = Path(tempfile.mkdtemp(prefix="raympp-bench-")) if data_dir is None else None
        self.data_dir = Path(data_dir) if data_dir else self.tmp / "data"
        self.start_timeout_s = start_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.extra_args = extra_args or []
        self.proc: subprocess.Popen | None = None
        self.output: list[str] = []
        self._ready = threading.Event()
        self._serving = False
        self._reader: threading.Thread | None = None

    def command(self) -> list[str]:
        exe = VENV_BIN / "raympp"
        if exe.exists():
            head = [str(exe)]
        else:  # console script not installed: run the module from the source tree
            head = [str(VENV_BIN / "python"), "-m", "coordinator.cli"]
        return head + ["serve", "--host", HOST, "--port", str(self.port),
                       "--segments", str(self.segments), "--data-dir", str(self.data_dir),
                       *self.extra_args]

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line.rstrip("\n"))
            if "serving" in line:
                self._serving = True
                self._ready.set()
        self._ready.set()  # EOF: the process is ending; start() sees _serving False

    def start(self) -> "RaymppServer":
        env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", PYTHONUNBUFFERED="1", **self.env)
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        cmd = self.command()
        log(f"[bench] starting raympp: {' '.join(cmd)}")
        self.proc = subprocess.Popen(cmd, cwd=str(REPO), env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, bufsize=1,
                                     start_new_session=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        t0 = time.monotonic()
        self._ready.wait(self.start_timeout_s)
        if not self._serving or self.proc.poll() is not None:
            if self._ready.is_set():  # output ended: give the process a moment to exit
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
            code = self.proc.poll()
            why = (f"exited with code {code}" if code is not None
                   else f"printed no 'serving' line within {self.start_timeout_s:.0f}s")
            tail = "\n".join(self.output[-12:])
            self.stop()
            raise RuntimeError(f"raympp serve {why}; last output:\n{tail}")
        log(f"[bench] raympp serving on {HOST}:{self.port} after "
            f"{time.monotonic() - t0:.1f}s (pid {self.proc.pid})")
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def connect(self, **kw):
        import psycopg
        return psycopg.connect(host=HOST, port=self.port, user="raympp", dbname="raympp",
                               autocommit=True, **kw)

    def stop(self) -> None:
        try:
            if self.proc is not None:
                _stop_pid(self.proc, self.stop_timeout_s, "raympp")
                if self._reader is not None:
                    self._reader.join(timeout=5)
        finally:
            if self._own_dir and self.tmp is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)
                self.tmp = None

    def __enter__(self) -> "RaymppServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class PostgresServer:
    """A private PostgreSQL cluster for one benchmark run.

    initdb into a temporary directory owned by a non-root user (PostgreSQL refuses to run as
    root), start on a free loopback port with `settings`, stop with `pg_ctl stop -m fast`,
    remove the directory. The unix socket goes into the temporary directory too.
    """

    DEFAULT_SETTINGS = {
        "listen_addresses": HOST,
        "max_parallel_workers_per_gather": "2",
        "shared_buffers": "1GB",
    }

    def __init__(self, settings: dict[str, str] | None = None, user: str = "postgres",
                 port: int | None = None, start_timeout_s: int = 120):
        self.settings = dict(self.DEFAULT_SETTINGS)
        self.settings.update(settings or {})
        self.user = user
        self.port = port or free_port()
        self.start_timeout_s = start_timeout_s
        self.tmp: Path | None = None
        self.started = False

    # ---- running as the postgres user
    def _ensure_user(self) -> None:
        if os.geteuid() != 0:
            self.user = pwd.getpwuid(os.geteuid()).pw_name  # already not root: run as self
            return
        try:
            pwd.getpwnam(self.user)
        except KeyError:  # only created when absent
            log(f"[bench] creating system user {self.user!r} (useradd -r -M)")
            subprocess.run(["useradd", "-r", "-M", self.user], check=True)

    def _as_user(self, args: list[str]) -> list[str]:
        if os.geteuid() == 0:
            return ["runuser", "-u", self.user, "--", *args]
        return args

    def _run(self, args: list[str], **kw) -> subprocess.CompletedProcess:
        return subprocess.run(self._as_user(args), check=True, capture_output=True,
                              text=True, **kw)

    @property
    def pgdata(self) -> Path:
        assert self.tmp is not None
        return self.tmp / "data"

    def command_line_options(self) -> str:
        opts = [f"-c {k}={v}" for k, v in self.settings.items() if k != "port"]
        opts += [f"-p {self.port}", f"-c unix_socket_directories={self.tmp}"]
        return " ".join(opts)

    def start(self) -> "PostgresServer":
        self._ensure_user()
        self.tmp = Path(tempfile.mkdtemp(prefix="pg-bench-"))
        try:
            if os.geteuid() == 0:
                pw = pwd.getpwnam(self.user)
                os.chown(self.tmp, pw.pw_uid, pw.pw_gid)
            self._run([str(PG_BIN / "initdb"), "-D", str(self.pgdata), "-U", "postgres",
                       "--auth=trust", "-E", "UTF8", "--locale=C"])
            log(f"[bench] starting PostgreSQL on {HOST}:{self.port}: "
                f"{self.command_line_options()}")
            self._run([str(PG_BIN / "pg_ctl"), "start", "-w", "-t", str(self.start_timeout_s),
                       "-D", str(self.pgdata), "-l", str(self.tmp / "server.log"),
                       "-o", self.command_line_options()])
            self.started = True
        except subprocess.CalledProcessError as e:
            logtail = ""
            if self.tmp and (self.tmp / "server.log").exists():
                logtail = (self.tmp / "server.log").read_text()[-3000:]
            self.stop()
            raise RuntimeError(f"PostgreSQL failed: {e.cmd}\n{e.stdout}\n{e.stderr}\n"
                               f"{logtail}") from e
        except BaseException:
            self.stop()
            raise
        return self

    def version(self) -> str:
        return subprocess.run([str(PG_BIN / "postgres"), "--version"], capture_output=True,
                              text=True).stdout.strip()

    def connect(self, **kw):
        import psycopg
        return psycopg.connect(host=HOST, port=self.port, user="postgres",
                               dbname="postgres", autocommit=True, **kw)

    def stop(self) -> None:
        try:
            if self.started and self.tmp is not None:
                log("[bench] stopping PostgreSQL (pg_ctl stop -m fast)")
                try:
                    self._run([str(PG_BIN / "pg_ctl"), "stop", "-m", "fast", "-w",
                               "-D", str(self.pgdata)], timeout=120)
                except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
                    log(f"[bench] pg_ctl stop failed: {e}; trying immediate")
                    try:
                        self._run([str(PG_BIN / "pg_ctl"), "stop", "-m", "immediate",
                                   "-D", str(self.pgdata)], timeout=60)
                    except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
                        pass
                self.started = False
        finally:
            if self.tmp is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)
                self.tmp = None

    def __enter__(self) -> "PostgresServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# --------------------------------------------------------------------------- statements

class StatementTimeout(Exception):
    pass


def run_with_deadline(fn: Callable[[], Any], timeout_s: float | None) -> Any:
    """Run fn in a thread; raise StatementTimeout if it has not finished after timeout_s.

    The thread keeps running (it is a daemon); the caller is expected to stop the server,
    which ends the statement with a connection error.
    """
    if not timeout_s:
        return fn()
    box: dict[str, Any] = {}

    def target():
        try:
            box["result"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout_s)
    if t.is_alive():
        raise StatementTimeout(f"not finished after {timeout_s:g}s")
    if "error" in box:
        raise box["error"]
    return box.get("result")


def query_value(conn, sql: str) -> Any:
    """Execute sql and return the single value of its single row."""
    with conn.cursor() as cur:
        cur.execute(sql)
        rows = cur.fetchall()
    if len(rows) != 1 or len(rows[0]) != 1:
        raise AssertionError(f"expected one value from {sql!r}, got {rows!r}")
    return rows[0][0]


def execute(conn, sql: str) -> None:
    with conn.cursor() as cur:
        cur.execute(sql)


def load_average() -> str:
    """The 1/5/15-minute load averages: other work on the machine skews every figure."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def machine_description() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({cpu}), {mem} RAM"

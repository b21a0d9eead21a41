"""The `raympp` command: `raympp serve` runs a coordinator with its segments in the foreground.

It starts a private Ray bound to 127.0.0.1 (or joins --ray-address), starts the segment
actors over the data directory, serves the PostgreSQL protocol, prints where to connect,
and on SIGINT/SIGTERM stops everything it started.

Like a server, it checks what it is given before starting anything: bad arguments are
argparse errors (exit 2); an address it cannot listen on (a port in use, a host that is
not local) and other start-up failures are one line on stderr (exit 1), the address
checked before Ray starts.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import logging
import os
import signal
import socket
import sys
from importlib.metadata import entry_points

from coordinator import expand_command
from deploy import supervisor  # Ray (deploy/ray_local.py) only once a server starts

log = logging.getLogger(__name__)

DEMO_SQL = [
    "CREATE TABLE demo (id bigint NOT NULL, k integer, grp text, x double precision, "
    "amount numeric(12,2), day date) DISTRIBUTED BY (id)",
    "INSERT INTO demo SELECT g, g % 10, 'group ' || (g % 7), g * 0.5, (g % 1000) * 1.25, "
    "date '2024-01-01' + (g % 365)::int FROM generate_series(1, 100000) AS g",
]
MAX_SEGMENTS = 1024
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
COMMANDS_GROUP = "raympp.commands"  # entry points of subcommands besides serve


class StartError(Exception):
    """The server cannot start; the message is the one line printed on stderr."""


def _int_in(low: int, high: int, what: str):
    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {what}: {text!r} (expected an integer)")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"invalid {what}: {value} (expected {low} to {high})")
        return value
    return parse


def _nonempty():
    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError("must not be empty")
        return text
    return parse


def _log_level(text: str) -> str:
    if text.upper() not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(
            f"invalid log level: {text!r} (choose from {', '.join(LOG_LEVELS)})")
    return text.upper()


def add_serve_parser(sub) -> argparse.ArgumentParser:
    serve = sub.add_parser("serve", help="run a coordinator and its segments",
                           description="Run a coordinator and its segments in the foreground.")
    serve.add_argument("--host", default="127.0.0.1", type=_nonempty(),
                       help="address to listen on (default: %(default)s)")
    serve.add_argument("--port", type=_int_in(0, 65535, "port"), default=5433,
                       help="port to listen on, 0 for any free one (default: %(default)s)")
    serve.add_argument("--segments", type=_int_in(1, MAX_SEGMENTS, "number of segments"),
                       default=2, help="number of segments when the data directory is "
                       "created; an existing one keeps its own (default: %(default)s)")
    serve.add_argument("--data-dir", default="./raympp-data", type=_nonempty(),
                       help="data directory (default: %(default)s)")
    serve.add_argument("--ray-address", default=None, type=_nonempty(),
                       help="join this Ray cluster instead of starting a local one "
                       "(default: a private local Ray on 127.0.0.1)")
    serve.add_argument("--password", default=None, type=_nonempty(),
                       metavar="PW",
                       help="require passwords (SCRAM-SHA-256) of every role; PW becomes the "
                       "password of the bootstrap superuser (raympp unless renamed) at every start "
                       "(default: no passwords, roles that may log in are trusted)")
    serve.add_argument("--demo", action="store_true",
                       help="create a 100k-row table 'demo' if it does not exist "
                       "(default: off)")
    serve.add_argument("--log-level", default="WARNING", type=_log_level,
                       help=f"one of {', '.join(LOG_LEVELS)} (default: %(default)s)")
    return serve


def commands() -> dict:
    """The subcommands other packages add to `raympp`, by name: the modules that the
    `raympp.commands` entry points name (pyproject.toml: the benchmark kits' `tpch` and
    `clickbench`, in workloads/), each with `add_parser(sub)` and `main(args) -> int`.
    The server packages never import those kits; they are found installed."""
    return {ep.name: ep.load() for ep in sorted(entry_points(group=COMMANDS_GROUP),
                                                 key=lambda ep: ep.name)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="raympp", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add_serve_parser(sub)
    expand_command.add_parser(sub)
    extra = commands()
    for command in extra.values():
        command.add_parser(sub)
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "serve":
        if not supervisor.supervised():
            code = supervisor.run(sys.argv[1:] if argv is None else argv)
            if code is not None:
                return code
        return serve_main(args)
    if args.command == "expand":
        return expand_command.main(args)
    if args.command in extra:
        return extra[args.command].main(args)
    return 2


def serve_main(args) -> int:
    if supervisor.supervised():
        supervisor.die_with_parent()
    try:
        # Before Ray is even imported: an address that cannot be listened on fails at once.
        check_listen(args.host, args.port)
        if os.path.exists(args.data_dir) and not os.path.isdir(args.data_dir):
            raise StartError(f'data directory "{args.data_dir}" is not a directory')
    except StartError as e:
        print(f"raympp: {e}", file=sys.stderr, flush=True)
        return 1
    # Imported here, not at the top: Ray (deploy/ray_local), the engine and pyarrow load only
    # once the arguments and the address are checked (--help and bad arguments answer at once).
    from coordinator import roles
    from coordinator.engine import Engine
    from coordinator.pgwire.server import PgServer
    from deploy import ray_local
    from planner import errors
    from segment import heap

    engine = None
    try:
        ray_local.connect(args.ray_address)
        engine = Engine(args.data_dir, args.segments)
        authenticator = roles.setup(engine.catalog, args.password)
        if args.demo:
            load_demo(engine)
        # What start-up built (modules, Ray's client, the catalog) lives as long as the
        # server: out of the cyclic collector's sight, a full collection no longer walks
        # it mid-query (segment/heap.py says what that costs).
        heap.settle(full=True)
        asyncio.run(_serve(engine, PgServer, args, authenticator))
    except (StartError, OSError, errors.QueryError) as e:
        log.debug("start-up failed", exc_info=True)
        print(f"raympp: {_one_line(e)}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("raympp: interrupted", file=sys.stderr, flush=True)
        return 130
    finally:
        if engine is not None:
            engine.shutdown()
        if supervisor.supervised():
            # Ray's processes first, by PID, all at once and with SIGKILL: the segments are
            # stopped already (nothing of ours is left to flush), and this process may be
            # made to exit as soon as its raylet dies, so it cannot wait for a grace period
            # (with the supervisor gone, nobody else would end what is left).
            supervisor.stop_descendants(grace_seconds=0)
        ray_local.stop()
    return 0


def _one_line(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return f'{e.strerror}: "{e.filename}"' if e.filename else e.strerror
    text = getattr(e, "message", None) or str(e) or type(e).__name__
    return (text.strip().splitlines() or [type(e).__name__])[0]


def _bind_error(family: int, address: str, port: int, e: OSError) -> StartError:
    """PostgreSQL's words: could not bind IPv4 address "127.0.0.1": Address already in use."""
    kind = "IPv6" if family == socket.AF_INET6 else "IPv4"
    text = f'could not bind {kind} address "{address}": {os.strerror(e.errno) if e.errno else e}'
    if e.errno == errno.EADDRINUSE:
        text += f" (is another server running on port {port}?)"
    return StartError(text)


def check_listen(host: str, port: int) -> None:
    """StartError unless every address `host` resolves to can be bound on `port` now, as
    the server binds them (SO_REUSEADDR, IPv6 only on IPv6 sockets)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise StartError(f'could not translate host name "{host}" to address: '
                         f"{e.strerror}") from None
    for family, kind, proto, _, address in dict.fromkeys(
            (f, k, p, c, a) for f, k, p, c, a in infos):
        with socket.socket(family, kind, proto) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                s.bind(address)
            except OSError as e:
                raise _bind_error(family, address[0], port, e) from None


async def _serve(engine, server_cls, args, authenticator=None):
    server = server_cls(engine, args.host, args.port, authenticator=authenticator)
    try:
        await server.start()
    except OSError as e:  # taken between the check and now
        raise _bind_error(socket.AF_INET6 if ":" in args.host else socket.AF_INET,
                          args.host, args.port, e) from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    n = engine.cluster.n_segments
    user = engine.catalog.bootstrap_role().name
    print(f"raympp serving PostgreSQL protocol on {args.host}:{server.port} with {n} segments "
          f"(data: {engine.data_dir}); connect: psql -h {args.host} -p {server.port} -U {user}",
          flush=True)
    await stop.wait()
    print("raympp: stopping", flush=True)
    await server.stop()


def load_demo(engine) -> None:
    if engine.catalog.get_table("demo") is not None:
        return
    from coordinator.pgwire.boundary import CancelToken  # pyarrow only in a started server

    user = engine.catalog.bootstrap_role().name
    session = engine.open_session(user, user, {})
    try:
        for sql in DEMO_SQL:
            for stmt in session.prepare(sql, []):
                result = session.execute(stmt, [], CancelToken())
                if result.batches is not None:
                    for _ in result.batches:
                        pass
    finally:
        session.close()


if __name__ == "__main__":
    sys.exit(main())

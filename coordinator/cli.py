"""The `raympp` command: `raympp serve` runs a coordinator with its segments in the foreground.

It starts a private Ray bound to 127.0.0.1 (or joins --ray-address), starts the segment
actors over the data directory, serves the PostgreSQL protocol, prints where to connect,
and on SIGINT/SIGTERM stops everything it started.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from deploy import ray_local, supervisor

DEMO_SQL = [
    "CREATE TABLE demo (id bigint NOT NULL, k integer, grp text, x double precision, "
    "amount numeric(12,2), day date) DISTRIBUTED BY (id)",
    "INSERT INTO demo SELECT g, g % 10, 'group ' || (g % 7), g * 0.5, (g % 1000) * 1.25, "
    "date '2024-01-01' + (g % 365)::int FROM generate_series(1, 100000) AS g",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="raympp", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run a coordinator and its segments")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=5433)
    serve.add_argument("--segments", type=int, default=2)
    serve.add_argument("--data-dir", default="./raympp-data")
    serve.add_argument("--ray-address", default=None,
                       help="join this Ray cluster instead of starting a local one")
    serve.add_argument("--password", default=None,
                       help="require this password (SCRAM-SHA-256); default: trust")
    serve.add_argument("--demo", action="store_true",
                       help="create a 100k-row table 'demo' if it does not exist")
    serve.add_argument("--log-level", default="WARNING")
    from coordinator.tpch import cli as tpch_cli
    tpch_cli.add_parser(sub)
    from coordinator.clickbench import command as clickbench_command
    clickbench_command.add_parser(sub)
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "serve":
        if not supervisor.supervised():
            code = supervisor.run(sys.argv[1:] if argv is None else argv)
            if code is not None:
                return code
        return serve_main(args)
    if args.command == "tpch":
        return tpch_cli.main(args)
    if args.command == "clickbench":
        return clickbench_command.main(args)
    return 2


def serve_main(args) -> int:
    from coordinator.engine import Engine
    from coordinator.pgwire.server import PgServer

    if supervisor.supervised():
        supervisor.die_with_parent()
    ray_local.connect(args.ray_address)
    engine = None
    try:
        engine = Engine(args.data_dir, args.segments)
        if args.demo:
            load_demo(engine)
        asyncio.run(_serve(engine, PgServer, args))
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


async def _serve(engine, server_cls, args):
    server = server_cls(engine, args.host, args.port, password=args.password)
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    n = engine.cluster.n_segments
    print(f"raympp serving PostgreSQL protocol on {args.host}:{server.port} with {n} segments "
          f"(data: {engine.data_dir}); connect: psql -h {args.host} -p {server.port} -U raympp",
          flush=True)
    await stop.wait()
    print("raympp: stopping", flush=True)
    await server.stop()


def load_demo(engine) -> None:
    if engine.catalog.get_table("demo") is not None:
        return
    from coordinator.pgwire.boundary import CancelToken

    session = engine.open_session("raympp", "raympp", {})
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

"""Wait until a Ray cluster has all its nodes, before `raympp serve` joins it.

    python -m deploy.wait_nodes --ray-address HOST:PORT (--nodes N | --cluster-config FILE)
                                [--timeout SECONDS]

At the first start of a data directory the coordinator places segment i on alive node
i mod n_nodes, for good (deploy/README.md): started before the workers have joined, it
would put every segment on the nodes up so far. Under `ray up` the head's autoscaler
starts the workers only after the head is up, so deploy/serve_detached.sh waits here
first. With --cluster-config the count is the head plus the `provider.worker_ips` of a
`ray up` config (deploy/cluster.yaml; on the head, ~/ray_bootstrap_config.yaml).
Exit status 0 once that many nodes are alive, 1 on timeout (with the count seen).
"""

from __future__ import annotations

import argparse
import sys
import time

POLL_SECONDS = 2.0


def expected_nodes(config: dict) -> int:
    """The head and every worker of an on-premise `ray up` config."""
    provider = config.get("provider") if isinstance(config, dict) else None
    if not isinstance(provider, dict) or provider.get("type") != "local" \
            or "head_ip" not in provider:
        raise ValueError("not an on-premise cluster config (provider type local with head_ip)")
    return 1 + len(provider.get("worker_ips") or [])


def _read_config(path: str) -> dict:
    import yaml  # installed with Ray; only --cluster-config needs it

    with open(path, encoding="utf-8") as f:
        try:
            return yaml.safe_load(f)
        except yaml.YAMLError as e:
            raise ValueError(f"not YAML: {e}") from None


def _alive(ray) -> int:
    return sum(1 for node in ray.nodes() if node["Alive"])


def wait(address: str, nodes: int, timeout: float) -> int:
    """The number of alive nodes: `nodes` or more, or fewer once `timeout` has passed."""
    from deploy import ray_local  # imports Ray, which --help and bad arguments do without

    ray_local.connect(address)
    try:
        import ray  # after ray_local, which sets Ray's environment before the first import

        deadline = time.monotonic() + timeout
        while (seen := _alive(ray)) < nodes and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
        return seen
    finally:
        ray_local.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.wait_nodes",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--ray-address", required=True, help="the Ray cluster, HOST:PORT")
    count = parser.add_mutually_exclusive_group(required=True)
    count.add_argument("--nodes", type=int, help="how many nodes to wait for")
    count.add_argument("--cluster-config", help="a `ray up` config: its head and worker_ips")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds to wait (default %(default)s)")
    args = parser.parse_args(argv)
    try:
        nodes = (args.nodes if args.nodes is not None
                 else expected_nodes(_read_config(args.cluster_config)))
    except (OSError, ValueError) as e:
        parser.error(f"{args.cluster_config}: {e}")
    print(f"waiting for {nodes} Ray nodes at {args.ray_address}", flush=True)
    seen = wait(args.ray_address, nodes, args.timeout)
    if seen < nodes:
        print(f"only {seen} of {nodes} Ray nodes alive after {args.timeout:g} s",
              file=sys.stderr, flush=True)
        return 1
    print(f"{seen} Ray nodes alive", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

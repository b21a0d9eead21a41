"""Start or join Ray for raympp, with usage statistics off: a database must not phone home.

`connect(address)` joins an existing cluster (address like "127.0.0.1:6379" or "auto");
with no address it starts a private local Ray bound to 127.0.0.1 that ends with this
process (ray.shutdown in stop()).
"""

from __future__ import annotations

import logging
import os

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# Arrow data travels through Ray as is; these keep Ray quiet and local.
os.environ.setdefault("RAY_DISABLE_DOCKER_CPU_WARNING", "1")
os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")
# Ray's memory monitor kills workers when the node passes its threshold (95% by default),
# and a restartable segment actor is a candidate. Segments spill instead of growing once
# less than 10% of the node is free (segment/memory.py), so the monitor is moved to 97%:
# what it still kills is healed like any crash (coordinator/cluster.py).
os.environ.setdefault("RAY_memory_usage_threshold", "0.97")

import ray  # noqa: E402  (after the environment is set)

log = logging.getLogger(__name__)


def connect(address: str | None = None, num_cpus: int | None = None) -> None:
    """Start a local Ray (address None) or join the cluster at `address`."""
    if ray.is_initialized():
        return
    runtime_env = {"env_vars": {"RAY_USAGE_STATS_ENABLED": "0"}}
    if address:
        ray.init(address=address, runtime_env=runtime_env, log_to_driver=True,
                 configure_logging=False)
        return
    _bind_to_loopback()
    ray.init(address="local", num_cpus=num_cpus, include_dashboard=False,
             _node_ip_address="127.0.0.1", runtime_env=runtime_env, log_to_driver=True,
             configure_logging=False)


def _bind_to_loopback() -> None:
    """Make a private local Ray listen on 127.0.0.1 only.

    Ray turns a loopback node address into the host's reachable one unless clusters are
    disabled (its single-machine mode); disabling them keeps every Ray process, and the
    Motion listeners that use the node's address, on loopback."""
    from ray._private import ray_constants

    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # for Ray's child processes
    ray_constants.ENABLE_RAY_CLUSTER = False


def stop() -> None:
    if ray.is_initialized():
        ray.shutdown()

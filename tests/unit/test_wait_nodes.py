"""deploy/wait_nodes.py: waits until the cluster has the nodes asked for, or says how many.

Ray is replaced by a module whose `nodes()` reports one more alive node at each call (and
one dead node throughout); ray_local's connect and stop are recorded, not run.
"""

from __future__ import annotations

import sys
import types

import pytest

from deploy import ray_local, wait_nodes


@pytest.fixture
def cluster(monkeypatch):
    state = {"calls": 0, "connected": [], "stopped": 0}

    def nodes():
        state["calls"] += 1
        return [{"Alive": False}] + [{"Alive": True}] * state["calls"]

    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(nodes=nodes))
    monkeypatch.setattr(ray_local, "connect", lambda address: state["connected"].append(address))
    monkeypatch.setattr(ray_local, "stop", lambda: state.update(stopped=state["stopped"] + 1))
    monkeypatch.setattr(wait_nodes, "POLL_SECONDS", 0.0)
    return state


def test_waits_until_enough_nodes_are_alive(cluster):
    assert wait_nodes.wait("10.0.0.1:6379", 3, timeout=60) == 3
    assert cluster["calls"] == 3  # the dead node is not counted
    assert cluster["connected"] == ["10.0.0.1:6379"] and cluster["stopped"] == 1


def test_timeout_gives_the_count_seen_and_main_fails(cluster, capsys):
    assert wait_nodes.main(["--ray-address", "h:1", "--nodes", "1000", "--timeout", "0"]) == 1
    assert "only 1 of 1000 Ray nodes alive after 0 s" in capsys.readouterr().err
    assert cluster["stopped"] == 1


def test_main_counts_the_nodes_of_a_cluster_config(cluster, tmp_path, capsys):
    config = tmp_path / "ray_bootstrap_config.yaml"
    config.write_text('{"provider": {"type": "local", "head_ip": "10.0.0.1",'
                      ' "worker_ips": ["10.0.0.2", "10.0.0.3"]}}')  # ray up writes JSON
    assert wait_nodes.main(["--ray-address", "h:1", "--cluster-config", str(config)]) == 0
    assert "waiting for 3 Ray nodes" in capsys.readouterr().out

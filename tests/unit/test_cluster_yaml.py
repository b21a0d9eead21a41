"""deploy/cluster.yaml, the `ray up` config for existing hosts, read as `ray up` reads it.

Nothing here contacts a host or starts Ray: the file is parsed with yaml (Ray's own
dependency) and its commands are checked for what deploy/README.md promises: the
on-premise provider, usage statistics off on every `ray start`, the coordinator started
on the head against the head's Ray, the scripts it runs present, and every placeholder
listed in the file and filled in by the README's sed line.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from deploy import wait_nodes

yaml = pytest.importorskip("yaml", reason="pyyaml (installed with Ray) is needed to read it")

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "deploy" / "cluster.yaml"
README = REPO / "deploy" / "README.md"
PLACEHOLDER = re.compile(r"__[A-Z0-9_]+?__")
# The commands that run `ray start`: directly or through the scripts that do.
RAY_START = re.compile(r"\bray start\b|deploy/ray_(head|worker)\.sh")


@pytest.fixture(scope="module")
def config() -> dict:
    return yaml.safe_load(CONFIG.read_text())


def _commands(config: dict) -> list[str]:
    return [cmd for key in ("initialization_commands", "setup_commands",
                            "head_setup_commands", "worker_setup_commands",
                            "head_start_ray_commands", "worker_start_ray_commands")
            for cmd in config.get(key) or []]


def _option(words: list[str], name: str) -> str:
    for i, word in enumerate(words):
        if word == name:
            return words[i + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    raise AssertionError(f"{name} not in {words}")


def test_on_premise_provider(config):
    provider = config["provider"]
    assert provider["type"] == "local"
    assert provider["head_ip"]
    assert isinstance(provider["worker_ips"], list) and provider["worker_ips"]
    # Ray's on-premise provider refuses these (it makes its one node type itself).
    for field in ("head_node", "worker_nodes", "available_node_types"):
        assert field not in config


def test_every_ray_start_has_usage_stats_off(config):
    starts = [cmd for cmd in _commands(config) if RAY_START.search(cmd)]
    assert len(starts) == 2, starts  # the head's and the workers'
    for cmd in starts:
        assert "--disable-usage-stats" in cmd, cmd
        assert "RAY_USAGE_STATS_ENABLED=0" in cmd, cmd
    # The scripts set both themselves too, whoever runs them.
    for script in ("ray_head.sh", "ray_worker.sh"):
        text = (REPO / "deploy" / script).read_text()
        assert "export RAY_USAGE_STATS_ENABLED=0" in text
        assert "--disable-usage-stats" in text
        assert "RAY_AUTH_MODE=${RAY_AUTH_MODE:-token}" in text


def test_head_starts_ray_then_serve_against_it(config):
    head = config["head_start_ray_commands"]
    head_ip = config["provider"]["head_ip"]
    steps = [next(i for i, cmd in enumerate(head) if pattern in cmd)
             for pattern in ("serve_detached.sh stop", "ray stop", "deploy/ray_head.sh",
                             "serve_detached.sh start")]
    assert steps == sorted(steps), head  # old coordinator, old Ray, new Ray, new coordinator

    ray_head = shlex.split(head[steps[2]].split("deploy/ray_head.sh", 1)[1])
    assert ray_head[:2] == [head_ip, "6379"]
    # Without the autoscaling config the head never starts the workers.
    assert _option(ray_head, "--autoscaling-config").endswith("/ray_bootstrap_config.yaml")

    serve = shlex.split(head[steps[3]].split("serve_detached.sh start", 1)[1])
    assert serve[0].endswith("/ray_bootstrap_config.yaml")  # waits for every listed host
    assert _option(serve, "--ray-address") == f"{head_ip}:6379"
    assert _option(serve, "--host") == head_ip
    for name in ("--segments", "--data-dir", "--port"):
        assert _option(serve, name)


def test_workers_join_the_head(config):
    worker = config["worker_start_ray_commands"]
    start = next(cmd for cmd in worker if "deploy/ray_worker.sh" in cmd)
    assert worker.index(start) > next(i for i, c in enumerate(worker) if "ray stop" in c)
    words = start.split("deploy/ray_worker.sh", 1)[1].split()
    assert words[0] == "$RAY_HEAD_IP:6379"  # the autoscaler sets RAY_HEAD_IP


def test_scripts_it_runs_exist(config):
    named = {m for cmd in _commands(config) for m in re.findall(r"deploy/[\w.]+\.sh", cmd)}
    assert {"deploy/ray_head.sh", "deploy/ray_worker.sh", "deploy/serve_detached.sh",
            "deploy/venv.sh"} <= named
    for path in named:
        assert (REPO / path).is_file(), path


def test_token_and_checkout_reach_every_host(config):
    mounts = config["file_mounts"]
    assert mounts["~/.ray/auth_token"] == "~/.ray/auth_token"
    checkout = next(remote for remote, local in mounts.items() if local == ".")
    assert any(cmd.startswith(f"cd {checkout} && bash deploy/venv.sh")
               for cmd in config["setup_commands"])
    assert ".venv" in config["rsync_exclude"]  # each host builds its own


def test_placeholders_listed_and_filled_by_the_readme():
    text = CONFIG.read_text()
    header, _, body = text.partition("\ncluster_name:")
    used = set(PLACEHOLDER.findall(body))
    assert used, "no placeholders left to fill?"
    listed = set(PLACEHOLDER.findall(header))
    assert used <= listed, used - listed
    readme = README.read_text()
    sed = readme[readme.index("    sed -e"):readme.index("deploy/my-cluster.yaml\n")]
    pairs = dict(re.findall(r"s#(__[A-Z0-9_]+?__)#([^#]+)#g", sed))
    assert set(pairs) == used
    filled = PLACEHOLDER.sub(lambda m: pairs[m.group(0)], body)
    config = yaml.safe_load("cluster_name:" + filled)
    assert not PLACEHOLDER.search(str(config))
    assert config["provider"]["head_ip"] == pairs["__HEAD_IP__"]
    assert wait_nodes.expected_nodes(config) == 1 + len(config["provider"]["worker_ips"])


def test_expected_nodes_needs_an_on_premise_config(config):
    assert wait_nodes.expected_nodes(config) == 3
    with pytest.raises(ValueError):
        wait_nodes.expected_nodes({"provider": {"type": "aws"}})

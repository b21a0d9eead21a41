"""Two network namespaces joined by a veth pair: two "hosts" on one machine, for tests.

`NetnsPair(tag, octet)` names its namespaces rmpp-<tag>-a / rmpp-<tag>-b and its veth ends
rmpa<tag> / rmpb<tag>, with addresses 10.213.<octet>.1/24 (in a) and .2/24 (in b). Both
veth ends live inside the namespaces, so nothing changes in the machine's own network and
the namespaces can reach only each other and their own loopback (no default route).
Processes are run in a namespace with `ip netns exec`; `stop_processes` ends every process
in one of these namespaces (all of them were started by the test that made it), by PID.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

IP_TIMEOUT = 30


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=IP_TIMEOUT)
    if check and p.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed ({p.returncode}): {p.stderr.strip()}")
    return p


def netns_unavailable_reason() -> str | None:
    """Why `ip netns` cannot be used here, or None when it can (probed with a scratch ns)."""
    if shutil.which("ip") is None:
        return "iproute2 `ip` is not installed"
    if os.geteuid() != 0:
        return "ip netns needs root"
    probe = f"rmpp-probe-{os.getpid()}"
    try:
        p = _ip("netns", "add", probe, check=False)
        if p.returncode != 0:
            return f"ip netns add is not permitted: {p.stderr.strip()}"
        p = _ip("-n", probe, "link", "add", "rmpprobe0", "type", "veth", "peer", "name",
                "rmpprobe1", check=False)
        if p.returncode != 0:
            return f"cannot create a veth pair in a namespace: {p.stderr.strip()}"
        return None
    except (OSError, subprocess.SubprocessError) as e:
        return f"ip netns is not usable: {e}"
    finally:
        try:
            _ip("netns", "del", probe, check=False)
        except (OSError, subprocess.SubprocessError):
            pass


class NetnsPair:
    def __init__(self, tag: str, octet: int):
        assert 1 <= octet <= 254 and len(f"rmpa{tag}") <= 15, (tag, octet)
        self.names = (f"rmpp-{tag}-a", f"rmpp-{tag}-b")
        self.veths = (f"rmpa{tag}", f"rmpb{tag}")
        self.addrs = (f"10.213.{octet}.1", f"10.213.{octet}.2")
        self._created: list[str] = []

    def create(self) -> None:
        for name in self.names:
            _ip("netns", "add", name)
            self._created.append(name)
            _ip("-n", name, "link", "set", "lo", "up")
        a, b = self.names
        # Created inside namespace a with its peer moved straight into b: the veth is never
        # in the machine's own namespace.
        _ip("-n", a, "link", "add", self.veths[0], "type", "veth", "peer", "name",
            self.veths[1], "netns", b)
        for name, veth, addr in zip(self.names, self.veths, self.addrs):
            _ip("-n", name, "addr", "add", f"{addr}/24", "dev", veth)
            _ip("-n", name, "link", "set", veth, "up")

    def exec_argv(self, i: int, argv: list[str]) -> list[str]:
        """argv to run `argv` inside namespace i (0 = a, 1 = b)."""
        return ["ip", "netns", "exec", self.names[i], *argv]

    def pids(self, i: int) -> list[int]:
        if self.names[i] not in self._created:
            return []
        p = _ip("netns", "pids", self.names[i], check=False)
        return [int(x) for x in p.stdout.split()]

    def stop_processes(self, i: int, grace: float = 20.0) -> list[int]:
        """SIGTERM every process in namespace i, SIGKILL what is left after `grace` seconds.
        Returns the PIDs (with their commands) that had to be killed."""
        for pid in self.pids(i):
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.pids(i) and time.monotonic() < deadline:
            time.sleep(0.2)
        killed = [f"{pid} ({_command(pid)})" for pid in self.pids(i)]
        for pid in self.pids(i):
            _signal(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while self.pids(i) and time.monotonic() < deadline:
            time.sleep(0.1)
        return killed

    def destroy(self) -> dict[str, list[str]]:
        """End the namespaces' processes and delete the namespaces (the veth goes with them).
        Returns, per namespace, the PIDs that did not end on SIGTERM and were killed."""
        errors, killed = [], {}
        for i in reversed(range(len(self.names))):  # b (the "worker host") first
            try:
                killed[self.names[i]] = self.stop_processes(i)
            except Exception as e:  # keep deleting what can be deleted
                errors.append(f"stopping processes in {self.names[i]}: {e}")
        for name in reversed(self._created):
            p = _ip("netns", "del", name, check=False)
            if p.returncode != 0:
                errors.append(f"ip netns del {name}: {p.stderr.strip()}")
        self._created = []
        if errors:
            raise RuntimeError("; ".join(errors))
        return killed


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:120]
    except OSError:
        return "?"

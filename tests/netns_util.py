"""Network namespaces joined into one network: several "hosts" on one machine, for tests.

`NetnsHosts(tag, octet, n)` makes n host namespaces rmpp-<tag>-0 .. rmpp-<tag>-<n-1> and
one more, rmpp-<tag>-net, holding a bridge (the "switch"). Host i has one veth end,
rmph<i>, with the address 10.213.<octet>.<i+1>/24; its peer, rmpp<i>, is attached to the
bridge. Every interface lives inside these namespaces (each veth pair is created in the
switch namespace with its host end moved straight into the host's), so nothing changes
in the machine's own network, and the hosts reach only each other and their own loopback
(no default route). `NetnsPair(tag, octet)` is the two-host case.

Processes are run in a host with `ip netns exec` (`exec_argv`), or a connection is opened
from one with `entered(i)`; `stop_processes` ends every process in a namespace (all of
them were started by the test that made it), by PID, and `destroy` does that for every
namespace and deletes them.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import time

IP_TIMEOUT = 30
BRIDGE = "rmppbr"  # inside the switch namespace
CLONE_NEWNET = 0x40000000
_LIBC = ctypes.CDLL(None, use_errno=True)


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
        p = _ip("-n", probe, "link", "add", "rmpprobebr", "type", "bridge", check=False)
        if p.returncode != 0:
            return f"cannot create a bridge in a namespace: {p.stderr.strip()}"
        return None
    except (OSError, subprocess.SubprocessError) as e:
        return f"ip netns is not usable: {e}"
    finally:
        try:
            _ip("netns", "del", probe, check=False)
        except (OSError, subprocess.SubprocessError):
            pass


class NetnsHosts:
    """n hosts on one bridge (see the module docstring); `create`, then `destroy`."""

    def __init__(self, tag: str, octet: int, n: int):
        assert 1 <= octet <= 254 and 2 <= n <= 250, (tag, octet, n)
        self.names = tuple(f"rmpp-{tag}-{i}" for i in range(n))
        self.switch = f"rmpp-{tag}-net"
        self.addrs = tuple(f"10.213.{octet}.{i + 1}" for i in range(n))
        self.veths = tuple(f"rmph{i}" for i in range(n))  # each in its host namespace
        self._created: list[str] = []

    def create(self) -> None:
        for name in (self.switch, *self.names):
            _ip("netns", "add", name)
            self._created.append(name)
            _ip("-n", name, "link", "set", "lo", "up")
        _ip("-n", self.switch, "link", "add", BRIDGE, "type", "bridge")
        _ip("-n", self.switch, "link", "set", BRIDGE, "up")
        for i, (name, veth, addr) in enumerate(zip(self.names, self.veths, self.addrs)):
            port = f"rmpp{i}"
            _ip("-n", self.switch, "link", "add", port, "type", "veth", "peer", "name", veth,
                "netns", name)
            _ip("-n", self.switch, "link", "set", port, "master", BRIDGE)
            _ip("-n", self.switch, "link", "set", port, "up")
            _ip("-n", name, "addr", "add", f"{addr}/24", "dev", veth)
            _ip("-n", name, "link", "set", veth, "up")

    def exec_argv(self, i: int, argv: list[str]) -> list[str]:
        """argv to run `argv` inside host i."""
        return ["ip", "netns", "exec", self.names[i], *argv]

    @contextlib.contextmanager
    def entered(self, i: int):
        """Run the block with this thread in host i's network namespace: sockets made in
        it (a psycopg connection) stay there, and may be used from any thread after."""
        with open(f"/run/netns/{self.names[i]}") as target, \
                open("/proc/thread-self/ns/net") as own:
            _setns(target.fileno())
            try:
                yield
            finally:
                _setns(own.fileno())

    def tx_bytes(self, i: int) -> int:
        """Bytes host i has sent over its veth (its traffic to the other hosts)."""
        p = _ip("-n", self.names[i], "-s", "-j", "link", "show", "dev", self.veths[i])
        return int(json.loads(p.stdout)[0]["stats64"]["tx"]["bytes"])

    def pids(self, name: str) -> list[int]:
        if name not in self._created:
            return []
        p = _ip("netns", "pids", name, check=False)
        return [int(x) for x in p.stdout.split()]

    def stop_processes(self, name: str, grace: float = 20.0) -> list[str]:
        """SIGTERM every process in namespace `name`, SIGKILL what is left after `grace`
        seconds. Returns the PIDs (with their commands) that had to be killed."""
        for pid in self.pids(name):
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.pids(name) and time.monotonic() < deadline:
            time.sleep(0.2)
        killed = [f"{pid} ({_command(pid)})" for pid in self.pids(name)]
        for pid in self.pids(name):
            _signal(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while self.pids(name) and time.monotonic() < deadline:
            time.sleep(0.1)
        return killed

    def destroy(self) -> dict[str, list[str]]:
        """End the namespaces' processes and delete the namespaces (the veths and the
        bridge go with them). Returns, per namespace, the PIDs that did not end on SIGTERM
        and were killed."""
        errors, killed = [], {}
        # The worker hosts first, the head (host 0) last; the switch runs nothing, but is
        # checked the same way.
        for name in (*reversed(self.names), self.switch):
            try:
                killed[name] = self.stop_processes(name)
            except Exception as e:  # keep deleting what can be deleted
                errors.append(f"stopping processes in {name}: {e}")
        for name in reversed(self._created):
            p = _ip("netns", "del", name, check=False)
            if p.returncode != 0:
                errors.append(f"ip netns del {name}: {p.stderr.strip()}")
        self._created = []
        if errors:
            raise RuntimeError("; ".join(errors))
        return killed


class NetnsPair(NetnsHosts):
    """Two hosts (10.213.<octet>.1 and .2)."""

    def __init__(self, tag: str, octet: int):
        super().__init__(tag, octet, 2)


def _setns(fd: int) -> None:
    # os.setns is Python 3.12+; the venv's Python is 3.11.
    if _LIBC.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


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

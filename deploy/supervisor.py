"""Run `raympp serve` under a small supervisor, so that no Ray process outlives it.

The coordinator starts Ray (gcs_server, raylet, agents, the segment workers). If it is
killed by a signal it cannot catch, those processes would run on for minutes. So the
process the user starts is this supervisor: it becomes a child subreaper (Linux
PR_SET_CHILD_SUBREAPER), runs the coordinator as its child, and when the coordinator ends,
however it ends, every process it left behind has been re-parented to the supervisor,
which stops them (SIGTERM, then SIGKILL) by PID and exits with the coordinator's status.
The other way round, the coordinator asks the kernel for SIGTERM when the supervisor dies
(PR_SET_PDEATHSIG), and shuts down cleanly.

Signals the supervisor gets (SIGINT, SIGTERM) are passed on to the coordinator.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
ENV_SUPERVISED = "RAYMPP_SUPERVISED"
GRACE_SECONDS = 5.0   # between SIGTERM and SIGKILL for left-behind processes


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):  # not Linux: run unsupervised
        return False


def die_with_parent() -> None:
    """In the coordinator: get SIGTERM when the supervisor dies, and collect (as a subreaper
    too) the Ray processes whose parents end first, so that `stop_descendants` at the end
    of the coordinator stops them even when the supervisor is gone."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() == 1:  # the supervisor died before the call took effect
        os.kill(os.getpid(), signal.SIGTERM)


def supervised() -> bool:
    return os.environ.get(ENV_SUPERVISED) == "1"


def run(argv: list[str]) -> int | None:
    """Run `raympp <argv>` as a supervised child; returns its exit status, or None where
    there are no subreapers (not Linux): then the caller runs unsupervised."""
    if not _prctl(PR_SET_CHILD_SUBREAPER, 1):
        return None
    env = dict(os.environ, **{ENV_SUPERVISED: "1"})
    child = subprocess.Popen([sys.executable, "-m", "coordinator.cli", *argv], env=env)

    def forward(signum, _frame):
        try:
            child.send_signal(signum)
        except ProcessLookupError:
            pass  # the coordinator has ended already: child.wait() returns at once
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, forward)
    code = child.wait()
    stop_descendants()
    return code if code >= 0 else 128 - code


def stop_descendants(grace_seconds: float = GRACE_SECONDS) -> None:
    """Stop every process below this one (children, theirs, and orphans re-parented to
    this subreaper), by PID: SIGTERM to the whole tree in one pass, SIGKILL to what is left
    after the grace period. One pass, because when one of Ray's processes dies its
    children are re-parented and its driver may exit at once: signalling the whole tree
    before any of it reacts leaves nothing to escape."""
    deadline = time.monotonic() + grace_seconds
    signalled: set[int] = set()
    while True:
        _reap()
        procs = _descendants()
        if not procs:
            return
        late = time.monotonic() >= deadline
        for pid in procs:
            if late or pid not in signalled:
                try:
                    os.kill(pid, signal.SIGKILL if late else signal.SIGTERM)
                except ProcessLookupError:
                    pass  # it ended between the listing and the signal: what we wanted
                signalled.add(pid)
        time.sleep(0.1)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _descendants() -> list[int]:
    """Live processes below this one, from /proc (zombies are left to _reap)."""
    parent, state = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # The fields after the command name, which is in parentheses and may hold spaces.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1:
            state[int(name)], parent[int(name)] = fields[0], int(fields[1])
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], list(children.get(os.getpid(), ()))
    while todo:
        pid = todo.pop()
        if state.get(pid) != "Z":
            out.append(pid)
        todo.extend(children.get(pid, ()))
    return out

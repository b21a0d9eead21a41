"""What both ends of a Motion channel share: where a service listens, and channel counters.

`Endpoint` is plain data that pickles, so a coordinator can hand the address of one
process's MotionService to the slices running in others. `node_id` names the kernel and
network namespace a process runs in: two endpoints with the same node_id can exchange
shared memory over a Unix socket (the socket lives in the abstract namespace, which is per
network namespace). `ChannelStats` are the counters of one end of one channel.
"""

from __future__ import annotations

import dataclasses
import os
import socket


@dataclasses.dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a MotionService accepts senders: TCP on (host, tcp_port), shm on uds_path.

    uds_path starting with NUL is a Linux abstract socket address (no file anywhere)."""

    node_id: str
    host: str
    tcp_port: int
    uds_path: str


@dataclasses.dataclass(frozen=True, slots=True)
class ChannelStats:
    """Counters of one channel end. frames and bytes count every data frame (SCHEMA, BATCH,
    END, ERROR; bytes are body bytes); rows count batch rows sent, or yielded to the
    consumer; spilled_* count frames a receiver wrote to its spill directory."""

    transport: str | None = None  # 'shm', 'tcp', or None before the sender connected
    frames: int = 0
    rows: int = 0
    bytes: int = 0
    spilled_frames: int = 0
    spilled_bytes: int = 0


def local_node_id() -> str:
    """Identity of this kernel and network namespace (hostname, boot id, netns inode)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        boot = "noboot"
    try:
        netns = os.stat("/proc/self/ns/net").st_ino
    except OSError:
        netns = 0
    return f"{socket.gethostname()}/{boot}/{netns}"

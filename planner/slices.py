"""Cut a distributed plan at its Motions into slices, and say which gang runs each.

Slice 0 is the top slice: it runs on the coordinator. Every Motion starts a slice below
it (its sending side, numbered by distribute.py); the Motion node itself is the receiving
end inside the parent slice. A gang is the set of processes running one slice.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from planner import plan as pl
from planner.locus import LocusKind


class Gang(enum.Enum):
    COORDINATOR = "coordinator"  # the top slice
    ALL = "all"                  # every segment
    ONE = "one"                  # a single segment (replicated or single-segment data)


@dataclass(frozen=True)
class Slice:
    id: int
    root: pl.Node                # the slice's plan (for slice 0, the whole top)
    motion: pl.Motion | None     # the Motion this slice sends into (None for slice 0)
    gang: Gang


def sender_gang(motion: pl.Motion) -> Gang:
    kind = motion.child.locus.kind if motion.child.locus is not None else LocusKind.GENERAL
    if kind in (LocusKind.REPLICATED, LocusKind.SINGLE_QE, LocusKind.GENERAL, LocusKind.ENTRY):
        return Gang.ONE
    return Gang.ALL


def receiver_gang(motion: pl.Motion) -> Gang:
    """Gathers end on the coordinator; Redistribute and Broadcast on every segment."""
    if motion.kind in (pl.MotionKind.GATHER, pl.MotionKind.GATHER_MERGE):
        return Gang.COORDINATOR
    return Gang.ALL


def slices(root: pl.Node) -> list[Slice]:
    """Every slice of the plan, the top slice first."""
    out = [Slice(0, root, None, Gang.COORDINATOR)]
    for node in pl.walk(root):
        if isinstance(node, pl.Motion):
            out.append(Slice(node.slice_id, node.child, node, sender_gang(node)))
    return out


def gang_size(gang: Gang, n_segments: int) -> int:
    return n_segments if gang is Gang.ALL else 1


def motions_of(node: pl.Node) -> list[pl.Motion]:
    """The Motions that are leaves of the slice rooted at `node` (its receiving ends)."""
    if isinstance(node, pl.Motion):
        return [node]
    return [m for c in node.children() for m in motions_of(c)]

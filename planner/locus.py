"""Locus: where the rows of a plan node live (after Greenplum/Cloudberry's CdbLocus).

- HASHED(keys):  each row lives on the segment its key columns hash to (one hash function,
                 motion/hashing.py). `keys` are output column positions of the node.
- STREWN:        rows are on segments, but on which is unknown (random distribution, or a
                 hashed relation after a projection dropped its keys).
- REPLICATED:    every segment holds a full copy.
- SINGLE_QE:     all rows on one segment.
- ENTRY:         the coordinator (the top slice runs here).
- GENERAL:       computable anywhere with the same result (constants, generate_series).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class LocusKind(enum.Enum):
    HASHED = "hashed"
    STREWN = "strewn"
    REPLICATED = "replicated"
    SINGLE_QE = "single"
    ENTRY = "entry"
    GENERAL = "general"


@dataclass(frozen=True, slots=True)
class Locus:
    kind: LocusKind
    keys: tuple[int, ...] = ()

    def __post_init__(self):
        if (self.kind is LocusKind.HASHED) != bool(self.keys):
            raise ValueError("a HASHED locus needs keys, and only a HASHED locus has keys")

    @property
    def is_partitioned(self) -> bool:
        """Rows are spread over the segments (each segment holds a part)."""
        return self.kind in (LocusKind.HASHED, LocusKind.STREWN)

    @property
    def on_segments(self) -> bool:
        """The node runs on the segments (in a slice dispatched to a gang)."""
        return self.kind in (LocusKind.HASHED, LocusKind.STREWN, LocusKind.REPLICATED,
                             LocusKind.SINGLE_QE)

    def hashed_on(self, cols: tuple[int, ...]) -> bool:
        """True when rows with equal values of `cols` are on one segment."""
        return self.kind is LocusKind.HASHED and set(self.keys) <= set(cols)

    def remap(self, mapping: dict[int, int]) -> "Locus":
        """The locus after a projection that moves column i to mapping[i] (or drops it)."""
        if self.kind is not LocusKind.HASHED:
            return self
        if all(k in mapping for k in self.keys):
            return Locus(LocusKind.HASHED, tuple(mapping[k] for k in self.keys))
        return STREWN

    def describe(self, names: list[str] | None = None) -> str:
        if self.kind is LocusKind.HASHED:
            cols = [names[k] if names else f"${k}" for k in self.keys]
            return f"hashed({', '.join(cols)})"
        return self.kind.value


STREWN = Locus(LocusKind.STREWN)
REPLICATED = Locus(LocusKind.REPLICATED)
SINGLE_QE = Locus(LocusKind.SINGLE_QE)
ENTRY = Locus(LocusKind.ENTRY)
GENERAL = Locus(LocusKind.GENERAL)


def hashed(*keys: int) -> Locus:
    return Locus(LocusKind.HASHED, tuple(keys))

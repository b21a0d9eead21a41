"""Locus: where the rows of a plan node live (after Greenplum/Cloudberry's CdbLocus).

- HASHED(keys):  each row lives on the segment its key columns hash to (one hash function,
                 motion/hashing.py) over `segments` buckets: the first `segments`
                 segments (a table not yet moved by an expansion hashes over fewer
                 segments than the cluster has, as Greenplum's numsegments). Two sides
                 are co-located only when hashed alike over as many segments.
                 `keys` are output column positions of the node;
                 `also` lists other columns that place the rows alike, as Greenplum's
                 distribution-key equivalence classes: after an inner join on a = b, rows
                 hashed on a are hashed on b too (a = b in every row, and equal values
                 of one type hash alike).
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
    # Other key tuples (each as long as `keys`) whose values equal `keys`' in every row.
    also: tuple[tuple[int, ...], ...] = ()
    segments: int = 0  # HASHED: the number of segments hashed over (jump-consistent buckets)

    def __post_init__(self):
        if (self.kind is LocusKind.HASHED) != bool(self.keys):
            raise ValueError("a HASHED locus needs keys, and only a HASHED locus has keys")
        if (self.kind is LocusKind.HASHED) != (self.segments > 0):
            raise ValueError("a HASHED locus hashes over a number of segments, and only it")
        if any(len(a) != len(self.keys) for a in self.also):
            raise ValueError("an equivalent key tuple must be as long as the keys")

    @property
    def is_partitioned(self) -> bool:
        """Rows are spread over the segments (each segment holds a part)."""
        return self.kind in (LocusKind.HASHED, LocusKind.STREWN)

    @property
    def on_segments(self) -> bool:
        """The node runs on the segments (in a slice dispatched to a gang)."""
        return self.kind in (LocusKind.HASHED, LocusKind.STREWN, LocusKind.REPLICATED,
                             LocusKind.SINGLE_QE)

    def key_sets(self) -> tuple[tuple[int, ...], ...]:
        """Every key tuple the rows are hashed on: `keys`, then the equivalent ones."""
        return (self.keys,) + self.also if self.kind is LocusKind.HASHED else ()

    def hashed_on(self, cols: tuple[int, ...]) -> bool:
        """True when rows with equal values of `cols` are on one segment."""
        return any(set(keys) <= set(cols) for keys in self.key_sets())

    def remap(self, mapping: dict[int, int]) -> "Locus":
        """The locus after a projection that moves column i to mapping[i] (or drops it)."""
        if self.kind is not LocusKind.HASHED:
            return self
        return hashed_on_any([tuple(mapping[k] for k in keys) for keys in self.key_sets()
                              if all(k in mapping for k in keys)], self.segments)

    def hashed_alike(self, other: "Locus") -> bool:
        """Both HASHED over the same number of segments (so equal keys meet)."""
        return self.kind is other.kind is LocusKind.HASHED and self.segments == other.segments

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


def hashed(keys: tuple[int, ...], segments: int) -> Locus:
    """Rows hashed on `keys` over the first `segments` segments."""
    return Locus(LocusKind.HASHED, tuple(keys), segments=segments)


def hashed_on_any(key_sets, segments: int) -> Locus:
    """HASHED (over `segments` segments) on the first of `key_sets` with the rest as
    equivalents (duplicates dropped); STREWN when there is none."""
    unique = list(dict.fromkeys(tuple(k) for k in key_sets))
    if not unique:
        return STREWN
    return Locus(LocusKind.HASHED, unique[0], tuple(unique[1:]), segments)

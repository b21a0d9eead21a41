"""The NULL rules of a null-aware anti join (`x NOT IN (SELECT y ...)`).

SQL: `x NOT IN (S)` is true only when `x = s` is false for every row s of S (the build
rows for which the residual, the subquery's correlated condition, is true); a NULL there
makes the whole NOT IN NULL, and the row is not returned. Row-wise `x = s` over a
composite key is false as soon as one column pair is non-NULL and different, NULL when no
pair differs but one is NULL. So a probe row is rejected by a key match (as in an anti
join) and also by any pair in which a NULL stands in for every column that differs.

Without a residual on a one-column key this collapses to the familiar rules, decided
without looking at pairs: a NULL build key rejects every probe row (the join returns
nothing, before reading the probe side), and a NULL probe key is rejected unless the build
side is empty. Otherwise the pairs that involve a NULL (every probe row against the build
rows with a NULL key, probe rows with a NULL key against the rest) are checked column by
column, in chunks; their number is the product of those rows, which is small in the
usual case of few NULLs.
"""

from __future__ import annotations

from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

from segment.operators import base
from segment.operators import join_table


class NullAware:
    def __init__(self, table: join_table.JoinTable, n_keys: int, has_residual: bool):
        self.table = table
        self.simple = n_keys == 1 and not has_residual
        self.residual = has_residual
        self.active = n_keys > 0 and table.n > 0  # else it is a plain anti join
        build_null = table.keys.null_rows() if self.active else np.zeros(0, np.bool_)
        self.build_null = np.flatnonzero(build_null)
        self.build_rest = np.flatnonzero(~build_null)
        # A build row whose key is NULL in every column is not-false against any probe row.
        all_null = self.active and not has_residual and len(self.build_null) and bool(
            np.logical_and.reduce([c.null[self.build_null] if c.null is not None
                                   else np.zeros(len(self.build_null), np.bool_)
                                   for c in table.keys.columns]).any())
        self.rejects_all = bool(self.active and not has_residual
                                and (len(self.build_null) > 0 and (n_keys == 1 or all_null)))

    def rejected(self, ctx: base.ExecContext, batch: pa.RecordBatch, keys: join_table.Keys,
                 matched: np.ndarray,
                 qualifies: Callable[..., np.ndarray]) -> np.ndarray:
        """The probe rows NOT IN rejects: matched ones and those a NULL makes unknown."""
        if not self.active:
            return matched
        probe_null = keys.null_rows()
        if self.simple:
            return matched | probe_null
        out = matched.copy()
        open_rows = np.flatnonzero(~out)
        open_null = open_rows[probe_null[open_rows]]
        for rows, build in ((open_rows, self.build_null), (open_null, self.build_rest)):
            for pi, bi in cross(rows, build, base.BATCH_ROWS):
                ctx.check_cancel()
                ok = self._not_false(keys, pi, bi)
                pi, bi = pi[ok], bi[ok]
                if self.residual and len(pi):
                    pi = pi[qualifies(ctx, batch, self.table.batch, pi, bi)]
                out[pi] = True
        return out

    def _not_false(self, keys: join_table.Keys, pi: np.ndarray, bi: np.ndarray) -> np.ndarray:
        """Where no key column pair is both non-NULL and different."""
        ok = np.ones(len(pi), np.bool_)
        for p, b in zip(keys.columns, self.table.keys.columns):
            same = p.codes[pi] == b.codes[bi]
            if p.found is not None:
                same &= p.found[pi]
            if p.null is not None:
                same |= p.null[pi]
            if b.null is not None:
                same |= b.null[bi]
            ok &= same
        return ok


def cross(probe_rows: np.ndarray, build_rows: np.ndarray,
          cap: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every (probe row, build row) pair of the two index sets, at most cap at a time."""
    nb = len(build_rows)
    if not len(probe_rows) or not nb:
        return
    if nb <= cap:
        per = max(1, cap // nb)
        for s in range(0, len(probe_rows), per):
            p = probe_rows[s:s + per]
            yield np.repeat(p, nb), np.tile(build_rows, len(p))
        return
    for p in probe_rows:
        for s in range(0, nb, cap):
            b = build_rows[s:s + cap]
            yield np.full(len(b), p, np.int64), b

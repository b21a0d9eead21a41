"""The planner's row and column statistics of a table, kept in the catalog: the estimate
a load adds to and ANALYZE's figures (`analyze_table`), both under the catalog's
statistics lock."""

from __future__ import annotations

import contextlib
from dataclasses import replace

import numpy as np

from planner import errors
from planner.schema import ColumnStats, DistKind, TableDef, TableStats
from segment.common_values import COMMON_MAX
from segment.messages import ColumnSample, ShardSample
from segment.sketch import KMV_SIZE


@contextlib.contextmanager
def catalog_lock(session):
    """The engine's statistics lock, waited for at most lock_timeout (0: as long as it
    takes), then 55P03 as PostgreSQL says it."""
    ms = session.settings.milliseconds("lock_timeout")
    if not session.engine.ddl_lock.acquire(timeout=ms / 1000.0 if ms > 0 else -1):
        raise errors.LockNotAvailable("canceling statement due to lock timeout")
    try:
        yield
    finally:
        session.engine.ddl_lock.release()


def add_row_estimate(session, table: TableDef, added: int) -> None:
    set_rows(session, table, lambda old: max(0, old + added))  # deletes subtract


def set_rows(session, table: TableDef, new_rows, columns=None) -> None:
    txn = session.txn
    mine = txn.created.get(table.key) if txn is not None else None
    if mine is not None and mine.id == table.id:
        # A table this transaction created: its statistics commit (or vanish) with it.
        stats = TableStats(new_rows(mine.stats.rows),
                           mine.stats.columns if columns is None else columns)
        txn.replace_created(replace(mine, stats=stats))
        return
    with catalog_lock(session):
        current = session.engine.catalog.table_by_id(table.id)
        if current is not None and current.id == table.id:
            stats = TableStats(new_rows(current.stats.rows),
                               current.stats.columns if columns is None else columns)
            session.engine.catalog.update_table(replace(current, stats=stats))


def has_statistics(stats: TableStats) -> bool:
    """Whether ANALYZE has described the table's rows: never analyzed, or analyzed while
    empty, is no statistics (Greenplum's relpages = 0 and reltuples < 1)."""
    return bool(stats.columns) and stats.rows > 0


def analyze_table(session, table: TableDef) -> None:
    """ANALYZE one table: rows, and per column null fraction, distinct estimate and
    bounds, merged from every segment's sample of its committed rows."""
    parts: list[ShardSample] = session.engine.cluster.call_all("analyze", table)
    if table.policy.kind is DistKind.REPLICATED:
        parts = parts[:1]  # every segment holds all the rows
    rows = sum(p.rows for p in parts)
    columns = {}
    for c in table.columns:
        samples = [p.columns[c.name] for p in parts]
        nulls = sum(s.nulls for s in samples)
        sketch = np.unique(np.concatenate([s.kmv for s in samples]))
        lows = [s.min for s in samples if s.min is not None]
        highs = [s.max for s in samples if s.max is not None]
        distinct = kmv_estimate(sketch)
        # min/max are physical values (scaled integers, days, microseconds), as in chunks.
        columns[c.name] = ColumnStats(null_frac=nulls / rows if rows else 0.0,
                                      distinct=distinct,
                                      min=min(lows) if lows else None,
                                      max=max(highs) if highs else None,
                                      common=common_values(
                                          samples, [p.rows for p in parts], distinct))
    set_rows(session, table, lambda _old: rows, columns)


def common_values(samples: list[ColumnSample], rows: list[int],
                  distinct: float) -> tuple[tuple[object, float], ...]:
    """The most common values of a column and the fraction of all rows each holds, from
    each segment's sample (`rows`: each segment's rows): a value's fraction is its share
    of every segment's sample weighted by that segment's rows. As PostgreSQL's
    compute_distinct_stats, a value is kept when its sampled count is at least 1.25 times
    the average count of a value in the sample (and at least 2), at most COMMON_MAX of
    them, most common first; none where values are about equally frequent."""
    total = sum(rows)
    sampled = sum(s.sampled for s in samples)
    if not total or not sampled:
        return ()
    counts: dict[object, int] = {}
    shares: dict[object, float] = {}
    for s, r in zip(samples, rows):
        for value, count in s.common:
            counts[value] = counts.get(value, 0) + count
            shares[value] = shares.get(value, 0.0) + count / s.sampled * r / total
    non_null = sampled - sum(round(s.nulls * s.sampled / r) for s, r in zip(samples, rows)
                             if r)
    average = non_null / max(1.0, min(distinct, non_null))
    least = max(2.0, 1.25 * average)
    kept = sorted((v for v in counts if counts[v] >= least), key=lambda v: -shares[v])
    return tuple((v, shares[v]) for v in kept[:COMMON_MAX])


def kmv_estimate(sketch: np.ndarray) -> float:
    """Distinct values from the k smallest distinct 64-bit hashes (k-minimum values)."""
    if len(sketch) < KMV_SIZE:
        return float(len(sketch))
    kth = float(sketch[KMV_SIZE - 1]) / 2.0**64
    return (KMV_SIZE - 1) / kth

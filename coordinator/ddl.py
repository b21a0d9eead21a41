"""DDL: CREATE TABLE [AS], DROP TABLE, TRUNCATE, ANALYZE.

Catalog changes are not transactional yet: CREATE and DROP take effect at once, also
inside an explicit transaction block (rows written by the block still follow it).
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

import numpy as np

from coordinator import load
from coordinator.pgwire.boundary import QueryResult, ResultKind
from planner import errors, statements, types
from planner.schema import ColumnDef, ColumnStats, TableDef, TableStats
from sqlglot import exp


@contextlib.contextmanager
def catalog_lock(session):
    """The engine's DDL lock, waited for at most lock_timeout (0: as long as it takes),
    then 55P03 as PostgreSQL says it."""
    ms = session.settings.milliseconds("lock_timeout")
    if not session.engine.ddl_lock.acquire(timeout=ms / 1000.0 if ms > 0 else -1):
        raise errors.LockNotAvailable("canceling statement due to lock timeout")
    try:
        yield
    finally:
        session.engine.ddl_lock.release()


def _command(tag: str) -> QueryResult:
    return QueryResult(ResultKind.COMMAND, tag=lambda: tag)


def _table_name(tree) -> str:
    t = tree.find(exp.Table)
    return t.name if t.this.quoted else t.name.lower()


def new_table(session, name: str, columns: list[ColumnDef], policy_clause) -> TableDef:
    if not columns:
        raise errors.FeatureNotSupported("tables without columns")
    policy = statements.dist_policy(policy_clause, columns)
    catalog = session.engine.catalog
    table = TableDef(catalog.next_id("table"), name, tuple(columns), policy)
    with catalog_lock(session):
        catalog.add_table(table)
        try:
            session.engine.cluster.call_all("create_table", table)
        except BaseException:
            catalog.drop_table(name)
            raise
    return table


def create_table(session, st) -> QueryResult:
    name = _table_name(st.tree)
    if session.engine.catalog.get_table(name) is not None:
        if st.if_not_exists:
            return _command("CREATE TABLE")
        raise errors.DuplicateTable(f'relation "{name}" already exists')
    new_table(session, name, st.columns, st.policy_clause)
    return _command("CREATE TABLE")


def create_table_as(session, st, tree, txn, cancel) -> QueryResult:
    from coordinator import query

    name = _table_name(tree.this)
    if session.engine.catalog.get_table(name) is not None:
        if st.if_not_exists:
            return _command("SELECT 0")
        raise errors.DuplicateTable(f'relation "{name}" already exists')
    root, names = query.plan(session, tree.expression)
    aliases = [c.name for c in st.columns]
    if len(aliases) > len(names):
        raise errors.SyntaxError_("CREATE TABLE AS specifies too many column names")
    cols = []
    for i, (n, f) in enumerate(zip(names, root.fields)):
        t = types.TEXT if f.type.kind is types.Kind.UNKNOWN else f.type
        cols.append(ColumnDef(aliases[i] if i < len(aliases) else n, t))
    table = new_table(session, name, cols, st.policy_clause)
    try:
        rows = load.insert_plan(session, table, tree.expression, None, txn, cancel)
        load.note_rows(session, table, rows)
    except BaseException:
        drop(session, table)
        raise
    return _command(f"SELECT {rows}")


def drop(session, table: TableDef) -> None:
    with catalog_lock(session):
        session.engine.catalog.drop_table(table.name)
        session.engine.cluster.call_all("drop_table", table.id)


def drop_table(session, st) -> QueryResult:
    tables = []
    for t in st.tree.find_all(exp.Table):
        name = t.name if t.this.quoted else t.name.lower()
        table = session.engine.catalog.get_table(name)
        if table is None:
            if st.if_not_exists:
                continue
            raise errors.UndefinedTable(f'table "{name}" does not exist')
        tables.append(table)
    for table in tables:
        drop(session, table)
    return _command("DROP TABLE")


def truncate(session, tree, txn) -> QueryResult:
    for t in tree.find_all(exp.Table):
        name = t.name.lower()
        table = session.engine.catalog.get_table(name)
        if table is None:
            raise errors.UndefinedTable(f'relation "{name}" does not exist')
        txn.call_all("truncate", txn.id, table.id)
    return _command("TRUNCATE TABLE")


def analyze(session, st) -> QueryResult:
    """ANALYZE [table, ...]: rows, null fraction and distinct estimates per column."""
    catalog = session.engine.catalog
    names = [n for n in st.name.split(",") if n] or [t.name for t in catalog.tables()]
    for name in names:
        table = catalog.get_table(name)
        if table is None:
            raise errors.UndefinedTable(f'relation "{name}" does not exist')
        analyze_table(session, table)
    return _command("ANALYZE")


def analyze_table(session, table: TableDef) -> None:
    parts = session.engine.cluster.call_all("analyze", table)
    if table.policy.kind.name == "REPLICATED":
        parts = parts[:1]
    rows = sum(p["rows"] for p in parts)
    columns = {}
    for c in table.columns:
        nulls = sum(p["columns"][c.name]["nulls"] for p in parts)
        sketch = np.unique(np.concatenate([p["columns"][c.name]["kmv"] for p in parts]))
        lows = [p["columns"][c.name]["min"] for p in parts
                if p["columns"][c.name]["min"] is not None]
        highs = [p["columns"][c.name]["max"] for p in parts
                 if p["columns"][c.name]["max"] is not None]
        # min/max are physical values (scaled integers, days, microseconds), as in chunks.
        columns[c.name] = ColumnStats(null_frac=nulls / rows if rows else 0.0,
                                      distinct=kmv_estimate(sketch),
                                      min=min(lows) if lows else None,
                                      max=max(highs) if highs else None)
    _set_rows(session, table, lambda _old: rows, columns)


def kmv_estimate(sketch: np.ndarray) -> float:
    """Distinct values from the k smallest distinct 64-bit hashes (k-minimum values)."""
    from segment.worker import KMV_SIZE

    if len(sketch) < KMV_SIZE:
        return float(len(sketch))
    kth = float(sketch[KMV_SIZE - 1]) / 2.0**64
    return (KMV_SIZE - 1) / kth


def add_row_estimate(session, table: TableDef, added: int) -> None:
    _set_rows(session, table, lambda old: old + added)


def _set_rows(session, table: TableDef, new_rows, columns=None) -> None:
    with catalog_lock(session):
        current = session.engine.catalog.get_table(table.name)
        if current is not None and current.id == table.id:
            stats = TableStats(new_rows(current.stats.rows),
                               current.stats.columns if columns is None else columns)
            session.engine.catalog.update_table(replace(current, stats=stats))

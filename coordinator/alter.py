"""ALTER TABLE: lock the table, work out the new definition (planner/alter_table.py),
rewrite its chunks on every segment when its columns change, and keep the new definition
in the transaction (it replaces the old one at COMMIT, or vanishes on ROLLBACK, as CREATE
and DROP TABLE do).

SET DISTRIBUTED BY (...) | RANDOMLY | REPLICATED (Greenplum's) moves the rows into new
storage of the new distribution instead (`_redistribute`).

The rewrite is a write of the transaction: each segment writes the table's live rows in
the new layout as new chunks, which replace the old ones and the table's schema at the
commit (ShardStore.rewrite). Other transactions' inserts into the table that have not
committed by then fail with 40001 (PostgreSQL's ALTER TABLE would make them wait); queries
keep reading the committed table meanwhile.
"""

from __future__ import annotations

import datetime

from sqlglot import exp

from dataclasses import replace

from coordinator import ddl, load
from coordinator.drop import dependents
from coordinator.pgwire.boundary import QueryResult, ResultKind
from coordinator.transaction import relation_tag
from planner import alter_table, errors, statements, unique_keys
from planner import plan as pl
from planner.schema import TableDef, ViewDef, relation_name


def alter(session, st, txn, cancel) -> QueryResult:
    tree = st.tree
    view = session.catalog_view(txn)
    rel = relation_name(tree.this)
    if view.lookup(rel) is None:
        if tree.args.get("exists"):  # PostgreSQL: NOTICE relation ... does not exist, skipping
            return QueryResult(ResultKind.COMMAND, tag=lambda: "ALTER TABLE")
        view.open(rel)  # 42P01 / 3F000 as PostgreSQL says them
    table = view.open(rel)
    session.check_writable("ALTER TABLE")
    ddl.lock_table(session, txn, view, table)
    table = view.visible(table.namespace, table.name)
    if table is None:
        raise errors.UndefinedTable(f'relation "{rel.name}" does not exist')
    if isinstance(table, ViewDef):
        raise errors.FeatureNotSupported(f'ALTER TABLE of view "{table.name}" is not supported')
    if st.policy_clause is not None:
        _redistribute(session, table, st.policy_clause, txn, cancel)
        return QueryResult(ResultKind.COMMAND, tag=lambda: "ALTER TABLE")
    owned = {q.owner.column for q in view.sequences()
             if q.owner is not None and q.owner.table_id == table.id}
    change = alter_table.plan(table, tree, lambda column: column in owned)
    _check_views(view, change)
    if change.rename is not None:
        ddl.lock_name(session, txn, relation_tag(table.namespace,
                                                 view.schema_name(table.namespace),
                                                 change.rename))
        if change.rename != table.name and \
                view.relation_taken(table.namespace, change.rename):
            raise errors.DuplicateTable(f'relation "{change.rename}" already exists')
    if change.rewrites:
        txn.begin_write()
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        try:
            txn.call_all("rewrite_table", txn.id, change.old, change.new,
                         tuple(change.exprs), now)
        except errors.QueryError as e:
            raise _not_null_message(e, change) from None
    txn.replace_table(change.old, change.new)
    return QueryResult(ResultKind.COMMAND, tag=lambda: "ALTER TABLE")


def _check_views(view, change: alter_table.Change) -> None:
    """Views read their tables by name and columns: with views over the table, only
    changes that keep its name and its columns' names, types and order (ADD COLUMN, SET /
    DROP NOT NULL) are made; others are refused rather than leaving a view reading
    something else. (The name lock this transaction holds makes every view over the
    table visible: creating one locks the table's name too.)"""
    readers = [v.name for v, on in dependents(view.views(), [change.old])
               if on.id == change.old.id]
    if not readers:
        return
    old, new = change.old, change.new
    kept = new.name == old.name and len(new.columns) >= len(old.columns) and all(
        (a.name, a.type) == (b.name, b.type) for a, b in zip(old.columns, new.columns))
    if not kept:
        raise errors.FeatureNotSupported(
            f'cannot alter table "{old.name}" so: views read it ({", ".join(readers)})',
            detail="Views read their tables' columns by name; only ADD COLUMN and SET / DROP "
                   "NOT NULL leave them reading the same columns.",
            hint="Drop the views, alter the table, and create the views again.")


def _not_null_message(e: errors.QueryError, change: alter_table.Change) -> errors.QueryError:
    """A NULL where the new table has NOT NULL: PostgreSQL's words for ALTER TABLE."""
    if getattr(e, "sqlstate", None) != "23502":
        return e
    for name in change.not_null_checks:
        if f'"{name}"' in e.message:
            return errors.QueryError(
                f'column "{name}" of relation "{change.new.name}" contains null values',
                "23502")
    return e


def _redistribute(session, table: TableDef, clause, txn, cancel) -> None:
    """Greenplum's SET DISTRIBUTED: the rows move into new storage distributed the new
    way (a Redistribute, or a Broadcast for REPLICATED), which replaces the old storage at
    the commit (the old table id is dropped, its storage removed then)."""
    policy = statements.dist_policy(clause, list(table.columns))
    unique_keys.check_policy(table.name, policy, table.unique, list(table.columns))
    new = replace(table, id=session.engine.catalog.next_id("table"), policy=policy,
                  numsegments=session.engine.cluster.n_segments)  # onto every segment
    txn.drop_table(table)
    txn.create_table(new)
    scan = pl.Scan(table=table, columns=tuple(range(len(table.columns))),
                   fields=tuple(pl.Field(c.name, c.type) for c in table.columns))
    load.write_rows(session, new, scan, txn, cancel)

"""Writes: INSERT ... VALUES/SELECT, CREATE TABLE AS's rows, COPY FROM/TO.

Rows computed on the coordinator (VALUES, results gathered from segments, COPY FROM STDIN)
are routed to their segments by coordinator/writer.py. Rows every segment can compute by
itself (generate_series, constants, a server-side file) are computed on every segment,
and each keeps its own share: no rows cross the network.
"""

from __future__ import annotations


from dataclasses import replace

from sqlglot import exp

import datetime as dt

from coordinator import autostats, compaction, query
from coordinator import defaults as defaults_of
from coordinator.pgwire.boundary import CopyIn, CopyOut, QueryResult, ResultColumn, ResultKind
from coordinator.transaction import placement_tag, relation_tag
from coordinator.writer import TableWriter
from planner import (coercion, copy_statement, distribute, errors, functions, modify, rules,
                     sequence_calls, session_info, statements, types)
from planner import expr as ex
from planner import plan as pl
from planner.copy_options import CopyFormat, parse_copy_options
from planner.bind import QueryBinder
from planner.locus import GENERAL
from planner.schema import DistKind, RelationName, TableDef, ViewDef
from planner.system_tables import resolve_relation
from segment.operators import base as ops
from segment import column_defaults
from segment.ingest import convert, copy_binary, copy_text
from planner.scope import EMPTY
from planner.bind_expr import ExprBinder
from coordinator.dispatch import new_query_id
from coordinator import copy_out

# The formats COPY speaks over the wire (FROM STDIN, TO STDOUT); Parquet is for files.
_WIRE_FORMATS = (CopyFormat.TEXT, CopyFormat.CSV, CopyFormat.BINARY)


def _table(session, t: exp.Table) -> TableDef:
    """INSERT's target through search_path (42P01 as PostgreSQL's parserOpenTable). A
    view is refused: PostgreSQL writes through simple views (auto-updatable ones), raympp
    does not."""
    found = resolve_relation(session.catalog_view(session.txn), t)
    if isinstance(found, ViewDef):
        raise errors.FeatureNotSupported(
            f'cannot insert into view "{found.name}"',
            detail="Views are not updatable in raympp: insert into the tables it reads.")
    return found


def target(session, this) -> tuple[TableDef, list[int]]:
    """The table and the positions of the listed target columns (all when none listed)."""
    if isinstance(this, exp.Schema):
        table = _table(session, this.this)
        cols = []
        for ident in this.expressions:
            name = ident.name if ident.quoted else ident.name.lower()
            i = table.column_index(name)
            if i is None:
                raise errors.UndefinedColumn(
                    f'column "{name}" of relation "{table.name}" does not exist')
            cols.append(i)
        return table, cols
    table = _table(session, this)
    return table, list(range(len(table.columns)))


def serialize_writers(session, txn, table: TableDef) -> None:
    """Locks an INSERT or COPY takes until its transaction ends: the table's placement,
    shared (an expansion that moves the table waits for it, coordinator/expansion.py);
    and for a table with PRIMARY KEY or UNIQUE constraints its name, so that it takes one
    writer at a time: each segment checks a write's keys against the rows its
    transaction sees, which must then include every committed write."""
    view = session.catalog_view(txn)
    ms = session.settings.milliseconds("lock_timeout")
    wait = ms / 1000.0 if ms > 0 else None
    schema = view.schema_name(table.namespace)
    # The name first, as an expansion takes them: neither waits for the other in a cycle.
    if table.unique:
        txn.lock(relation_tag(table.namespace, schema, table.name), wait, session.cancel.event)
    txn.lock(placement_tag(table.id, schema, table.name), wait, session.cancel.event,
             shared=True)


def insert(session, tree: exp.Insert, txn, cancel, overriding: str | None = None
           ) -> QueryResult:
    """INSERT [OVERRIDING {SYSTEM | USER} VALUE] ... VALUES / SELECT / DEFAULT VALUES."""
    table, cols = target(session, tree.this)
    serialize_writers(session, txn, table)
    returning = bind_returning(session, tree, txn) if tree.args.get("returning") else None
    written: list | None = [] if returning is not None else None
    source = tree.expression
    if tree.args.get("default"):
        source, cols = exp.Values(expressions=[exp.Tuple(expressions=[])]), []
    rows = insert_plan(session, table, source, cols, txn, cancel, command="INSERT",
                       written=written, overriding=overriding)
    note_rows(session, txn, table, rows)
    if returning is None:
        return QueryResult(ResultKind.COMMAND, tag=lambda: f"INSERT 0 {rows}")
    exprs, columns = returning
    out = [_returned(exprs, columns, b, now) for b, now in written]
    return QueryResult(ResultKind.ROWS, tag=lambda: f"INSERT 0 {rows}", columns=columns,
                       batches=iter(out))


# --- INSERT ... RETURNING ------------------------------------------------------------------
def bind_returning(session, tree: exp.Insert, txn, params=None):
    """(expressions over the target table's columns, result columns) of RETURNING.
    Expressions of the inserted row and uncorrelated scalar subqueries; aggregates are
    42803 as in PostgreSQL; anything that would read other rows per row (a correlated
    subquery) is refused (0A000)."""
    # Uncorrelated scalar subqueries run once, before the rows are written (InitPlans):
    # they see the table without the new rows, as PostgreSQL's snapshot does.
    runner = None if params is not None else (lambda n: query.run_initplan(session, n))
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    exprs, names = modify.returning_of(session.catalog_view(txn), target,
                                       tree.args["returning"].expressions, params, runner)
    return exprs, [ResultColumn(n, e.type if e.type.kind is not types.Kind.UNKNOWN
                                else types.TEXT) for n, e in zip(names, exprs)]


def returning_columns(session, tree: exp.Insert, ptypes) -> list:
    """RETURNING's result columns, for Describe."""
    return bind_returning(session, tree, session.txn, list(ptypes))[1]


def _returned(exprs, columns, batch, now):
    """RETURNING's rows for one batch of inserted rows (in the table's column order)."""
    import pyarrow as pa

    schema = ops.schema_of(tuple(pl.Field(f"c{i}", c.type) for i, c in enumerate(columns)))
    if not exprs:
        return ops.rows_without_columns(batch.num_rows)
    arrays = ops.evaluate_columns(exprs, batch, now)
    return ops.conform(pa.RecordBatch.from_arrays(arrays, names=schema.names), schema)


def note_rows(session, txn, table: TableDef, rows: int, ctas: bool = False) -> None:
    """A statement of `txn` loaded `rows` rows into `table`: its row estimate grows, and
    its commit may ANALYZE the table (coordinator/autostats.py) and merge its small chunks
    (coordinator/compaction.py)."""
    autostats.note_load(session, txn, table, rows, ctas)
    if rows:
        compaction.after_commit(session, txn, table)


def insert_plan(session, table: TableDef, source, cols, txn, cancel,
                command: str | None = None, written: list | None = None,
                overriding: str | None = None) -> int:
    """Write the rows of `source` into `table`; `command` (INSERT) names the statement for
    the read-only check, made once the statement is planned, as PostgreSQL's executor
    makes it. With `written` (INSERT ... RETURNING) every row goes through the coordinator,
    which appends (batch in the table's column order, the statement's now()) for each
    batch it writes: exactly the rows inserted."""
    cols = list(range(len(table.columns))) if cols is None else cols
    out_fields = tuple(pl.Field(c.name, c.type) for c in table.columns)
    # CREATE TABLE AS fills a new table (no defaults); INSERT binds the target's defaults.
    view = session.catalog_view(txn)
    defaults = defaults_of.column_defaults(view, table) if command is not None \
        else [None] * len(table.columns)
    if isinstance(source, exp.Values):
        node = _values_for(table, cols, source, out_fields, defaults, overriding)
    else:
        # Uncorrelated scalar subqueries and recursive CTEs run first (InitPlans), as a
        # query's do: bound without the runner they read as typed NULLs and no rows.
        bq = QueryBinder(view, run_plan=lambda node: query.run_initplan(session, node)) \
            .bind(source)
        fields = bq.node.fields
        if len(fields) > len(cols):
            raise errors.SyntaxError_("INSERT has more expressions than target columns")
        exprs = []
        for i, c in enumerate(table.columns):
            if i in cols and cols.index(i) < len(fields) \
                    and not defaults_of.user_value_ignored(table, i, overriding):
                defaults_of.refuse_explicit(table, i, overriding)
                j = cols.index(i)
                ref = ex.ColumnRef(j, fields[j].type, fields[j].name)
                exprs.append(functions.bind_assign(_unknown_literal(bq.node, j) or ref,
                                                   c.type, c.name))
            else:
                exprs.append(_default(defaults[i], c))
        node = pl.Project(bq.node, tuple(exprs), out_fields)
    if command is not None:
        session.check_writable(command)
    return write_rows(session, table, node, txn, cancel, written)


def write_rows(session, table: TableDef, node: pl.Node, txn, cancel,
               written: list | None = None) -> int:
    """Write the rows of plan `node` (in `table`'s column order) into `table`: on the
    segments where they start when they can, else through the coordinator's writer."""
    node = rules.rewrite(node)
    n = session.engine.cluster.n_segments
    root = distribute.distribute(node, n)
    sequence_calls.check_placement(root)
    txn.begin_write()
    # Sequence functions run on the coordinator only: such rows go through its writer.
    coordinator = sequence_calls.in_plan(root)
    if written is None and not coordinator and _computable_everywhere(root):
        return _insert_on_segments(session, table, root, txn)
    on_segments = distribute.distribute_insert(node, table, n) \
        if written is None and not coordinator and _reads_tables(root) else None
    if on_segments is not None:
        qrun = query.run(session, on_segments, txn, cancel)
        counts = [c for b in qrun.batches() for c in b.column(0).to_pylist()]
        return counts[0] if table.policy.kind is DistKind.REPLICATED and counts else sum(counts)
    writer = TableWriter(session.engine.cluster, txn, table)
    qrun = query.run(session, root, txn, cancel)
    if written is not None:
        # RETURNING keeps every row anyway: read them all before the first write, so a
        # source that reads the target sees none of the new rows.
        written.extend((b, qrun.now) for b in qrun.batches() if b.num_rows)
        for batch, _now in written:
            writer.write(batch)
        return writer.close()
    for batch in qrun.batches():
        writer.write(batch)
    rows = writer.close()
    return rows


def _unknown_literal(node: pl.Node, j: int) -> ex.Expr | None:
    """A quoted constant that the SELECT of INSERT ... SELECT outputs as column `j`: it
    takes the target column's type, as PostgreSQL resolves an unknown-typed literal in
    the target list (`SELECT g, '2030-01-02'` into a date column)."""
    if isinstance(node, pl.Project) and coercion.is_unknown(node.exprs[j]):
        return node.exprs[j]
    return None


def _default(default: ex.Expr | None, c) -> ex.Expr:
    return default if default is not None else ex.Literal(None, c.type)


def _is_default(item: exp.Expression) -> bool:
    """VALUES (DEFAULT, ...): the keyword, not a column called default."""
    return isinstance(item, exp.Var) and item.name.upper() == "DEFAULT"


def _values_for(table: TableDef, cols: list[int], values: exp.Values, fields,
                defaults: list, overriding: str | None) -> pl.Values:
    """INSERT ... VALUES: each value is assigned to its column's type directly, so quoted
    literals take the column's type as PostgreSQL's unknown-typed literals do; DEFAULT
    and the columns not listed take the column's default."""
    binder = ExprBinder(EMPTY)
    rows = []
    for tup in values.expressions:
        items = list(tup.expressions)
        if len(items) > len(cols):
            raise errors.SyntaxError_("INSERT has more expressions than target columns")
        row = []
        for i, c in enumerate(table.columns):
            if i in cols and cols.index(i) < len(items) \
                    and not _is_default(items[cols.index(i)]) \
                    and not defaults_of.user_value_ignored(table, i, overriding):
                defaults_of.refuse_explicit(table, i, overriding)
                e = functions.fold_constants(binder.bind(items[cols.index(i)]))
                row.append(functions.bind_assign(e, c.type, c.name))
            else:
                row.append(_default(defaults[i], c))
        rows.append(tuple(row))
    return pl.Values(tuple(rows), fields)


def _reads_tables(root: pl.Node) -> bool:
    """Rows that start on the segments (tables, table functions) go to their segments by
    a Motion rather than through the coordinator."""
    return any(isinstance(n, (pl.Scan, pl.StatsScan, pl.TableFunction)) for n in pl.walk(root))


def _computable_everywhere(root: pl.Node) -> bool:
    """A plan reading no table whose work is worth doing on the segments (a big series)."""
    nodes = list(pl.walk(root))
    return not any(isinstance(n, (pl.Scan, pl.StatsScan)) for n in nodes) and any(
        isinstance(n, pl.GenerateSeries) and n.locus is not None and n.locus.is_partitioned
        for n in nodes)


def _insert_on_segments(session, table: TableDef, root: pl.Node, txn) -> int:
    node = root.child if isinstance(root, pl.Motion) else root
    if table.policy.kind is not DistKind.RANDOM:
        # Each segment must see every row to pick its own: compute the whole series.
        node = _unsplit(node)
    counts = txn.call_all("insert_select", new_query_id(), node, txn.id, table,
                          session.engine.cluster.n_segments)
    return counts[0] if table.policy.kind is DistKind.REPLICATED else sum(counts)


def _unsplit(node: pl.Node) -> pl.Node:
    return pl.transform(node, lambda n: replace(n, locus=GENERAL)
                        if isinstance(n, pl.GenerateSeries) else n)


# --- COPY --------------------------------------------------------------------------------
def copy(session, spec: copy_statement.CopySpec, txn, cancel) -> QueryResult:
    opts = parse_copy_options(
        {k: ("true" if v is None else v) for k, v in spec.options.items()})
    zone = session.time_zone()
    if not zone.is_utc:
        opts = replace(opts, time_zone=zone.spec)
    if session.date_order() != "mdy":
        opts = replace(opts, date_order=session.date_order())
    fmt = opts.format if opts.format in _WIRE_FORMATS else None
    view = session.catalog_view(txn)
    rel = RelationName(spec.table, spec.schema, spec.catalog) if spec.table is not None else None
    if spec.is_from:
        table = view.open(rel)  # 3F000 / 42P01 as PostgreSQL's COPY says them
        if isinstance(table, ViewDef):
            raise errors.QueryError(f'cannot copy to view "{table.name}"', "42809")
        session.check_writable("COPY FROM")
        positions = _copy_columns(table, spec.columns)
        serialize_writers(session, txn, table)
        defaults = defaults_of.column_defaults(view, table)
        left_out = [i for i, d in enumerate(defaults) if d is not None and i not in positions]
        txn.begin_write()
        if spec.to_std:
            if fmt is None:
                raise errors.FeatureNotSupported(f"COPY FROM STDIN in format {opts.format.value}")
            return _copy_from_stdin(session, table, positions, fmt, opts, txn,
                                    defaults if left_out else None)
        calls = [i for i in left_out if ex.calls_sequence(defaults[i])]
        if calls:
            # The segments read the file: they cannot reach the coordinator's counters.
            raise errors.FeatureNotSupported(
                "COPY FROM a server file that leaves out a column whose default calls a "
                f'sequence ("{table.columns[calls[0]].name}"): use COPY FROM STDIN')
        return _copy_from_file(session, table, positions, spec.target, opts, txn,
                               defaults if left_out else None)
    if not spec.to_std:
        raise errors.FeatureNotSupported("COPY TO a server file (use COPY TO STDOUT)")
    if fmt is None:
        raise errors.FeatureNotSupported(f"COPY TO STDOUT in format {opts.format.value}")
    if spec.query is not None:
        source = statements.parse_one(spec.query)
    else:
        table = view.open(rel)
        if isinstance(table, ViewDef):
            raise errors.QueryError(f'cannot copy from view "{table.name}"', "42809",
                                    hint="Try the COPY (SELECT ...) TO variant.")
        cols = spec.columns or ["*"]
        source = exp.select(*[exp.column(c, quoted=True) if c != "*" else exp.Star()
                              for c in cols]).from_(
            exp.Table(this=exp.to_identifier(table.name, quoted=True),
                      db=exp.to_identifier(view.schema_name(table.namespace), quoted=True)))
    return _copy_to_stdout(session, source, fmt, opts, txn, cancel)


def _copy_columns(table: TableDef, names: list[str] | None) -> list[int]:
    """Table positions of COPY's column list (all columns when there is none)."""
    if names is None:
        return list(range(len(table.columns)))
    out = []
    for n in names:
        i = table.column_index(n)
        if i is None:
            raise errors.UndefinedColumn(f'column "{n}" of relation "{table.name}" does not exist')
        if i in out:
            raise errors.QueryError(f'column "{n}" specified more than once', "42701")
        out.append(i)
    return out


def _copy_from_stdin(session, table, positions, fmt, opts, txn, defaults=None) -> QueryResult:
    """COPY FROM STDIN; `defaults` (bound, per column) when the column list leaves out
    columns that have one."""
    cols = [table.columns[i] for i in positions]
    full = positions == list(range(len(table.columns)))
    parser = copy_binary.BinaryCopyParser(cols, table=table.name) if fmt is CopyFormat.BINARY \
        else copy_text.CopyParser(cols, fmt, opts, table=table.name)
    writer = TableWriter(session.engine.cluster, txn, table)
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)  # the statement's now()
    sequences = session_info.SEQUENCES.get()

    def widened(b):
        if full:
            return b
        b = convert.widen(b, table, positions)
        if defaults is None:
            return b
        token = session_info.SEQUENCES.set(sequences)  # the COPY data may come in another thread
        try:
            return column_defaults.fill(b, positions, defaults, now)
        finally:
            session_info.SEQUENCES.reset(token)

    def write(data: bytes):
        for b in parser.feed(data):
            writer.write(widened(b))

    def finish() -> int:
        for b in parser.finish():
            writer.write(widened(b))
        rows = writer.close()
        note_rows(session, txn, table, rows)
        return rows

    def abort(msg: str):
        pass  # the transaction's abort removes what was written

    return QueryResult(ResultKind.COPY_IN, tag=lambda: f"COPY {writer.rows}",
                       copy_in=CopyIn(fmt, len(cols), write, finish, abort))


def _copy_from_file(session, table, positions, path: str, opts, txn,
                    defaults=None) -> QueryResult:
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)  # the statement's now()
    counts = txn.call_all("copy_from_file", new_query_id(), txn.id, table, path, opts,
                          positions, defaults, now)
    rows = counts[0] if table.policy.kind is DistKind.REPLICATED else sum(counts)
    note_rows(session, txn, table, rows)
    return QueryResult(ResultKind.COMMAND, tag=lambda: f"COPY {rows}")


def _copy_to_stdout(session, source, fmt, opts, txn, cancel) -> QueryResult:
    root, names = query.plan(session, source)
    col_types = [f.type if f.type.kind is not types.Kind.UNKNOWN else types.TEXT for f in root.fields]
    qrun = query.run(session, root, txn, cancel)
    count = [0]

    def counted():
        for b in qrun.batches():
            count[0] += b.num_rows
            yield b
    chunks = copy_out.encode_copy(counted(), col_types, fmt, opts, names=list(names),
                                  zone=session.time_zone())
    return QueryResult(ResultKind.COPY_OUT, tag=lambda: f"COPY {count[0]}",
                       copy_out=CopyOut(fmt, len(col_types), chunks, lambda: count[0]))


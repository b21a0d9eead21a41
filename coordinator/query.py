"""Queries: bind, distribute, run; EXPLAIN [ANALYZE]; result descriptions for Describe."""

from __future__ import annotations

import time

import pyarrow as pa

from coordinator.dispatch import QueryRun
from coordinator.pgwire.boundary import CancelToken, QueryResult, ResultColumn, ResultKind
from planner import distribute, explain as ex_plain, rules, types
from planner.bind import QueryBinder


def plan(session, tree, params=None):
    """(distributed plan, output names) of a query tree. Uncorrelated scalar subqueries
    run while planning (InitPlans), except when only describing (`params` given)."""
    runner = None if params is not None else (lambda node: run_initplan(session, node))
    catalog = session.catalog_view(session.txn)  # its transaction's tables, search_path
    bq = QueryBinder(catalog, params, run_plan=runner).bind(tree)
    n = session.engine.cluster.n_segments
    return distribute.distribute(rules.rewrite(bq.node), n), bq.names


def run_initplan(session, node) -> pa.Table:
    """The rows of a subquery's plan (or of a recursive CTE's step), run before the query
    that uses them, laid out as the plan's fields say."""
    root = distribute.distribute(rules.rewrite(node), session.engine.cluster.n_segments)
    qrun = run(session, root, session.txn, session.cancel)
    schema = pa.schema([pa.field(f"c{i}", f.type.arrow_type())
                        for i, f in enumerate(node.fields)])
    batches = [pa.RecordBatch.from_arrays(
        [c if c.type == t else c.cast(t) for c, t in zip(b.columns, schema.types)],
        schema=schema) for b in qrun.batches()]
    return pa.Table.from_batches(batches, schema=schema)


def columns_of(root, names) -> list[ResultColumn]:
    return [ResultColumn(n, f.type if f.type.kind is not types.Kind.UNKNOWN else types.TEXT)
            for n, f in zip(names, root.fields)]


def describe(session, tree, ptypes) -> list[ResultColumn]:
    root, names = plan(session, tree, list(ptypes))
    return columns_of(root, names)


def cancel_event(cancel: CancelToken):
    return cancel.event


def run(session, root, txn, cancel: CancelToken, analyze: bool = False,
        event=None) -> QueryRun:
    """A run of `root` in `txn`: it reads the transaction's own writes, so it is meant for
    the segment processes that hold them (once it has written). With `event` (a cursor's:
    sql_commands.CursorCancel) the run stops when that is set, and has no deadline of its
    own: the run outlives the statement that started it."""
    return QueryRun(session.engine.cluster, root, txn.id if txn else None,
                    cancel_event(cancel) if event is None else event,
                    analyze, incarnations=txn.incarnations if txn else None,
                    deadline=session.deadline if event is None else None,
                    work_mem=session.work_mem(), segment_wait=session.segment_wait(),
                    jit=bool(session.settings.get("jit"))
                    and session.settings.get("jit_above_cost") >= 0,
                    jit_above_rows=max(0, session.settings.get("jit_above_cost")))


def select(session, tree, txn, cancel: CancelToken, cancel_event=None) -> QueryResult:
    root, names = plan(session, tree)
    columns = columns_of(root, names)
    qrun = run(session, root, txn, cancel, event=cancel_event)
    count = [0]

    def batches():
        for b in qrun.batches():
            count[0] += b.num_rows
            yield b
    return QueryResult(ResultKind.ROWS, tag=lambda: f"SELECT {count[0]}", columns=columns,
                       batches=batches())


def explain(session, tree, txn, cancel: CancelToken, analyze: bool) -> QueryResult:
    t0 = time.perf_counter()
    root, _names = plan(session, tree)
    planning_ms = (time.perf_counter() - t0) * 1000
    n = session.engine.cluster.n_segments
    if analyze:
        qrun = run(session, root, txn, cancel, analyze=True)
        t1 = time.perf_counter()
        rows = sum(b.num_rows for b in qrun.batches())
        exec_ms = (time.perf_counter() - t1) * 1000
        lines = ex_plain.explain(root, n, qrun.actuals)
        lines.append(f"Planning Time: {planning_ms:.3f} ms")
        lines.append(f"Execution Time: {exec_ms:.3f} ms ({rows} rows)")
    else:
        lines = ex_plain.explain(root, n)
    lines.append(f"Segments: {n}")
    return text_rows("QUERY PLAN", lines, "EXPLAIN")


def show(value: str, name: str) -> QueryResult:
    return text_rows(name, [value], "SHOW")


def show_table(columns: list[str], rows: list[tuple[str, ...]]) -> QueryResult:
    """SHOW's result: text columns (one for SHOW name; name, setting, description for ALL)."""
    batch = pa.record_batch({c: pa.array([r[i] for r in rows], pa.string())
                             for i, c in enumerate(columns)})
    return QueryResult(ResultKind.ROWS, tag=lambda: "SHOW",
                       columns=[ResultColumn(c, types.TEXT) for c in columns],
                       batches=iter([batch]))


def text_rows(column: str, values: list[str], tag: str) -> QueryResult:
    batch = pa.record_batch({column: pa.array(values, pa.string())})
    return QueryResult(ResultKind.ROWS, tag=lambda: tag,
                       columns=[ResultColumn(column, types.TEXT)], batches=iter([batch]))

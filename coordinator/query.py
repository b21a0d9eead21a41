"""Queries: bind, distribute, run; EXPLAIN [ANALYZE]; result descriptions for Describe.

`select` and `describe` take their plans from the engine's plan cache when a key is given
(coordinator/plan_cache.py): a query described at Parse runs with the plan made then, and
a text run again with the same parameters is not planned again.
"""

from __future__ import annotations

import itertools
import time

import pyarrow as pa

from coordinator import plan_cache
from coordinator.dispatch import QueryRun
from coordinator.pgwire.boundary import CancelToken, QueryResult, ResultColumn, ResultKind
from planner import (distribute, errors, explain as ex_plain, rules, sequence_calls,
                     session_info, types)
from planner.bind import QueryBinder


class _InitPlanNeeded(Exception):
    """Planning a query to describe it reached a subquery that must run first."""


def plan(session, tree, params=None):
    """(distributed plan, output names) of a query tree. Uncorrelated scalar subqueries
    run while planning (InitPlans), except when only describing (`params` given)."""
    runner = None if params is not None else (lambda node: run_initplan(session, node))
    return _plan(session, tree, params, runner)


def _plan(session, tree, params, runner):
    catalog = session.catalog_view(session.txn)  # its transaction's tables, search_path
    bq = QueryBinder(catalog, params, run_plan=runner).bind(tree)
    n = session.engine.cluster.n_segments
    root = distribute.distribute(rules.rewrite(bq.node), n)
    sequence_calls.check_placement(root)
    return root, bq.names


def _session_reads() -> int:
    info = session_info.SESSION_INFO.get()
    return info.reads if isinstance(info, plan_cache.LentInfo) else 0


def _made(session, key, tree, params, runner, runnable: bool,
          replayed: list | None = None) -> plan_cache.Entry:
    """A new plan of `tree`, kept under `key` when nothing but the key decided it: it read
    nothing of the session, and (to be kept as one to run) its InitPlans returned few
    rows; they are kept with it, to be replayed. `runnable`: the plan can run (else its
    parameters were typed NULLs). `replayed`: InitPlan runs of a kept plan just replayed,
    whose results stand for the same subplans run again here, in order."""
    cache = session.engine.plans
    reads = _session_reads()
    ran: list[plan_cache.InitPlanRun] = []
    replayed = list(replayed or ())

    def counted(node):
        if replayed and _same_plan(replayed[0].node, node):
            result = replayed.pop(0).result
        else:
            replayed.clear()
            result = runner(node)
        ran.append(plan_cache.InitPlanRun(node, result))
        return result
    root, names = _plan(session, tree, params, counted if runner is not None else None)
    cache.note_made()
    small = sum(r.result.num_rows for r in ran) <= plan_cache.INITPLAN_ROWS
    entry = plan_cache.Entry(root if runnable and small else None, names,
                             tuple(columns_of(root, names)), tuple(ran))
    if _session_reads() == reads:
        cache.put(key, entry)
    return plan_cache.Entry(root, names, entry.columns)


def _same_plan(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # a field that does not compare as one value
        return False


def planned(session, tree, key) -> plan_cache.Entry:
    """The plan to run `tree` (parameter values substituted) with: the one kept under
    `key` (None: none may be shared) when its InitPlans, run again, return what they did,
    else a new one."""
    hit = session.engine.plans.get(key)
    runs = []
    if hit is not None and hit.root is not None:
        for past in hit.initplans:
            result = run_initplan(session, past.node)
            runs.append(plan_cache.InitPlanRun(past.node, result))
            if not result.equals(past.result):
                break
        else:
            return hit
    return _made(session, key, tree, None, lambda node: run_initplan(session, node), True,
                 replayed=runs)


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


def describe(session, tree, ptypes, key=None) -> list[ResultColumn]:
    """The result columns of a query at Parse. Without parameters the plan made for them
    is the one Execute runs (kept under `key`), unless it needs InitPlans, which run only
    at Execute; with parameters it is bound with typed NULLs and describes only."""
    hit = session.engine.plans.get(key)
    if hit is not None:
        return list(hit.columns)
    if not ptypes:
        def refuse(_node):
            raise _InitPlanNeeded()
        try:
            return list(_made(session, key, tree, [], refuse, True).columns)
        except _InitPlanNeeded:
            pass  # its subqueries run only at Execute: describe with typed NULLs instead
    return list(_made(session, key, tree, list(ptypes), None, False).columns)


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
                    jit_above_rows=max(0, session.settings.get("jit_above_cost")),
                    now=getattr(session, "statement_now", None))


# Times a query is planned again when an expansion moved a table under it (PlacementChanged).
REPLAN_ATTEMPTS = 50


def select(session, tree, txn, cancel: CancelToken, cancel_event=None,
           key: plan_cache.Key | None = None,
           described: list[ResultColumn] | None = None) -> QueryResult:
    """Run a query (parameter values substituted), with the plan kept under `key` if any.
    `described`: the columns its prepared statement was described with, which a table or
    view changed since may contradict (0A000, as PostgreSQL's plan cache says it)."""
    entry = planned(session, tree, key)
    columns = list(entry.columns)
    if described is not None and len(described) != len(columns):
        raise errors.FeatureNotSupported("cached plan must not change result type")
    count = [0]

    def batches():
        nonlocal entry
        for attempt in itertools.count():
            qrun = run(session, entry.root, txn, cancel, event=cancel_event)
            try:
                for b in qrun.batches():
                    count[0] += b.num_rows
                    yield b
                return
            except errors.PlacementChanged:
                # An expansion moved a table it reads: plan it again (the catalog has the
                # new placement once any segment has it; a segment may still be
                # publishing it for a moment).
                if count[0] or attempt >= REPLAN_ATTEMPTS or cancel.event.is_set():
                    raise
                time.sleep(min(0.01 * (attempt + 1), 0.2))
                # Not under `key`: the plan kept there was made before the move.
                entry = planned(session, tree, None)
                if len(entry.columns) != len(columns):
                    raise errors.FeatureNotSupported(
                        "cached plan must not change result type") from None
    return QueryResult(ResultKind.ROWS, tag=lambda: f"SELECT {count[0]}", columns=columns,
                       batches=batches(), time_zone=session.time_zone())


def explain(session, tree, txn, cancel: CancelToken, analyze: bool) -> QueryResult:
    t0 = time.perf_counter()
    root, _names = plan(session, tree)
    return explain_plan(session, root, txn, cancel, analyze,
                        (time.perf_counter() - t0) * 1000)


def explain_plan(session, root, txn, cancel: CancelToken, analyze: bool,
                 planning_ms: float) -> QueryResult:
    """EXPLAIN [ANALYZE]'s rows for a planned statement (ANALYZE runs it)."""
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

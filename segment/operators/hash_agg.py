"""Hash aggregation (Aggregate nodes) in SINGLE, PARTIAL and FINAL mode.

With jit on, an aggregate agg_table.py covers runs on its numba group table
(`_run_table`): a PARTIAL stage as described there, a FINAL or SINGLE stage as a hybrid
hash aggregation that sets rows of groups a full table does not hold aside in hash
partitions (`_run_hybrid_table`). What follows is the general path, which the table
hands over to where it must.

Each input batch is pre-aggregated on its own with Arrow's hash aggregation (keys, then one
state column per aggregate state, see agg_state.py); the per-batch results pile up and are
merged into the running group table whenever they outgrow it, so memory stays near the
number of groups, not the number of rows. At the end every aggregate's state becomes its
result column. With no keys the node is a scalar aggregate and emits exactly one row, even
on empty input (count 0, other aggregates NULL).

Where groups are nearly as many as rows (GROUP BY WatchID, URL, ...), grouping does not
pay: a batch whose own grouping leaves more than RAW_RATIO of its rows makes the following
batches go into the group table as they are, one state row per input row, until a merge
shows that groups do repeat; such raw rows are merged less often (RAW_MERGE_ROWS). And a
PARTIAL stage would only build a hash table that the FINAL stage builds again: after
SKIP_PROBE_ROWS input rows, if the groups exceed SKIP_RATIO of the rows, it emits what it
holds and from then on each batch's states as they come, merging nothing (the FINAL stage
merges states from any number of batches; DataFusion's skip_partial_aggregation).

Memory: the group tables are held under the query's budget (ExecContext.memory). When
they outgrow it (after merging what is pending, which often shrinks them), a PARTIAL
stage without DISTINCT emits its states early and starts afresh (the FINAL stage merges
states from any number of batches, so this costs no disk); any other stage spills: its
states (and DISTINCT pairs) are split by a hash of the group keys into partitions on disk
(spill_partition.py) and the table starts empty; at the end each partition is merged and
finalized on its own (a group lies in one partition), and a partition that still does not
fit is split again one level down. The states are the ones the in-memory path merges, so
the results are the same. At the deepest level (spill_partition.MAX_DEPTH) a partition
that still does not fit is held while it is no bigger than the whole budget (the rest may
be held by other operators, which keep what they hold) and fails the query with 53200
(memory.OutOfMemory) beyond that rather than taking memory without bound, unless all it
holds is one group: no hash splits a key, and a group's states are one row (its DISTINCT
values may be many; they are held).

A scalar aggregate holds one row of states; its DISTINCT values are partitioned by value
instead when they outgrow the budget: each partition's values are de-duplicated on their
own (a value lies in one partition) and turned into DISTINCT states (a count, a sum),
which merge over the partitions as a FINAL stage merges states (`_scalar_distinct`).

DISTINCT aggregates keep the distinct (keys, argument) pairs instead, and aggregate those
at the end; their results are lined up with the other aggregates' groups by grouping
again. The mode changes nothing here: distribute.py writes merges as ordinary calls over
partial states, and its FINAL over per-segment de-duplicated pairs keeps the DISTINCT.
"""

from __future__ import annotations

import itertools
from typing import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import expr as ex
from planner import plan
from segment import memory
from segment.jit import codegen, evaluate
from segment.jit.codegen import machine_kind
from segment.jit.evaluate import OperatorKernel
from segment.kernels import agg_decimal, group_keys
from segment.operators import agg_state
from segment.operators import agg_table
from segment.operators import base
from segment.operators import spill_partition as sp

SKIP_PROBE_ROWS = 1 << 19
SKIP_RATIO = 0.5
RAW_MIN_ROWS = 1 << 14   # a batch this big decides whether grouping batches pays
RAW_RATIO = 0.9
RAW_MERGE_ROWS = 4 << 20


class HashAggOp:
    def __init__(self, node: plan.Aggregate, child: base.Operator):
        self.node = node
        self.child = child
        self.schema = base.schema_of(node.fields)
        self.specs = [agg_state.AggSpec(a, node.mode) for a in node.aggs]
        self._plain = [i for i, s in enumerate(self.specs) if not s.distinct]
        self._distinct_args: dict[ex.Expr, list[int]] = {}
        for i, s in enumerate(self.specs):
            if s.distinct:
                self._distinct_args.setdefault(s.call.arg, []).append(i)
        self._states = [st for i in self._plain for st in self.specs[i].states]
        nkeys = len(node.keys)
        # Over the budget: a PARTIAL stage emits early, others spill partitions by key.
        self._flushes = node.mode is plan.AggMode.PARTIAL and nkeys and not self._distinct_args
        self.memory: memory.Reservation | None = None  # (EXPLAIN ANALYZE reads it)
        self.counters: dict[str, int] = {}
        self._table_path = agg_table.covers(node, self.specs)
        # The table path's computed keys and arguments run as one compiled loop.
        computed = [k for k in node.keys if not isinstance(k, (ex.ColumnRef, ex.Literal))] + \
            [s.call.arg for s in self.specs if s.call.arg is not None
             and not isinstance(s.call.arg, (ex.ColumnRef, ex.Literal))]
        self._computed = [e for e in dict.fromkeys(computed) if machine_kind(e.type)]
        self.jit = OperatorKernel(self._computed)
        # Or the arguments computed and accumulated in one compiled loop (`_fusion`), the
        # computed keys in one of their own.
        self._computed_keys = [e for e in self._computed if e in node.keys]
        self.key_jit = OperatorKernel(self._computed_keys)
        self._fused: evaluate.Accumulation | None = None
        self._fused_built = False

    def _new_tables(self) -> tuple["Groups", dict]:
        nkeys = len(self.node.keys)
        return Groups(nkeys, self._states), {a: Groups(nkeys + 1, []) for a in self._distinct_args}

    def execute(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        if self._table_path and ctx.jit:
            return self._run_table(ctx)
        return self.run_general(ctx, self.child.execute(ctx))

    def _run_table(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        """agg_table.py's path: one numba group table across batches (see there)."""
        self.counters["table_batches"] = 0
        if self.node.mode is plan.AggMode.PARTIAL:
            return self._run_partial_table(ctx)
        return self._run_hybrid(ctx)

    def _run_partial_table(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        """A PARTIAL stage's table: over the budget it emits what it holds and starts
        afresh; when its groups hardly repeat it stops reducing (the SKIP_* rule)."""
        self.memory = res = ctx.memory.reservation()
        new_table = lambda: agg_table.GroupTable([k.type for k in self.node.keys], self.specs)  # noqa: E731
        table = new_table()
        batches = iter(self.child.execute(ctx))
        rows_in = flushed = 0
        probed = streaming = False
        try:
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                try:
                    self._table_add(ctx, table, batch)
                except agg_table.Handover as h:  # nothing of h.rest (or the batch) was added
                    res.free()
                    rest = batch if h.rest is None else h.rest
                    yield from self.run_general(ctx, itertools.chain([rest], batches),
                                                seed=self._table_states(table))
                    return
                self.counters["table_batches"] += 1
                rows_in += batch.num_rows
                if streaming and self._raw_partial_ok():
                    # groups hardly repeat: each later batch's rows go out as states
                    # of one row each, without a table (the FINAL stage groups them)
                    yield from self._emit(self._finalize(self._table_states(table), {}))
                    for b in batches:
                        if b.num_rows:
                            self.counters["raw_batches"] = self.counters.get("raw_batches", 0) + 1
                            yield self._raw_partial(ctx, b)
                    return
                if streaming or not res.try_resize(table.nbytes()):
                    flushed += table.n
                    yield from self._emit(self._finalize(self._table_states(table), {}))
                    table = new_table()
                    res.free()
                if not probed and rows_in >= SKIP_PROBE_ROWS:
                    probed = True  # decide once whether reducing pays (see the docstring)
                    streaming = table.n + flushed > SKIP_RATIO * rows_in
            if table.n:
                yield from self._emit(self._finalize(self._table_states(table), {}))
        finally:
            res.free()

    def _raw_partial_ok(self) -> bool:
        """Whether `_raw_partial` can write this PARTIAL stage's states: counts, and
        sums, min and max of integers and floats (a value is its own state)."""
        return all(s.kind is agg_state.AggKind.COUNT or (
            s.kind in (agg_state.AggKind.SUM, agg_state.AggKind.FLOAT_SUM,
                       agg_state.AggKind.MINMAX)
            and (s.arg_type.is_integer or s.arg_type.is_float)) for s in self.specs)

    def _raw_partial(self, ctx: base.ExecContext, batch: pa.RecordBatch) -> pa.RecordBatch:
        """A PARTIAL stage's output for a batch as if every row were its own group."""
        n = batch.num_rows
        keys, args = self._table_inputs(ctx, batch)
        columns = list(keys)
        for s, arg in zip(self.specs, args):
            if s.kind is agg_state.AggKind.COUNT:
                columns.append(pa.array(np.ones(n, np.int64)) if arg is None
                               else pc.cast(pc.is_valid(arg), pa.int64()))
            else:
                columns.append(arg)
        return pa.RecordBatch.from_arrays(
            [c if c.type == f.type else base.cast(c, f.type)
             for c, f in zip(columns, self.schema)], schema=self.schema)

    def _run_hybrid(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        self.memory = res = ctx.memory.reservation()
        try:
            yield from self._run_hybrid_table(ctx, iter(self.child.execute(ctx)), 0, res)
        finally:
            res.free()

    def _run_hybrid_table(self, ctx: base.ExecContext, batches: Iterator[pa.RecordBatch],
                          level: int, res: memory.Reservation,
                          rows: int = 0) -> Iterator[pa.RecordBatch]:
        """A FINAL or SINGLE stage's table, as a hybrid hash aggregation (PostgreSQL's
        hashagg spill): the table grows while the budget allows; after that, rows of
        groups it holds still accumulate into it, and rows of other groups are written to
        hash partitions by key (`_TableSpill`). The table's groups are then complete: they
        are emitted, and each partition is aggregated the same way on its own, one level
        down (`rows`: how many rows a partition has). Keys that cannot be partitioned,
        and partitions at the deepest level, go to the general path as before (which
        spills states by key)."""
        table = agg_table.GroupTable([k.type for k in self.node.keys], self.specs)
        deepest = level + 1 >= sp.MAX_DEPTH or not self._spills()
        grow = None if deepest else res.try_resize
        if rows and grow is not None:
            table.reserve(rows, grow)  # a partition's rows bound its groups
        spill: _TableSpill | None = None
        try:
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                try:
                    left = self._table_add(ctx, table, batch, grow)
                except agg_table.Handover as h:  # nothing of h.rest (or the batch) was added
                    res.free()
                    rest = batch if h.rest is None else h.rest
                    more = spill.batches(ctx) if spill is not None else iter(())
                    yield from self.run_general(ctx, itertools.chain([rest], batches, more),
                                                seed=self._table_states(table))
                    return
                self.counters["table_batches"] += 1
                if left is not None:
                    spill = spill or _TableSpill(res, level)
                    self.counters["spill_levels"] = max(self.counters.get("spill_levels", 0),
                                                        level + 1)
                    spill.add(*left)
                if grow is None and not res.try_resize(table.nbytes()):
                    res.free()  # the general path spills by key
                    yield from self.run_general(ctx, batches, seed=self._table_states(table))
                    return
            if table.n:
                out = self._finalize(self._table_states(table), {})
                table = None
                res.free()
                yield from self._emit(out)
            if spill is not None:
                for part in spill.parts:
                    if part.rows:
                        yield from self._run_hybrid_table(ctx, _read(ctx, part), level + 1,
                                                          res, part.rows)
        finally:
            if spill is not None:
                spill.close()

    def _table_add(self, ctx: base.ExecContext, table: agg_table.GroupTable,
                   batch: pa.RecordBatch, grow: agg_table.Grow | None = None
                   ) -> tuple[pa.RecordBatch, list[pa.Array]] | None:
        """Add a batch to the table: its arguments computed and accumulated in one compiled
        loop (`_fusion`), or else evaluated and added aggregate by aggregate. Rows the
        loop leaves to the general evaluator are added the second way; Handover(rest)
        when those cannot be. With `grow` (assign's), the rows of groups a full table
        does not hold are not added: returned, with their keys."""
        args = None
        if self._fused_built and self._fused is None:  # nothing to fuse
            keys, args = self._table_inputs(ctx, batch)
            args = table.narrowed(args)  # (its Handover comes before anything is added)
        else:
            # Groups first: a table that hands over at its first batch (keys of too many
            # values) never compiles the loop.
            keys = self._table_keys(ctx, batch)
        gid = table.assign(keys, grow)
        try:
            return self._accumulate_rows(ctx, table, batch, keys, gid, args)
        except agg_table.Handover as h:
            if not table.frozen or not (gid < 0).any():
                raise
            # the rows set aside were not added either
            rest = batch.filter(pa.array(gid >= 0)) if h.rest is None else h.rest
            left = batch.filter(pa.array(gid < 0))
            raise agg_table.Handover(base.concat_batches([rest, left], rest.schema))

    def _accumulate_rows(self, ctx: base.ExecContext, table: agg_table.GroupTable,
                         batch: pa.RecordBatch, keys: list[pa.Array], gid: np.ndarray,
                         args: list | None) -> tuple[pa.RecordBatch, list[pa.Array]] | None:
        """`_table_add` once the rows have their groups (`args`: the arguments, when
        nothing is fused)."""
        plain = args is not None
        left = None
        if table.frozen:
            missing = gid < 0
            if missing.any():
                out, kept = pa.array(missing), pa.array(~missing)
                left = batch.filter(out), [k.filter(out) for k in keys]
                batch, gid = batch.filter(kept), gid[~missing]
                if plain:
                    args = [a.filter(kept) if a is not None else None for a in args]
                if batch.num_rows == 0:
                    return left
        if plain:
            table.accumulate(gid, args)
            return left
        fused = self._fusion(ctx, table, batch.num_rows)
        if fused is None:
            try:
                table.accumulate(gid, table.narrowed(self._table_inputs(ctx, batch)[1]))
            except agg_table.Handover:  # its groups hold nothing yet: harmless states
                raise agg_table.Handover(batch)
            return left
        done = fused.run(batch, gid, table.accumulators(), ctx.now)
        fused.count_into(self.counters)
        if done < batch.num_rows:
            rest = batch.slice(done)
            try:
                table.accumulate(gid[done:], table.narrowed(self._table_inputs(ctx, rest)[1]))
            except agg_table.Handover:
                raise agg_table.Handover(rest)
        return left

    def _fusion(self, ctx: base.ExecContext, table: agg_table.GroupTable,
                rows: int) -> "evaluate.Accumulation | None":
        """The compiled accumulation, built at the first batch of at least
        jit_above_rows rows; None when an argument does not compile."""
        if not self._fused_built and rows >= ctx.jit_above_rows:
            self._fused_built = True
            try:
                self._fused = evaluate.Accumulation(table.accumulation_args(),
                                                    table.accumulation_ops())
            except codegen.NotCompiled:
                self._fused = None
        return self._fused

    def _table_keys(self, ctx: base.ExecContext, batch: pa.RecordBatch) -> list[pa.Array]:
        n = batch.num_rows
        computed = self.key_jit.get(ctx, n) if self._computed_keys else None
        done = computed.run(batch, ctx.now) if computed is not None else None
        known = dict(zip(self._computed_keys, done[1])) if done is not None else {}
        return [known[k] if k in known else
                _array(base.evaluate(k, batch, ctx.now, keep_dictionary=True), n)
                for k in self.node.keys]

    def _table_inputs(self, ctx: base.ExecContext, batch: pa.RecordBatch):
        n = batch.num_rows
        compiled = self.jit.get(ctx, n) if self._computed else None
        done = compiled.run(batch, ctx.now) if compiled is not None else None
        args: dict[ex.Expr, pa.Array] = {}
        if done is not None:
            args = dict(zip(self._computed, done[1]))
            self.jit.count_into(self.counters)
        keys = [args[k] if k in args else
                _array(base.evaluate(k, batch, ctx.now, keep_dictionary=True), n)
                for k in self.node.keys]
        for s in self.specs:
            e = s.call.arg
            if e is not None and e not in args:
                args[e] = _array(base.evaluate(e, batch, ctx.now), n)
        return keys, [args[s.call.arg] if s.call.arg is not None else None for s in self.specs]

    def _table_states(self, table: agg_table.GroupTable) -> pa.Table:
        """The group table as the general path's table of states (k0.., s0..)."""
        cols = table.key_arrays() + [st for states in table.states() for st in states]
        names = [f"k{i}" for i in range(len(self.node.keys))] + \
            [f"s{j}" for j in range(len(self._states))]
        return pa.Table.from_arrays(cols, names=names)

    def run_general(self, ctx: base.ExecContext, batches: Iterator[pa.RecordBatch],
                    seed: pa.Table | None = None) -> Iterator[pa.RecordBatch]:
        """The general path over `batches`, starting from a table of states (`seed`,
        from agg_table's path) when given."""
        self.memory = res = ctx.memory.reservation()
        spill: sp.Partitioned | None = None
        values: sp.Partitioned | None = None  # a scalar aggregate's DISTINCT values
        try:
            nkeys = len(self.node.keys)
            groups, distinct = self._new_tables()
            if seed is not None and seed.num_rows:
                groups.push(seed)
            may_skip = self.node.mode is plan.AggMode.PARTIAL and nkeys and not distinct
            seen, rows_in, flushed = False, 0, 0
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                seen = True
                if groups is None:  # skipping: this batch's states go straight out
                    self._add(ctx, batch, streamer, distinct)
                    yield from self._emit(self._finalize(streamer.drain(), distinct))
                    continue
                self._add(ctx, batch, groups, distinct)
                rows_in += batch.num_rows
                if not self._fits(res, groups, distinct):
                    if self._flushes:  # emit what is held; the FINAL stage merges it
                        held = groups.drain()
                        flushed += held.num_rows
                        self.counters["flushes"] = self.counters.get("flushes", 0) + 1
                        res.free()
                        yield from self._emit(self._finalize(held, distinct))
                        groups = groups.drained()
                    elif self._spills():
                        spill = spill or self._partitioned(res, 0)
                        groups, distinct = self._spill(spill, groups, distinct)
                    elif self._spills_values():
                        values = values or self._values_partitioned(res, 0)
                        distinct = self._spill_values(values, distinct)
                        res.resize(self._held(groups, distinct))
                    else:  # keys motion.hashing cannot hash: nothing to split them by
                        res.resize(self._held(groups, distinct))
                if may_skip and rows_in >= SKIP_PROBE_ROWS:
                    may_skip = False  # decide once
                    held = groups.finish()
                    if held.num_rows + flushed > SKIP_RATIO * rows_in:
                        res.free()
                        yield from self._emit(self._finalize(held, distinct))
                        streamer, groups = groups.drained(), None  # noqa: F841 - read by the next batches
            if groups is None:
                return
            if spill is not None:
                self._spill(spill, groups, distinct)
                groups = distinct = None
                spill.finish()
                yield from self._partitions(ctx, res, spill)
                return
            if values is not None:
                self._spill_values(values, distinct)
                values.finish()
                results = {arg: self._scalar_distinct(ctx, res, groups.nbytes(), values,
                                                      stream, idxs)
                           for stream, (arg, idxs) in enumerate(self._distinct_args.items())}
                yield from self._emit(self._finalize(groups.finish(), {}, results))
                return
            if not seen and nkeys == 0:
                self._add(ctx, self._empty_input(), groups, distinct)  # a scalar agg's one row
            if nkeys and groups.empty:
                return  # no rows (or all of them emitted early): no groups
            yield from self._emit(self._finalize(groups.finish(), distinct))
        finally:
            for parts in (spill, values):
                if parts is not None:
                    parts.close()
            res.free()

    # --- memory ---------------------------------------------------------------------------
    def _spills(self) -> bool:
        """Whether the group keys can be partitioned (motion.hashing hashes their types)."""
        if not hasattr(self, "_hashable"):
            self._hashable = bool(self.node.keys) and sp.hashable(
                [e.type.arrow_type() for e in self.node.keys])
        return self._hashable

    def _spills_values(self) -> bool:
        """Whether a scalar aggregate's DISTINCT values can be partitioned by value."""
        if not hasattr(self, "_hashable_values"):
            self._hashable_values = not self.node.keys and bool(self._distinct_args) and \
                sp.hashable([a.type.arrow_type() for a in self._distinct_args])
        return self._hashable_values

    @staticmethod
    def _held(groups: "Groups", distinct: dict) -> int:
        return groups.nbytes() + sum(d.nbytes() for d in distinct.values())

    def _fits(self, res: memory.Reservation, groups: "Groups", distinct: dict) -> bool:
        return _fits(res, (groups, *distinct.values()))

    def _partitioned(self, res: memory.Reservation, level: int) -> sp.Partitioned:
        """Partitions by the group keys (the first columns) of the states and of each
        DISTINCT argument's pairs."""
        keys = range(len(self.node.keys))
        self.counters["spill_levels"] = max(self.counters.get("spill_levels", 0), level + 1)
        return sp.Partitioned(res, [keys] * (1 + len(self._distinct_args)), level)

    def _spill(self, spill: sp.Partitioned, groups: "Groups", distinct: dict):
        """Write the tables' rows to the partitions by key; empty tables that keep what
        the old ones learnt (raw or grouped batches) go on."""
        for stream, g in enumerate((groups, *distinct.values())):
            table, multiplicity = g.spill_drain()
            spill.add(stream, table, multiplicity)
        self.memory.free()
        return groups.drained(), {a: d.drained() for a, d in distinct.items()}

    def _partitions(self, ctx: base.ExecContext, res: memory.Reservation,
                    spill: sp.Partitioned) -> Iterator[pa.RecordBatch]:
        """Merge and finalize each partition on its own; split one that does not fit."""
        nkeys = len(self.node.keys)
        for streams in spill.parts:
            if not any(part.rows for part in streams):
                continue
            groups, distinct = self._new_tables()
            tables = (groups, *distinct.values())
            sub: sp.Partitioned | None = None
            one = _OneKey(nkeys, "a hash aggregate partition")
            try:
                for stream, part in enumerate(streams):
                    for batch, multiplicity in part.batches():
                        ctx.check_cancel()
                        t = pa.Table.from_batches([batch])
                        if sub is not None:
                            sub.add(stream, t, multiplicity)
                            continue
                        # a group occurs at most once per row, and per table the drain had
                        tables[stream].push(t, max(1, min(multiplicity, t.num_rows)))
                        if not self._fits(res, groups, distinct):
                            if spill.level + 1 < sp.MAX_DEPTH:
                                sub = self._partitioned(res, spill.level + 1)
                                groups, distinct = self._spill(sub, groups, distinct)
                                tables = (groups, *distinct.values())
                            else:  # as deep as it goes: only one group may be held
                                one.check(tables, t, res)
                                res.resize(self._held(groups, distinct))
                    part.close()
                if sub is not None:
                    sub.finish()
                    yield from self._partitions(ctx, res, sub)
                else:
                    out = self._finalize(groups.finish(), distinct)
                    groups = distinct = tables = None
                    res.free()
                    yield from self._emit(out)
            finally:
                if sub is not None:
                    sub.close()

    def _values_partitioned(self, res: memory.Reservation, level: int) -> sp.Partitioned:
        """Partitions of a scalar aggregate's DISTINCT values (one stream per argument)
        by value."""
        self.counters["spill_levels"] = max(self.counters.get("spill_levels", 0), level + 1)
        return sp.Partitioned(res, [[0]] * len(self._distinct_args), level)

    @staticmethod
    def _spill_values(parts: sp.Partitioned, distinct: dict) -> dict:
        for stream, d in enumerate(distinct.values()):
            table, multiplicity = d.spill_drain()
            parts.add(stream, table, multiplicity)
        return {a: d.drained() for a, d in distinct.items()}

    def _scalar_distinct(self, ctx: base.ExecContext, res: memory.Reservation, held: int,
                         parts: sp.Partitioned, stream: int, idxs: list[int]) -> pa.Table:
        """The results of the DISTINCT aggregates `idxs` over one argument's spilled values:
        each partition's values de-duplicated on their own, their states merged over the
        partitions (a value lies in one partition only). `held` bytes stay reserved for
        the aggregate's one row of other states."""
        combined = Groups(0, self._distinct_states(idxs))
        self._merge_value_states(ctx, res, held, parts, stream, idxs, combined)
        # Every input row added a value (NULL too) to every argument: never empty.
        return self._distinct_finals(combined.finish(), idxs)

    def _merge_value_states(self, ctx: base.ExecContext, res: memory.Reservation, held: int,
                            parts: sp.Partitioned, stream: int, idxs: list[int],
                            combined: "Groups") -> None:
        for streams in parts.parts:
            part = streams[stream]
            if not part.rows:
                continue
            values = Groups(1, [])
            sub: sp.Partitioned | None = None
            one = _OneKey(1, "a partition of DISTINCT values")
            try:
                for batch, multiplicity in part.batches():
                    ctx.check_cancel()
                    t = pa.Table.from_batches([batch])
                    if sub is not None:
                        sub.add(0, t, multiplicity)
                        continue
                    values.push(t, max(1, min(multiplicity, t.num_rows)))
                    if _fits(res, (values,), held):
                        continue
                    if parts.level + 1 < sp.MAX_DEPTH:
                        self.counters["spill_levels"] = max(self.counters["spill_levels"],
                                                            parts.level + 2)
                        sub = sp.Partitioned(res, [[0]], parts.level + 1)
                        sub.add(0, *values.spill_drain())
                        values = None
                        res.resize(held)
                    else:
                        one.check((values,), t, res)
                        res.resize(held + values.nbytes())
                part.close()
                if sub is not None:
                    sub.finish()
                    self._merge_value_states(ctx, res, held, sub, 0, idxs, combined)
                else:
                    combined.push(self._distinct_group_states(values.finish(), idxs))
                    values = None
                    res.resize(held)
            finally:
                if sub is not None:
                    sub.close()

    def _emit(self, out: pa.Table) -> Iterator[pa.RecordBatch]:
        if not self.schema.names:  # (pyarrow slices column-less tables past their end)
            yield base.rows_without_columns(out.num_rows)
            return
        for start in range(0, out.num_rows, base.BATCH_ROWS):
            yield base.table_to_batch(out.slice(start, base.BATCH_ROWS))

    def _add(self, ctx: base.ExecContext, batch: pa.RecordBatch, groups: "Groups",
             distinct: dict) -> None:
        n = batch.num_rows
        keys = [_group_key(_array(base.evaluate(k, batch, ctx.now, keep_dictionary=True), n))
                for k in self.node.keys]
        args: dict[ex.Expr, pa.Array] = {}

        def arg_of(e: ex.Expr) -> pa.Array:
            if e not in args:
                args[e] = _array(base.evaluate(e, batch, ctx.now), n)
            return args[e]

        inputs = []
        for i in self._plain:
            spec = self.specs[i]
            inputs += spec.batch_inputs(arg_of(spec.call.arg) if spec.call.arg is not None
                                        else None, n, keyed=bool(self.node.keys))
        groups.add(keys, inputs, n)
        for arg, d in distinct.items():
            d.add(keys + [_group_key(arg_of(arg))], [], n)

    def _empty_input(self) -> pa.RecordBatch:
        schema = self.node.child.fields
        return pa.RecordBatch.from_arrays(
            [pa.array([], f.type.arrow_type()) for f in schema],
            names=[f.name for f in schema]) if schema else base.rows_without_columns(0)

    def _finalize(self, table: pa.Table, distinct: dict,
                  results_of: dict | None = None) -> pa.Table:
        """The output rows of a table of states; DISTINCT results from the `distinct`
        tables, or as given per argument (`results_of`: keys + result columns)."""
        nkeys = len(self.node.keys)
        results: dict[int, pa.Array] = {}
        col = nkeys
        for i in self._plain:
            spec = self.specs[i]
            states = [_combined(table.column(col + j)) for j in range(len(spec.states))]
            results[i] = spec.finalize(states)
            col += len(spec.states)
        keys = [_combined(table.column(j)) for j in range(nkeys)]
        for arg, idxs in self._distinct_args.items():
            if results_of is not None:
                per_group = results_of[arg]
            else:
                per_group = self._distinct_results(distinct[arg].finish(), idxs)
            aligned = _align(keys, per_group, nkeys, table.num_rows)
            for n, i in enumerate(idxs):
                # every group has a (keys, arg) row, so a missing count cannot happen; be safe
                results[i] = aligned[n].fill_null(0) if self.specs[i].kind == "count" \
                    else aligned[n]
        names = self.schema.names
        columns = [base.cast(k, f.type) if k.type != f.type else k
                   for k, f in zip(keys, self.schema)]
        for i in range(len(self.specs)):
            r = results[i]
            f = self.schema.field(nkeys + i)
            columns.append(r if r.type == f.type else base.cast(r, f.type))
        if not names:
            return pa.Table.from_batches([base.rows_without_columns(table.num_rows)])
        return pa.Table.from_arrays(columns, schema=self.schema)

    def _distinct_results(self, values: pa.Table, idxs: list[int]) -> pa.Table:
        """keys + one result column per distinct aggregate, from distinct (keys, arg) rows."""
        return self._distinct_finals(self._distinct_group_states(values, idxs), idxs)

    def _distinct_states(self, idxs: list[int]) -> list[agg_state.State]:
        return [st for i in idxs for st in self.specs[i].states]

    def _distinct_group_states(self, values: pa.Table, idxs: list[int]) -> pa.Table:
        """keys + the states of the distinct aggregates `idxs`, from distinct (keys, arg)
        rows."""
        nkeys = len(self.node.keys)
        arg = _combined(values.column(nkeys))
        keys = [_combined(values.column(j)) for j in range(nkeys)]
        g = Groups(nkeys, self._distinct_states(idxs))
        inputs = []
        for i in idxs:
            inputs += self.specs[i].batch_inputs(arg, len(arg))
        g.add(keys, inputs, values.num_rows)
        return g.finish()

    def _distinct_finals(self, t: pa.Table, idxs: list[int]) -> pa.Table:
        """keys + one result column per distinct aggregate, from their states."""
        nkeys = len(self.node.keys)
        out = [_combined(t.column(j)) for j in range(nkeys)]
        col = nkeys
        for i in idxs:
            spec = self.specs[i]
            out.append(spec.finalize([_combined(t.column(col + j))
                                      for j in range(len(spec.states))]))
            col += len(spec.states)
        return pa.Table.from_arrays(out, names=[f"c{j}" for j in range(len(out))])


class Groups:
    """A growing group table: key columns k0.., then state columns s0.. (one row per group).

    `add` pre-aggregates one batch; pending results merge into the table once they hold as
    many rows as it does (or BATCH_ROWS), which keeps the merging cost linear overall."""

    def __init__(self, nkeys: int, states: Sequence[agg_state.State]):
        self.keys = [f"k{i}" for i in range(nkeys)]
        self.states = list(states)
        self.names = self.keys + [f"s{j}" for j in range(len(self.states))]
        self.acc: pa.Table | None = None
        self.pending: list[pa.Table] = []
        self.pending_rows = 0
        self.pending_multiplicity = 0
        self.pending_bytes = 0
        self.acc_bytes = 0
        # Once a batch's own grouping hardly reduces it (as many groups as rows), later
        # batches are pushed as they are, one state row per input row: the merges group
        # them anyway, so grouping each batch first would be work done twice.
        self.raw = False
        self.state_types: list[pa.DataType] = []

    def add(self, keys: list[pa.Array], inputs: list, n: int) -> None:
        """Pre-aggregate one batch. A dictionary-encoded key (distinct values, as scans and
        expressions over them give) is grouped by its indices, and only the groups' keys
        are looked up: hashing integers instead of strings."""
        dictionaries = [k.dictionary if pa.types.is_dictionary(k.type) else None for k in keys]
        if self.raw:
            raw = self._raw_states(_decoded(keys), inputs, n)
            if raw is not None:
                self._push(raw, multiplicity=n)
                return
        keys = [k.indices if d is not None else k for k, d in zip(keys, dictionaries)]
        cols: dict[str, pa.Array] = dict(zip(self.keys, keys))
        aggs = []
        for j, (arr, fn, opts) in enumerate(inputs):
            if arr is None:
                aggs.append(([], fn))
            else:
                cols[f"i{j}"] = arr
                aggs.append((f"i{j}", fn, opts) if opts is not None else (f"i{j}", fn))
        table = pa.table(cols) if cols else pa.Table.from_batches(
            [base.rows_without_columns(n)])
        out = self._group(table, aggs)
        for i, d in enumerate(dictionaries):
            if d is not None:
                out = out.set_column(i, self.keys[i], d.take(_combined(out.column(i))))
        if self.keys and n >= RAW_MIN_ROWS:
            self.state_types = out.schema.types[len(self.keys):]
            self.raw = out.num_rows > RAW_RATIO * n
        self._push(out)

    def _raw_states(self, keys: list[pa.Array], inputs: list, n: int) -> pa.Table | None:
        """The batch as state rows of one row per input row (what grouping it would give
        if every row were its own group), or None when a state would need another type
        than the grouped batches had (an exact sum that went decimal)."""
        cols = list(keys)
        for (arr, fn, _), t in zip(inputs, self.state_types):
            if fn == "count_all":
                state = pa.array(np.ones(n, np.int64))
            elif fn == "count":
                state = pc.cast(pc.is_valid(arr), pa.int64())
            elif fn == "list":  # a list of the one value
                state = pa.ListArray.from_arrays(pa.array(np.arange(n + 1, dtype=np.int32)), arr)
            else:  # sum, min, max of one value: the value
                state = arr
            if state.type != t:
                if not _widening(state.type, t):
                    return None
                state = state.cast(t)
            cols.append(state)
        return pa.Table.from_arrays(cols, names=self.names)

    def _group(self, table: pa.Table, aggs: list) -> pa.Table:
        if not self.keys and self.names and not any(a[1] == "list" for a in aggs):
            scalar = _scalar_aggregates(table, aggs)
            if scalar is not None:
                return pa.Table.from_arrays(scalar, names=self.names)
        table, aggs = _widened_int128(table, aggs)  # Arrow's grouping from here on
        if not self.keys and any(a[1] == "list" for a in aggs):
            # Arrow has "list" only as a hash aggregation: group by a constant instead;
            # over no rows, the one row a scalar aggregate gives has NULL lists.
            if table.num_rows == 0:
                out = table.group_by([], use_threads=False).aggregate(
                    [(a[0], "count") if a[1] == "list" else a for a in aggs])
                cols = [pa.nulls(1, pa.list_(table.column(a[0]).type)) if a[1] == "list"
                        else out.column(i) for i, a in enumerate(aggs)]
                return pa.Table.from_arrays(cols, names=self.names)
            table = table.append_column("one", pa.array(np.zeros(table.num_rows, np.int8)))
            out = group_keys.group_by(table, ["one"], aggs)
            cols = [c for c, n in zip(out.columns, out.schema.names) if n != "one"]
            return pa.Table.from_arrays(cols, names=self.names)
        out = group_keys.group_by(table, self.keys, aggs)
        if not self.names:
            return out  # no columns: only the row count (one) matters
        nkeys = len(self.keys)
        if out.schema.names[:nkeys] == self.keys:
            cols = out.columns
        else:  # older pyarrow put the keys last
            cols = out.columns[len(aggs):] + out.columns[:len(aggs)]
        return pa.Table.from_arrays(cols, names=self.names)

    def _push(self, t: pa.Table, multiplicity: int = 1) -> None:
        """Add a pending table in which a group occurs at most `multiplicity` times."""
        self.pending.append(t)
        self.pending_rows += t.num_rows
        self.pending_bytes += t.nbytes
        self.pending_multiplicity += multiplicity
        acc_rows = self.acc.num_rows if self.acc is not None else 0
        # Raw rows are about as many as their groups, so holding more of them costs little
        # and each merge regroups everything held: merge less often.
        least = RAW_MERGE_ROWS if self.raw else base.BATCH_ROWS
        if self.pending_rows >= max(acc_rows, least):
            self._merge()

    def _merge(self) -> None:
        tables = ([self.acc] if self.acc is not None else []) + self.pending
        # How often one group can occur among the tables: once per grouped table.
        multiplicity = (1 if self.acc is not None else 0) + self.pending_multiplicity
        self.pending, self.pending_rows, self.pending_multiplicity = [], 0, 0
        self.pending_bytes = 0
        if multiplicity == 1:
            self.acc = tables[0]
            self.acc_bytes = self.acc.nbytes
            return
        tables = _unify(tables)
        merged = pa.concat_tables(tables)
        cols = dict(zip(self.keys, merged.columns[:len(self.keys)]))
        aggs, lists = [], {}
        for j, st in enumerate(self.states):
            col = merged.column(len(self.keys) + j)
            if st.merge == "list":
                # hash_list takes no lists: group the row numbers, then join the lists.
                lists[j] = _combined(col)
                cols["row"] = pa.array(np.arange(merged.num_rows, dtype=np.int64))
                aggs.append(("row", "list"))
                continue
            cols[f"s{j}"] = agg_state.AggSpec.widen(st, col, multiplicity)
            aggs.append((f"s{j}", st.merge))
        self.acc = self._group(pa.table(cols) if cols else merged, aggs)
        for j, col in lists.items():
            i = len(self.keys) + j
            self.acc = self.acc.set_column(i, self.names[i],
                                           concat_lists(col, _combined(self.acc.column(i))))
        self.acc_bytes = self.acc.nbytes
        if self.raw and self.acc.num_rows * 2 < merged.num_rows:
            self.raw = False  # groups do repeat across batches: pre-aggregate them again

    def push(self, t: pa.Table, multiplicity: int = 1) -> None:
        """Add a table of states (a spilled one read back), in which a group occurs at
        most `multiplicity` times."""
        self._push(t, multiplicity)

    def nbytes(self) -> int:
        """Bytes of the tables held."""
        return self.acc_bytes + self.pending_bytes

    def compact(self) -> None:
        """Merge what is pending into the table now."""
        if self.pending and (self.acc is not None or self.pending_multiplicity > 1):
            self._merge()

    def spill_drain(self) -> tuple[pa.Table, int]:
        """Everything held, as `drain`, and how often a group can occur in it."""
        multiplicity = (1 if self.acc is not None else 0) + self.pending_multiplicity
        return self.drain(), max(1, multiplicity)

    def drain(self) -> pa.Table:
        """Everything held, as it is (groups may repeat), and start empty again."""
        tables = ([self.acc] if self.acc is not None else []) + self.pending
        self.acc, self.pending, self.pending_rows, self.pending_multiplicity = None, [], 0, 0
        self.acc_bytes = self.pending_bytes = 0
        return pa.concat_tables(_unify(tables)) if tables else self.finish()

    def drained(self) -> "Groups":
        """An empty table that keeps what this one learnt (raw or grouped batches)."""
        g = Groups(len(self.keys), self.states)
        g.raw, g.state_types = self.raw, self.state_types
        return g

    @property
    def empty(self) -> bool:
        return self.acc is None and not self.pending

    def tables(self) -> list[pa.Table]:
        """The tables held (groups may repeat among them)."""
        return ([self.acc] if self.acc is not None else []) + self.pending

    def finish(self) -> pa.Table:
        if self.pending:
            self._merge()
        if self.acc is None:
            return pa.table({n: pa.array([], pa.null()) for n in self.names})
        return self.acc


def concat_lists(states: pa.Array, rows: pa.Array) -> pa.Array:
    """For each group, the concatenation of the list `states` of its rows, where `rows`
    lists each group's row numbers in the order the rows came (array_agg's merge)."""
    taken = states.take(rows.values)  # the rows' lists, group by group
    lengths = pc.fill_null(pc.list_value_length(taken), 0).to_numpy(zero_copy_only=False)
    ends = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    offsets = ends[rows.offsets.to_numpy(zero_copy_only=False)].astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pc.list_flatten(taken))


def _fits(res: memory.Reservation, tables: Sequence[Groups], base_bytes: int = 0) -> bool:
    """Whether the tables (and `base_bytes` held besides) may stay in memory: they fit, or
    merging what is pending shrinks them to at most half of what there is room for (so
    that the next merge is some batches away, not one)."""
    if res.try_resize(base_bytes + sum(g.nbytes() for g in tables)):
        return True
    for g in tables:
        g.compact()
    held = base_bytes + sum(g.nbytes() for g in tables)
    if 2 * held <= res.size + res.budget.available:
        res.resize(held)
        return True
    return False


class _TableSpill:
    """The input rows a full group table does not hold, in FANOUT hash partitions by
    their group keys at one level (spill_partition.py's hash), for `_run_hybrid_table`
    to aggregate partition by partition. They are input rows, not states: each
    partition is aggregated as the input was."""

    def __init__(self, res: memory.Reservation, level: int):
        self.level = level
        self.parts = [sp.Partition(res) for _ in range(sp.FANOUT)]

    def add(self, batch: pa.RecordBatch, keys: list[pa.Array]) -> None:
        if any(pa.types.is_dictionary(t) for t in batch.schema.types):
            # an IPC file holds one dictionary per column: write the values
            batch = pa.RecordBatch.from_arrays(_decoded(batch.columns),
                                               names=batch.schema.names)
        for p, rows in sp.split(batch, sp.partition_ids(keys, self.level)):
            self.parts[p].write(rows)

    def batches(self, ctx: base.ExecContext) -> Iterator[pa.RecordBatch]:
        """Every row written, partition by partition."""
        for part in self.parts:
            yield from _read(ctx, part)

    def close(self) -> None:
        for part in self.parts:
            part.close()


def _read(ctx: base.ExecContext, part: sp.Partition) -> Iterator[pa.RecordBatch]:
    for batch, _ in part.batches():
        ctx.check_cancel()
        yield batch


class _OneKey:
    """At the deepest partitioning level a partition that does not fit is held anyway while
    it is no bigger than the whole budget (the room may be taken by other operators of the
    query, which keep what they hold) or while it is one group key (no hash splits it);
    a bigger one of several groups fails with 53200. Once the held keys were seen to be
    one, later checks look at the new rows only."""

    def __init__(self, nkeys: int, what: str):
        self.nkeys = nkeys
        self.what = what
        self.key: pa.Table | None = None  # the one key, once known

    def check(self, tables: Sequence[Groups], new: pa.Table, res: memory.Reservation) -> None:
        nbytes = sum(g.nbytes() for g in tables)
        if self.nkeys == 0 or nbytes <= res.budget.limit:
            return  # a scalar aggregate's states are one row; or it could fit
        if self.key is None:
            held = [t for g in tables for t in g.tables()]
        else:
            held = [self.key, new]
        keys = _distinct_keys(held, self.nkeys)
        if keys.num_rows > 1:
            raise memory.OutOfMemory.of(
                f"{self.what} of {nbytes} bytes (more than one group) after "
                f"{sp.MAX_DEPTH} levels of partitioning", nbytes, res.budget)
        self.key = keys


def _distinct_keys(tables: list[pa.Table], nkeys: int) -> pa.Table:
    """The distinct values of the first nkeys columns over the tables."""
    names = [f"k{j}" for j in range(nkeys)]
    parts = [pa.Table.from_arrays(t.columns[:nkeys], names=names) for t in tables if t.num_rows]
    if not parts:
        return pa.table({n: pa.array([], pa.null()) for n in names})
    keys = pa.concat_tables(_unify(parts))
    return group_keys.group_by(keys, names, [])


def _widening(src: pa.DataType, dst: pa.DataType) -> bool:
    """A cast from src to dst that cannot fail or lose anything."""
    if pa.types.is_integer(src):
        return dst == pa.int64() or pa.types.is_decimal(dst) or dst == pa.float64() \
            and src.bit_width <= 32
    if pa.types.is_floating(src):
        return dst == pa.float64()
    if pa.types.is_decimal(src):
        return pa.types.is_decimal(dst) and dst.scale == src.scale \
            and dst.precision >= src.precision
    return False


def _unify(tables: list[pa.Table]) -> list[pa.Table]:
    """Give every table the widest type of each column (an exact sum that went decimal)."""
    if all(t.schema.equals(tables[0].schema) for t in tables[1:]):
        return tables
    target = []
    for j in range(tables[0].num_columns):
        types = [t.schema.field(j).type for t in tables]
        wide = next((ty for ty in types if pa.types.is_decimal(ty)), None)
        wide = wide or next((ty for ty in types if not pa.types.is_null(ty)), types[0])
        target.append(wide)
    out = []
    for t in tables:
        cols = [c if c.type == ty else c.cast(ty) for c, ty in zip(t.columns, target)]
        out.append(pa.Table.from_arrays(cols, names=t.schema.names))
    return out


def _align(keys: list[pa.Array], per_group: pa.Table, nkeys: int, n: int) -> list[pa.Array]:
    """per_group's result columns in the row order of `keys` (the same set of groups):
    group the union of both key lists and pair up each group's row numbers."""
    if nkeys == 0:
        return [_combined(c) for c in per_group.columns]
    other = [_combined(per_group.column(j)) for j in range(nkeys)]
    m = per_group.num_rows
    union = {f"k{j}": pa.concat_arrays([keys[j], other[j].cast(keys[j].type)])
             for j in range(nkeys)}
    union["a"] = pa.concat_arrays([pa.array(range(n), pa.int64()), pa.nulls(m, pa.int64())])
    union["b"] = pa.concat_arrays([pa.nulls(n, pa.int64()), pa.array(range(m), pa.int64())])
    pairs = group_keys.group_by(pa.table(union), [f"k{j}" for j in range(nkeys)],
                                [("a", "min"), ("b", "min")])
    pairs = pairs.filter(pc.is_valid(pairs.column("a_min")))
    take_b = pairs.column("b_min").take(pc.sort_indices(pairs.column("a_min")))
    return [_combined(per_group.column(c)).take(take_b) for c in range(nkeys, per_group.num_columns)]


def _group_key(arr: pa.Array) -> pa.Array:
    if pa.types.is_floating(arr.type):
        return pc.add(arr, pa.scalar(0.0, arr.type))  # -0.0 + 0.0 is 0.0: one group, as SQL
    if pa.types.is_dictionary(arr.type) and arr.dictionary.null_count:
        # A NULL among the dictionary's values and a NULL index are one NULL group: Arrow
        # groups a dictionary column by index and would make them two.
        return arr.dictionary_decode()
    return arr


_SCALAR_KERNELS = {"sum": pc.sum, "min": pc.min, "max": pc.max, "count": pc.count}


def _widened_int128(table: pa.Table, aggs: list) -> tuple[pa.Table, list]:
    """The inputs of "sum_int128" aggregates as decimal128 sums, for Arrow's grouping."""
    for i, a in enumerate(aggs):
        if a[1] == agg_state.SUM_INT128:
            j = table.schema.get_field_index(a[0])
            table = table.set_column(j, a[0], agg_decimal.from_int64(_combined(table.column(j))))
            aggs = aggs[:i] + [(a[0], "sum")] + aggs[i + 1:]
    return table, aggs


def _scalar_aggregates(table: pa.Table, aggs: list) -> list[pa.Array] | None:
    """A scalar aggregate's one row, each aggregate computed by the Arrow kernel that
    Acero's aggregation without keys would run (same defaults: NULLs skipped, NULL over
    no values), called on the whole batch instead of through an Acero plan that cuts it
    into 32k-row pieces: SUM of 50M float8 values per segment went from about 40 ms to
    the kernel's 15. None (Acero then) for other aggregates and for dictionary or nested
    inputs."""
    out = []
    for a in aggs:
        if a[1] == "count_all":
            out.append(pa.array([table.num_rows], pa.int64()))
            continue
        if a[1] == agg_state.SUM_INT128:
            total = agg_decimal.exact_int64_sum(_combined(table.column(a[0])))
            fits = total is None or agg_decimal.INT64_MIN <= total <= agg_decimal.INT64_MAX
            out.append(pa.array([total], pa.int64()) if fits else
                       pa.array([agg_decimal.unscaled_decimal(total, 0)], pa.decimal128(38, 0)))
            continue
        kernel = _SCALAR_KERNELS.get(a[1])
        col = table.column(a[0]) if kernel is not None else None
        if col is None or pa.types.is_dictionary(col.type) or pa.types.is_nested(col.type):
            return None
        opts = a[2] if len(a) > 2 else None
        if a[1] == "sum" and pa.types.is_decimal128(col.type) and opts is None:
            total = agg_decimal.exact_sum(_combined(col))
            if total is not None:  # Arrow's decimal sum is a third as fast
                out.append(pa.array([agg_decimal.unscaled_decimal(total, col.type.scale)],
                                    col.type))
                continue
        value = kernel(col) if opts is None else kernel(col, options=opts)
        out.append(pa.array([value], value.type))
    return out


def _array(v, n: int) -> pa.Array:
    if isinstance(v, pa.ChunkedArray):
        return v.combine_chunks()
    if isinstance(v, pa.Scalar):
        return pa.repeat(v, n)
    return v


def _decoded(arrays: list[pa.Array]) -> list[pa.Array]:
    return [a.dictionary_decode() if pa.types.is_dictionary(a.type) else a for a in arrays]


def _combined(c) -> pa.Array:
    return c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c


@base.register(plan.Aggregate, dictionaries=True)
def _build(node: plan.Aggregate, build_child) -> HashAggOp:
    return HashAggOp(node, build_child(node.child))

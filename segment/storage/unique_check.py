"""The check of one PRIMARY KEY or UNIQUE constraint on one segment: no key of the rows a
write adds may equal another's, or the key of a live row there (the rows of equal keys
are all on this segment: every key holds the distribution key, planner/unique_keys.py).
Rows with a NULL in the key never conflict, as in PostgreSQL. Vectorized: one Arrow
group-by over the keys of the shard's live rows and the new ones."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from planner import errors, types
from planner.values import from_value_and_scale


def check(name: str, columns: list[str], existing: list[pa.Table], new: list[pa.Table]) -> None:
    """23505 when a key of `new` (tables of the key columns) is in `existing` or twice in
    `new`."""
    new_keys = _keys(new, columns)
    if new_keys.num_rows == 0:
        return
    old_keys = _keys(existing, columns, new_keys.schema)
    both = pa.concat_tables([  # the new rows first: a conflict is reported by its new key
        new_keys.append_column("_new", pa.array([1] * new_keys.num_rows, pa.int8())),
        old_keys.append_column("_new", pa.array([0] * old_keys.num_rows, pa.int8()))])
    present = None
    for c in columns:  # a key with a NULL equals nothing
        valid = pc.is_valid(both.column(c))
        present = valid if present is None else pc.and_(present, valid)
    both = both.filter(present).combine_chunks()
    by_value = pa.table([_comparable(both.column(c)) for c in columns] + [
        both.column("_new"), pa.array(range(both.num_rows), pa.int64())],
        names=list(columns) + ["_new", "_row"])
    groups = by_value.group_by(columns).aggregate(
        [("_new", "sum"), ("_new", "count"), ("_row", "min")])
    bad = groups.filter(pc.and_(pc.greater(groups.column("_new_count"), 1),
                                pc.greater(groups.column("_new_sum"), 0)))
    if bad.num_rows:
        row = both.slice(bad.column("_row_min")[0].as_py(), 1)
        values = ", ".join("NULL" if v is None else _text(v)
                           for v in (row.column(c)[0].as_py() for c in columns))
        raise errors.QueryError(
            f'duplicate key value violates unique constraint "{name}"', "23505",
            detail=f"Key ({', '.join(columns)})=({values}) already exists.")


def _comparable(column) -> pa.Array:
    """A key column as its values compare: an unconstrained numeric (a struct of value and
    display scale) by its value, so 1.5 and 1.50 are one key, as in PostgreSQL."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return arr.flatten()[0] if types.is_dynamic_arrow(arr.type) else arr


def _text(v) -> str:
    if isinstance(v, dict):  # an unconstrained numeric, printed at its own scale
        return format(from_value_and_scale(v), "f")
    return str(v)


def _keys(tables: list[pa.Table], columns: list[str], schema: pa.Schema | None = None
          ) -> pa.Table:
    """The key columns of `tables` as one table (dictionaries decoded, nullable; of
    `schema` when given)."""
    out = []
    for t in tables:
        arrays = [a.dictionary_decode() if pa.types.is_dictionary(a.type) else a
                  for a in (t.column(c).combine_chunks() for c in columns)]
        out.append(pa.table(arrays, names=columns))
    if schema is None:
        schema = pa.schema([pa.field(c, (out[0].schema.field(c).type if out else pa.null()))
                            for c in columns])
    return pa.concat_tables([t.cast(schema) for t in out]) if out else schema.empty_table()

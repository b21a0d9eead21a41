"""Prepared statements and portals of one session, and the row stream behind a portal.

A `Statement` is what Parse made: the engine's PreparedStatement (None for empty text) and
the parameter types clients must encode for. A `Portal` is what Bind made: a statement,
decoded parameters and result formats; Execute starts it once and may resume it. Its
`RowStream` pulls Arrow batches and frames DataRows; its methods block (they call into the
engine) and run on the session's worker thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa

from coordinator.pgwire import backend, codec, values
from coordinator.pgwire.boundary import (CancelToken, PreparedStatement, QueryResult,
                                         ResultColumn)
from planner import errors, types
from planner.types import SqlType

_TRAILING_COUNT = re.compile(r"\d+$")


@dataclass
class Statement:
    prepared: PreparedStatement | None
    param_types: list[SqlType]
    param_oids: list[int]  # for ParameterDescription: the client's own where it gave one

    @classmethod
    def create(cls, prepared: PreparedStatement | None, declared: tuple[int, ...]) -> "Statement":
        inferred = prepared.param_types if prepared is not None else []
        param_types, oids = [], []
        for i in range(max(len(declared), len(inferred))):
            oid = declared[i] if i < len(declared) else 0
            if oid:  # a declared type is authoritative: the client encodes for it
                param_types.append(types.from_oid(oid))
                oids.append(oid)
            else:
                t = inferred[i] if i < len(inferred) else types.UNKNOWN
                param_types.append(t)
                oids.append(t.oid)
        return cls(prepared, param_types, oids)

    @property
    def columns(self) -> list[ResultColumn] | None:
        return self.prepared.columns if self.prepared is not None else None


def row_description(columns: list[ResultColumn], formats: list[int]) -> backend.RowDescription:
    return backend.RowDescription(tuple(
        backend.FieldDescription(c.name, c.type.oid, c.type.typlen, c.type.typmod, f)
        for c, f in zip(columns, formats)))


class RowStream:
    """DataRows of a ROWS result, fetched in pieces of at most one batch."""

    def __init__(self, result: QueryResult, columns: list[ResultColumn], formats: list[int],
                 cancel: CancelToken):
        self._result = result
        self._batches: Iterator[pa.RecordBatch] = iter(result.batches or ())
        self._types = [c.type for c in columns]
        self._formats = formats
        self._cancel = cancel
        self._pending: pa.RecordBatch | None = None

    def fetch(self, limit: int | None) -> tuple[bytes, int, bool]:
        """(DataRow bytes, row count, exhausted) for up to `limit` rows (None: a batch)."""
        while self._pending is None or self._pending.num_rows == 0:
            if self._cancel.cancelled:
                raise errors.QueryCanceled("canceling statement due to user request")
            batch = next(self._batches, None)
            if batch is None:
                return b"", 0, True
            self._pending = batch
        batch = self._pending
        if limit is not None and batch.num_rows > limit:
            batch, self._pending = batch.slice(0, limit), batch.slice(limit)
        else:
            self._pending = None
        return values.encode_data_rows(batch, self._types, self._formats), batch.num_rows, False

    def tag(self, rows_this_execute: int | None) -> str:
        """The engine's tag; after a row-limited Execute its count is this Execute's rows,
        as PostgreSQL reports it."""
        tag = self._result.tag()
        if rows_this_execute is None:
            return tag
        return _TRAILING_COUNT.sub(str(rows_this_execute), tag) if tag else \
            f"SELECT {rows_this_execute}"

    def close(self) -> None:
        """Stop the engine's batch generator early (client closed a suspended portal)."""
        close = getattr(self._batches, "close", None)
        if close is not None:
            close()


@dataclass
class Portal:
    statement: Statement
    params: list[object]
    formats: list[int]             # one result format per column
    result: QueryResult | None = None
    rows: RowStream | None = None
    done: bool = False
    limited: bool = False          # an Execute with max_rows > 0 ran on it

    def columns(self) -> list[ResultColumn] | None:
        if self.result is not None and self.result.columns is not None:
            return self.result.columns
        return self.statement.columns

    def describe(self):
        """RowDescription with this portal's formats, or NoData."""
        columns = self.columns()
        if columns is None:
            return backend.NoData()
        return row_description(columns, self.formats or [codec.TEXT] * len(columns))

    def start_rows(self, result: QueryResult, cancel: CancelToken) -> None:
        self.result = result
        columns = self.columns() or []
        formats = self.formats if len(self.formats) == len(columns) else \
            [codec.TEXT] * len(columns)
        self.rows = RowStream(result, columns, formats, cancel)

    def close(self) -> None:
        if self.rows is not None and not self.done:
            self.rows.close()
        self.done = True
